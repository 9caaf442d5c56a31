"""core/blocks.py: each public block's own pipeline, from its arguments, every problem keyed by the argument
as the caller named it; what it makes is what the stack makes for the same settings."""

from __future__ import annotations

import pytest

from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries

OWNER = "organization/gpt-oss-infra/dev"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"dynamo_release": "9.9.9"}, "dynamo_release: Dynamo 9.9.9 is not supported; one of 1.0.0"),
        ({"dynamo_release": "1.6"}, "dynamo_release: String should match pattern"),
        ({"namespace": "Dynamo_System"}, "namespace: 'Dynamo_System' must be a DNS label"),
        ({"block_storage_class": "GP3"}, "block_storage_class: 'GP3' must be a DNS label"),
        ({"kubernetes_version": "1.99"}, "kubernetes_version: Kubernetes 1.99 is not one this program can validate"),
        # 1.2.1 bundles NATS, whose JetStream volume needs a class an existing cluster names.
        (
            {"dynamo_release": "1.2.1"},
            "block_storage_class: required on an existing cluster while the bundled NATS is "
            "on (Dynamo 1.2.1's default)",
        ),
    ],
)
def test_a_platform_is_refused_by_the_argument_at_fault(catalog, arguments, expected):
    with pytest.raises(ConfigError) as refused:
        blocks.dynamo_platform(arguments, catalog, with_ngc_key=False, owner=OWNER)
    assert str(refused.value).startswith(expected), str(refused.value)


def test_every_bad_argument_is_named_at_once(catalog):
    with pytest.raises(ConfigError) as refused:
        blocks.dynamo_platform({"namespace": "A", "block_storage_class": "B"}, catalog, with_ngc_key=False, owner=OWNER)
    assert [problem.key for problem in refused.value.problems] == ["block_storage_class", "namespace"]


def test_a_platform_is_what_the_stack_makes_for_the_same_settings(catalog):
    """The existing-cluster example stack's platform, from the block's arguments for the same settings."""
    raw = namespace_config(example_entries("existing-cluster"))
    stack = build_stack(raw, catalog, with_hf_token=False, with_ngc_key=True, api_key_clients=["ci"], owner=OWNER)
    block = blocks.dynamo_platform(
        {"dynamo_release": "1.6.1", "block_storage_class": "gp3"},
        catalog,
        with_ngc_key=True,
        owner=OWNER,
    )
    assert block.objects == stack.platform
    assert block.gateway is None
    assert block.guards is not None and block.guards.objects() == stack.teardown.objects()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "storage_class_name: required with storage: existing (the RWX StorageClass to use)"),
        ({"storage": "nfs"}, "storage: Input should be 'efs', 'fsx-lustre' or 'existing' (got 'nfs'; did you mean"),
        ({"storage_class_name": "rwx", "size": "10Gi"}, "size: 10Gi cannot hold openai/gpt-oss-120b's"),
        ({"storage_class_name": "rwx", "namespace": "Team_A"}, "namespace: 'Team_A' must be a DNS label"),
        ({"storage_class_name": "rwx", "model_revision": "main"}, "model_revision: 'main' must be a full Hugging Face"),
        ({"storage": "fsx-lustre", "fsx_throughput_per_tib": 300}, "fsx_throughput_per_tib: Input should be 125"),
    ],
)
def test_a_model_cache_is_refused_by_the_argument_at_fault(catalog, arguments, expected):
    with pytest.raises(ConfigError) as refused:
        blocks.model_cache(arguments, catalog, with_hf_token=False, owner=OWNER)
    assert str(refused.value).startswith(expected), str(refused.value)


def test_a_model_cache_is_what_the_stack_makes_for_the_same_settings(catalog):
    """The existing-cluster example stack's cache, from the block's arguments for the same settings."""
    raw = namespace_config(example_entries("existing-cluster"))
    stack = build_stack(raw, catalog, with_hf_token=True, api_key_clients=["ci"], owner=OWNER)
    cache = raw["modelCache"]
    block = blocks.model_cache(
        {"namespace": "gpt-oss", "storage_class_name": cache["storageClassName"], "size": cache["size"]},
        catalog,
        with_hf_token=True,
        owner=OWNER,
    )
    assert block.objects == stack.model_cache
    assert block.guards is None  # the cluster's own StorageClass: its volumes are not the block's to wait for


def test_an_efs_model_cache_deletes_its_access_point_and_waits_for_it_on_destroy(catalog):
    block = blocks.model_cache({"storage": "efs"}, catalog, with_hf_token=False, owner=OWNER)
    assert block.objects.storage_class["reclaimPolicy"] == "Delete"  # the caller's file system keeps nothing
    assert block.objects.storage_class["metadata"]["annotations"] == {"gpt-oss-infra/owner": OWNER}
    assert block.guards is not None and block.guards.namespace == "gpt-oss-teardown"
    # The full snapshot: a block sees no deployment, and a mocker's workers start on it too.
    assert block.objects.download.job["metadata"]["name"] == "model-download-b5c939de8f75"


H200_POOL = {"hardware": "h200", "nodes": 2}


@pytest.mark.parametrize(
    ("arguments", "region", "expected"),
    [
        ({"hardware": "h300", "nodes": 1}, "us-east-2", "hardware: unknown hardware 'h300'; one of h100, h200"),
        ({"hardware": "h200"}, "us-east-2", "nodes: required key is missing"),
        (H200_POOL | {"instance_type": "p4d.24xlarge"}, "us-east-2", "instance_type: 'p4d.24xlarge' does not carry"),
        (
            H200_POOL | {"capacity_type": "CAPACITY_BLOCK"},
            "us-east-2",
            "capacity_reservation_id: required with capacity_type CAPACITY_BLOCK",
        ),
        (
            {"hardware": "cpu", "nodes": 1},
            "us-east-2",
            "hardware: 'cpu' is a stack's elastic pool (Karpenter's), which GpuNodePool does not make; one of h100,",
        ),
        (H200_POOL | {"environment": "Prod"}, "us-east-2", "environment: 'Prod' must be a DNS label"),
        (H200_POOL, "us-east-9", "region: 'us-east-9' is not one of the "),
        (H200_POOL | {"availability_zone": "us-west-2a"}, "us-east-2", "availability_zone: "),
    ],
)
def test_a_gpu_node_pool_is_refused_by_the_argument_at_fault(catalog, arguments, region, expected):
    with pytest.raises(ConfigError) as refused:
        blocks.gpu_node_pool("gpu", arguments, catalog, region)
    assert str(refused.value).startswith(expected), str(refused.value)


@pytest.mark.parametrize(("asked", "has_efa"), [(None, False), (False, False), (True, True)])
def test_a_gpu_node_pool_has_efa_only_where_asked(catalog, asked, has_efa):
    """A pool sees no deployment: EFA only where its `efa` asks for it (and its instance type has it)."""
    block = blocks.gpu_node_pool("b200", {"hardware": "b200", "nodes": 2, "efa": asked}, catalog, "us-east-2")
    assert (block.efa, block.pool.instance_type, block.environment) == (has_efa, "p6-b200.48xlarge", "dev")


def test_a_pool_problem_of_the_stacks_stages_is_named_as_its_argument():
    problems = [
        Problem("gpt-oss-infra:nodePools.gpu.capacityReservationId", "x"),
        Problem("gpt-oss-infra:nodePools.gpu.nodes", "y"),
        Problem("configs/hardware.yaml: p5en.48xlarge.efaInterfaces", "z"),
    ]
    named = blocks.pool_arguments(problems, "gpu")
    assert [problem.key for problem in named] == [
        "capacity_reservation_id",
        "nodes",
        "configs/hardware.yaml: p5en.48xlarge.efaInterfaces",  # the catalog's, not an argument's
    ]


def test_a_problem_names_the_keys_it_mentions_as_the_blocks_arguments():
    """The stack's stages say which other key a problem depends on by its stack-file key; a block's caller
    reads the argument's name. A stack-file path (with its dots) is left as it is: no argument has it."""
    problems = [
        Problem("gpt-oss-infra:nodePools.gpu.availabilityZone", "required with capacityType CAPACITY_BLOCK"),
        Problem("gpt-oss-infra:nodePools.gpu.nodes", "not with nodePools.gpu.capacityType, nor instanceTypes"),
    ]
    assert [str(problem) for problem in blocks.pool_arguments(problems, "gpu")] == [
        "availability_zone: required with capacity_type CAPACITY_BLOCK",
        "nodes: not with nodePools.gpu.capacityType, nor instanceTypes",
    ]


def test_the_blocks_default_release_is_the_one_the_dev_stack_pins():
    release = example_entries("dev")["gpt-oss-infra:release"]
    defaults = blocks.DEFAULTS
    assert (defaults["dynamoRelease"], defaults["model"], defaults["modelRevision"]) == (
        release["dynamo"],
        release["model"],
        release["modelRevision"],
    )


def test_whole_numbers_from_other_languages_become_ints():
    assert [blocks.whole(value) for value in (4.0, 4, 2.5, None, "4", {"a": [2.0]})] == [
        4,
        4,
        2.5,
        None,
        "4",
        {"a": [2]},
    ]


ON_H200 = {"namespace": "gpt-oss", "node_selector": {"nvidia.com/gpu.product": "NVIDIA-H200"}}
CERTIFICATE = "arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"recipe": "h200-agg-fastest", **ON_H200}, "recipe: unknown recipe 'h200-agg-fastest'"),
        ({"recipe": "h200-agg-low-latency", "gpus": 3, **ON_H200}, "gpus: recipe h200-agg-low-latency allows"),
        ({"recipe": "h200-agg-low-latency", "pool_nodes": -1, **ON_H200}, "pool_nodes: must be at least 0"),
        ({"recipe": "h200-agg-low-latency", "runtime_image": "x:latest", **ON_H200}, "runtime_image: "),
        (
            {"recipe": "trial-mocker-agg", "gpus": 1, "namespace": "gpt-oss"},
            "gpus: recipe trial-mocker-agg needs no GPU",
        ),
        ({"recipe": "h200-agg-low-latency", "namespace": "gpt-oss"}, "node_pool: 'gpt-oss' names no GpuNodePool"),
        (
            {
                "recipe": "h200-agg-low-latency",
                **ON_H200,
                "endpoint": {"exposure": "internal", "requests_per_minute": 0},
            },
            "endpoint.requests_per_minute: must be at least 1",
        ),
        (
            {"recipe": "h200-agg-low-latency", **ON_H200, "endpoint": {"exposure": "public"}},
            "endpoint.exposure: public needs an NLB: this existing cluster has no AWS Load Balancer Controller "
            "(load_balancer_controller: false), so the gateway gets no NLB; set load_balancer_controller: true",
        ),
        (
            {"recipe": "h200-agg-low-latency", **ON_H200, "endpoint": {"exposure": "internal"}},
            "api_keys: required: deployments gpt-oss have a gateway, which admits only API keys; give one per client",
        ),
    ],
)
def test_a_deployment_is_refused_by_the_argument_at_fault(catalog, arguments, expected):
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment("gpt-oss", arguments, catalog, {}, with_hf_token=False, clients=[])
    assert str(refused.value).startswith(expected), str(refused.value)


def test_a_client_limit_for_no_client_is_named_by_the_endpoints_per_minute_argument(catalog):
    endpoint = {"exposure": "internal", "client_requests_per_minute": {"b": 10}}
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment(
            "gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, "endpoint": endpoint}, catalog, {}, False, ["a"]
        )
    assert [problem.key for problem in refused.value.problems] == ["endpoint.client_requests_per_minute.b"]


def test_a_deployment_on_a_gpu_node_pool_selects_its_nodes_and_follows_its_efa(catalog):
    pools = {"b200": blocks.PoolFacts("b200", 2, {"gpt-oss-infra/pool": "b200"}, efa=False)}
    block = blocks.gpt_oss_deployment(
        "gpt-oss",
        {"recipe": "b200-disagg-4p4d", "namespace": "gpt-oss", "node_pool": "b200"},
        catalog,
        pools,
        False,
        [],
    )
    pool = block.serving.deployment.pool
    assert pool is not None and (pool.config.nodes, pool.config.node_selector) == (2, {"gpt-oss-infra/pool": "b200"})
    assert not any(worker.efa for worker in block.serving.deployment.workers)
    # Its KV cache crosses the pool's two nodes over TCP: warned, keyed by the argument that decides it.
    (kv_warning,) = [warning for warning in block.warnings if warning.startswith("name: its KV cache moves")]
    assert "node pool b200 has no EFA (GpuNodePool b200's efa)" in kv_warning  # not nodePools.b200.efa


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"endpoint": {"exposure": "internal", "certificate_arn": CERTIFICATE}, "load_balancer_controller": True},
            "endpoint.hostname: required with certificate_arn:",
        ),
        (
            {"runtime_image": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.5.1"},
            "runtime_image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.5.1 is Dynamo 1.5.1's, but dynamo_release "
            "is 1.6.1",
        ),
        ({"node_selector": {}, "pool_nodes": 1}, "and set node_selector: {gpt-oss-infra/pool: gpt-oss}"),
    ],
)
def test_a_deployments_problem_names_the_other_arguments_it_mentions_as_arguments(catalog, arguments, expected):
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment(
            "gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, **arguments}, catalog, {}, False, ["a"]
        )
    assert expected in str(refused.value)


def test_a_deployments_warning_names_the_arguments_it_mentions_as_arguments(catalog):
    endpoint = {"exposure": "internal"}
    block = blocks.gpt_oss_deployment(
        "gpt-oss",
        {"recipe": "h200-agg-low-latency", **ON_H200, "endpoint": endpoint, "load_balancer_controller": True},
        catalog,
        {},
        False,
        ["a"],
    )
    (open_nlb,) = [warning for warning in block.warnings if warning.startswith("endpoint.allowed_cidrs: NOT SET")]
    assert "Set allowed_cidrs to the VPC's CIDR" in open_nlb and "allowedCidrs" not in open_nlb


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("Bad_Name", {"recipe": "h200-agg-low-latency", **ON_H200}, "name: 'Bad_Name' must be a DNS label of at most"),
        ("a" * 41, {"recipe": "h200-agg-low-latency", **ON_H200}, "name: '" + "a" * 41 + "' is 41 characters"),
        (
            "gpt-oss",
            {"recipe": "h200-agg-low-latency", **ON_H200, "node_pool": "Bad_Pool"},
            "node_pool: 'Bad_Pool' must",
        ),
        # Labels that select no node would leave the workers Pending.
        (
            "gpt-oss",
            {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss", "node_selector": {}},
            "node_selector: required",
        ),
        # GB200 nodes need dynamic resource allocation (Kubernetes 1.33 or later).
        (
            "gpt-oss",
            {"recipe": "gb200-agg-low-latency", **ON_H200, "kubernetes_version": "1.30"},
            "kubernetes_version: gb200 nodes need Kubernetes >= 1.33",
        ),
        (
            "gpt-oss",
            {
                "recipe": "h200-agg-low-latency",
                **ON_H200,
                "endpoint": {"exposure": "internal", "rate_limit": {"requests": 5}},
            },
            "endpoint.rate_limit: not an argument of the endpoint",
        ),
    ],
)
def test_what_the_stack_checks_of_a_deployments_names_and_nodes_a_block_checks_too(catalog, name, arguments, expected):
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment(name, arguments, catalog, {}, with_hf_token=False, clients=["a"])
    assert str(refused.value).startswith(expected), str(refused.value)


def test_a_gpu_node_pools_name_is_a_dns_label(catalog):
    with pytest.raises(ConfigError) as refused:
        blocks.gpu_node_pool("Bad_Name", H200_POOL, catalog, "us-east-2")
    assert str(refused.value).startswith("name: 'Bad_Name' must be a DNS label"), str(refused.value)


@pytest.mark.parametrize(("given", "expected"), [("false", "dynamo-system"), ("yes-please", None)])
def test_a_platforms_load_balancer_controller_is_a_boolean(catalog, given, expected):
    arguments = {"gateway": True, "load_balancer_controller": given}
    if expected is None:
        with pytest.raises(ConfigError, match="load_balancer_controller: Input should be a valid boolean"):
            blocks.dynamo_platform(arguments, catalog, with_ngc_key=False, owner=OWNER)
        return
    block = blocks.dynamo_platform(arguments, catalog, with_ngc_key=False, owner=OWNER)
    assert block.gateway is not None and not block.gateway.target.with_nlb  # "false" is false
    assert block.guards is not None and block.guards.load_balancers_gone is None  # no NLB to wait for


def test_a_deployment_that_no_longer_fits_beside_the_pools_others_is_refused_by_node_pool(catalog):
    pools = {"h200": blocks.PoolFacts("h200", 1, {"gpt-oss-infra/pool": "h200"}, efa=False)}
    arguments = {"recipe": "h200-agg-low-latency", "gpus": 8, "namespace": "gpt-oss", "node_pool": "h200"}
    first = blocks.gpt_oss_deployment("first", arguments, catalog, pools, False, [])
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment("second", arguments, catalog, pools, False, [], {"h200": [first.serving.deployment]})
    assert str(refused.value).startswith(
        "node_pool: GpuNodePool 'h200' already runs GptOssDeployment 'first': pool h200"
    )


def test_every_bad_deployment_argument_is_named_at_once(catalog):
    arguments = {
        "recipe": "h200-agg-low-latency",
        **ON_H200,
        "kubernetes_version": "abc",
        "namespace": "BAD NS",
        "network_policies": "maybe",
        "endpoint": {"exposure": "bogus"},
    }
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment("Bad_Name", arguments, catalog, {}, with_hf_token=False, clients=[])
    keys = [problem.key for problem in refused.value.problems]
    assert keys == ["name", "kubernetes_version", "namespace", "network_policies", "endpoint.exposure"]


def test_a_bad_name_and_a_pool_the_program_did_not_make_are_named_together(catalog):
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment(
            "Bad_Name",
            {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss", "node_pool": "nope"},
            catalog,
            {},
            False,
            [],
        )
    assert [problem.key for problem in refused.value.problems] == ["name", "node_pool"]


def test_a_gpu_node_pools_nodes_are_counted_as_it_made_them(catalog):
    """pool_nodes describes nodes no GpuNodePool of the program made: on one, it would let the deployment (and its
    placement beside the pool's others) count nodes the pool does not have."""
    pools = {"h200": blocks.PoolFacts("h200", 1, {"gpt-oss-infra/pool": "h200"}, efa=False)}
    arguments = {
        "recipe": "h200-agg-low-latency",
        "gpus": 8,
        "namespace": "gpt-oss",
        "node_pool": "h200",
        "pool_nodes": 5,
    }
    with pytest.raises(ConfigError) as refused:
        blocks.gpt_oss_deployment("second", arguments, catalog, pools, False, [])
    assert str(refused.value).startswith(
        "pool_nodes: only with node_selector, for nodes no GpuNodePool of this program"
    )


def test_only_the_deployments_own_pool_keys_are_named_as_its_pool_arguments():
    names = blocks._DeploymentNames("gpt-oss", "gpu", "recipe", on_gpu_node_pool=False)
    assert names.argument_of("gpt-oss-infra:nodePools.gpu.nodes") == "pool_nodes"
    assert names.argument_of("gpt-oss-infra:nodePools.gpu") == "node_pool"
    # Another pool's key whose name merely starts with this one's is not this pool's.
    assert names.argument_of("gpt-oss-infra:nodePools.gpu2.nodes") == "gpt-oss-infra:nodePools.gpu2.nodes"


def test_a_mention_of_the_pools_keys_names_what_the_caller_sets():
    """On a GpuNodePool of the caller's, its arguments; on the deployment's own nodes (node_selector), the
    deployment's arguments that set them, and nothing of a GpuNodePool the caller did not make."""
    message = [Problem("gpt-oss-infra:deployments.gpt-oss.gpus", "see nodePools.gpu.nodes and nodePools.gpu.efa")]
    on_pool = blocks._DeploymentNames("gpt-oss", "gpu", "recipe", on_gpu_node_pool=True).arguments(message)
    assert [str(problem) for problem in on_pool] == ["gpus: see GpuNodePool gpu's nodes and GpuNodePool gpu's efa"]
    own = blocks._DeploymentNames("gpt-oss", "gpu", "recipe", on_gpu_node_pool=False).arguments(message)
    assert [str(problem) for problem in own] == ["gpus: see pool_nodes and nodePools.gpu.efa"]
