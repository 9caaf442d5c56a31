"""core/inputs/config.py and types.py: the dev stack parses; every bad value is refused with its exact key."""

from __future__ import annotations

import pytest

from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.config import StackConfig
from gpt_oss_infra.core.schema import closest_name, field_at
from gpt_oss_infra.core.stack import build_stack
from tests.core.inputs.test_rules import existing_nodes
from tests.support import existing, problem_keys, refused


def test_dev_stack_parses(dev_raw, catalog):
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    assert stack.config.release.model_revision == "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
    assert stack.config.node_pools["gpu"].hardware == "h200"
    assert stack.pools["gpu"].instance_type == "p5en.48xlarge"
    assert [d.name for d in stack.deployments] == ["gpt-oss"]
    assert stack.config.model_cache.size == "400Gi"


def _set(raw, path, value):
    *parents, last = path
    node = raw
    for part in parents:
        node = node[part]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value


_DELETE = object()
BAD_INPUT = [
    # (what is wrong, where to change it, new value, the key the error must name)
    ("unknown recipe", ("deployments", "gpt-oss", "recipe"), "h200-agg-nope", "deployments.gpt-oss.recipe"),
    (
        "node pool that does not exist",
        ("deployments", "gpt-oss", "nodePool"),
        "cpu",
        "deployments.gpt-oss.nodePool",
    ),
    ("gpus the recipe does not allow", ("deployments", "gpt-oss", "gpus"), 2, "deployments.gpt-oss.gpus"),
    ("gpus not a number", ("deployments", "gpt-oss", "gpus"), "eight", "deployments.gpt-oss.gpus"),
    ("revision not 40 hex", ("release", "modelRevision"), "main", "release.modelRevision"),
    ("revision too short", ("release", "modelRevision"), "b5c939de", "release.modelRevision"),
    ("size not a quantity", ("modelCache", "size"), "400 GB", "modelCache.size"),
    ("unknown storage kind", ("modelCache", "storage"), "s3", "modelCache.storage"),
    ("unknown hardware", ("nodePools", "gpu", "hardware"), "a100", "nodePools.gpu.hardware"),
    ("negative node count", ("nodePools", "gpu", "nodes"), -1, "nodePools.gpu.nodes"),
    (
        "instance type of other hardware",
        ("nodePools", "gpu", "instanceType"),
        "p5.48xlarge",
        "nodePools.gpu.instanceType",
    ),
    (
        "CAPACITY_BLOCK without a reservation",
        ("nodePools", "gpu", "capacityType"),
        "CAPACITY_BLOCK",
        "nodePools.gpu.capacityReservationId",
    ),
    ("misspelt key in a pool", ("nodePools", "gpu", "hardwar"), "h200", "nodePools.gpu.hardwar"),
    ("misspelt top-level key", ("deployment",), {}, "deployment"),
    (
        "unpinned image",
        ("release", "runtimeImage"),
        "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:latest",
        "release.runtimeImage",
    ),
    ("chart version not semver", ("release", "dynamo"), "latest", "release.dynamo"),
    ("Dynamo release not in the version table", ("release", "dynamo"), "1.1.1", "release.dynamo"),
    ("Dynamo older than supported", ("release", "dynamo"), "0.9.1", "release.dynamo"),
    ("missing release key", ("release", "model"), _DELETE, "release.model"),
    (
        "unknown engine key in overrides",
        ("deployments", "gpt-oss", "overrides"),
        {"cuda_graph_confg": {}},
        "deployments.gpt-oss.overrides.cuda_graph_confg",
    ),
    (
        "bad engine value in overrides",
        ("deployments", "gpt-oss", "overrides"),
        {"moe_config": {"backend": "TRITONN"}},
        "deployments.gpt-oss.overrides.moe_config.backend",
    ),
    (
        "TP override inconsistent with GPUs",
        ("deployments", "gpt-oss", "overrides"),
        {"tensor_parallel_size": 4},
        "deployments.gpt-oss.overrides.tensor_parallel_size",
    ),
    (
        "deployment name not a DNS label",
        ("deployments", "GPT_OSS"),
        {"recipe": "h200-agg-low-latency", "nodePool": "gpu"},
        "deployments.GPT_OSS",
    ),
    # The API server refuses these in a pod's nodeSelector: the graph's pods would never be made.
    (
        "label key with a space",
        ("nodePools", "gpu", "nodeSelector"),
        {"gpu type": "h200"},
        "nodePools.gpu.nodeSelector.gpu type",
    ),
    (
        "label key with two '/'",
        ("nodePools", "gpu", "nodeSelector"),
        {"a/b/c": "x"},
        "nodePools.gpu.nodeSelector.a/b/c",
    ),
    (
        "label key with an empty prefix",
        ("nodePools", "gpu", "nodeSelector"),
        {"/zone": "a"},
        "nodePools.gpu.nodeSelector./zone",
    ),
    (
        "label value too long",
        ("nodePools", "gpu", "nodeSelector"),
        {"zone": "z" * 64},
        "nodePools.gpu.nodeSelector.zone",
    ),
    (
        "label value ending in '-'",
        ("nodePools", "gpu", "nodeSelector"),
        {"zone": "a-"},
        "nodePools.gpu.nodeSelector.zone",
    ),
]


@pytest.mark.parametrize("case, path, value, key", BAD_INPUT, ids=[case[0] for case in BAD_INPUT])
def test_bad_input_is_refused_with_its_key(dev_raw, catalog, case, path, value, key):
    _set(dev_raw, path, value)
    assert f"gpt-oss-infra:{key}" in problem_keys(dev_raw, catalog)


def test_each_cluster_kind_takes_only_its_own_keys(dev_raw, catalog):
    existing(dev_raw, blockStorageClassName="gp3", endpointPublicAccess=False)
    dev_raw["modelCache"] = {"storage": "existing", "storageClassName": "shared-rwx"}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:cluster.endpointPublicAccess"  # not cluster.existing.endpointPublicAccess
    assert "blockStorageClassName" in problem.message and "kind" in problem.message
    dev_raw["cluster"]["kind"] = "gke"
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:cluster"
    assert "'eks', 'existing'" in problem.message


@pytest.mark.parametrize(("create", "kind"), [(True, "eks"), (False, "existing")])
def test_the_deprecated_create_key_still_works_with_a_warning(dev_raw, catalog, create, kind):
    cluster = existing(dev_raw, blockStorageClassName="gp3")["cluster"] if kind == "existing" else dev_raw["cluster"]
    del cluster["kind"]
    cluster["create"] = create
    if kind == "existing":
        dev_raw["modelCache"] = {"storage": "existing", "storageClassName": "shared-rwx"}
        existing_nodes(dev_raw)
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    assert stack.config.cluster.kind == kind
    assert f"gpt-oss-infra:cluster.create is deprecated: write `kind: {kind}`" in stack.warnings[0]
    cluster["kind"] = kind  # both: which one is meant?
    assert problem_keys(dev_raw, catalog) == ["gpt-oss-infra:cluster.create"]


def test_errors_say_what_is_allowed(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"]["hardwar"] = "h200"
    dev_raw["deployments"]["gpt-oss"]["gpus"] = 2
    with pytest.raises(ConfigError) as caught:
        build_stack(dev_raw, catalog, with_hf_token=False)
    text = str(caught.value)
    assert (
        "gpt-oss-infra:nodePools.gpu.hardwar: unknown key; allowed keys here: "
        "availabilityZone, capacityReservationId, capacityType, diskSizeGiB" in text
    )
    assert "nodeSelector, nodes, pricePerNodeHour, scaling; did you mean 'hardware'?" in text


def test_every_problem_is_reported_at_once(dev_raw, catalog):
    dev_raw["release"]["modelRevision"] = "main"
    dev_raw["modelCache"]["size"] = "lots"
    assert problem_keys(dev_raw, catalog) == [
        "gpt-oss-infra:release.modelRevision",
        "gpt-oss-infra:modelCache.size",
    ]


def test_deployment_names_leave_room_for_the_names_derived_from_them(dev_raw, catalog):
    dev_raw["deployments"] = {"a" * 41: dev_raw["deployments"]["gpt-oss"]}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments." + "a" * 41
    assert "at most 40" in problem.message


def test_a_deployment_name_that_is_no_dns_label_is_told_the_real_limit(dev_raw, catalog):
    """40 characters, not a DNS label's 63: the refusal says the limit that applies."""
    dev_raw["deployments"] = {"Chat": dev_raw["deployments"]["gpt-oss"]}
    (problem,) = refused(dev_raw, catalog).problems
    assert str(problem) == (
        "gpt-oss-infra:deployments.Chat: 'Chat' must be a DNS label of at most 40 characters: lowercase letters, "
        "digits and '-' (the names derived from it, e.g. <name>-trtllmprefillworker, stay within Kubernetes' 63)"
    )
    assert "63 characters" not in problem.message


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        (("deployments", "gpt-oss", "gpus"), 0, "must be at least 1 (got 0): the GPUs each worker gets"),
        (("deployments", "gpt-oss", "replicas"), 0, "must be at least 1 (got 0): the worker replicas"),
        (
            ("deployments", "gpt-oss", "readyTimeoutMinutes"),
            -5,
            "must be at least 1 (got -5): how long `pulumi up` waits for the graph to be Ready, in minutes",
        ),
        (
            ("nodePools", "gpu", "nodes"),
            -1,
            "must be at least 0 (got -1): the GPU nodes in the pool, a fixed number: required unless scaling is given",
        ),
        (
            ("nodePools", "gpu", "diskSizeGiB"),
            50,
            "must be at least 100 (got 50): each GPU node's root volume, in GiB: runtime images are large",
        ),
        (
            ("nodePools", "gpu", "pricePerNodeHour"),
            0,
            "must be more than 0 (got 0): what one node costs per hour, in USD",
        ),
        (
            ("cluster", "systemNodes"),
            {"nodes": 0},
            "must be at least 1 (got 0): the CPU nodes for the frontend, the operator, NATS and jobs",
        ),
        (
            ("cluster", "network"),
            {"availabilityZones": 7},
            "must be at most 6 (got 7): the availability zones the VPC spans (EKS needs subnets in two)",
        ),
        (("cluster", "logRetentionDays"), 0, "must be at least 1 (got 0): how many days control-plane logs are kept"),
        (
            ("deployments", "gpt-oss", "benchmark"),
            {"inputTokens": 0},
            "must be at least 1 (got 0): the benchmark's input tokens per request",
        ),
        (
            ("deployments", "gpt-oss", "alerts"),
            {"ttftP95Seconds": 0},
            "must be more than 0 (got 0): the TTFT p95 alert, in seconds",
        ),
    ],
)
def test_a_number_out_of_bounds_says_what_it_is_and_the_limit(dev_raw, catalog, path, value, says):
    """Not pydantic's bare "Input should be greater than 0": what the key is for, the limit, the value."""
    _set(dev_raw, path, value)
    messages = [problem.message for problem in refused(dev_raw, catalog).problems]
    assert says in messages, messages
    assert not any(message.startswith("Input should be") for message in messages)


def test_a_misspelt_choice_gets_the_closest_one(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"]["capacityType"] = "SPOT_ONLY"
    dev_raw["cluster"]["kind"] = "ekss"
    assert [str(problem) for problem in refused(dev_raw, catalog).problems] == [
        "gpt-oss-infra:cluster: Input tag 'ekss' found using 'kind' does not match any of the expected tags: "
        "'eks', 'existing'; did you mean 'eks'?",
        "gpt-oss-infra:nodePools.gpu.capacityType: Input should be 'ON_DEMAND', 'SPOT' or 'CAPACITY_BLOCK' "
        "(got 'SPOT_ONLY'; did you mean 'SPOT'?)",
    ]


@pytest.mark.parametrize(
    ("key", "allowed", "closest"),
    [
        ("node_selector", ["nodeSelector", "nodes"], "nodeSelector"),  # snake_case for the camelCase key
        ("diskSizeGib", ["diskSizeGiB", "efa"], "diskSizeGiB"),
        ("deployment", ["deployments", "environment"], "deployments"),
        ("chart", ["dynamo", "model", "modelRevision", "runtimeImage"], None),
    ],
)
def test_the_closest_name_is_the_one_misspelt(key, allowed, closest):
    assert closest_name(key, allowed) == closest


def test_an_error_path_leads_to_its_field_through_mappings_and_the_cluster_kind():
    assert field_at(StackConfig, ("deployments", "chat", "gpus")).description == "the GPUs each worker gets"
    assert field_at(StackConfig, ("cluster", "eks", "systemNodes", "nodes")).description == (
        "the CPU nodes for the frontend, the operator, NATS and jobs"
    )
    assert field_at(StackConfig, ("cluster", "gke", "name")) is None
    assert field_at(StackConfig, ("deployments", "chat")) is None  # a mapping's value, not a field


@pytest.mark.parametrize(
    "node_selector",
    [{"nvidia.com/gpu.product": "NVIDIA-H200"}, {"node-role.kubernetes.io/gpu": ""}, {"Tier_1.x": "A.b-c_D"}],
)
def test_label_keys_and_values_kubernetes_takes_are_taken(dev_raw, catalog, node_selector):
    """A prefix, an empty value, upper case and '_' or '.' between are all Kubernetes' label syntax."""
    dev_raw["nodePools"]["gpu"]["nodeSelector"] = node_selector
    assert not [key for key in problem_keys(dev_raw, catalog) if "nodeSelector" in key]
