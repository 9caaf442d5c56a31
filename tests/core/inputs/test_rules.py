"""core/inputs/rules.py: cross-field rules name the exact key and what is allowed."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.inputs.rules import aws_problems, parse_stack_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, existing, on_release, problem_keys, refused

H200_NODES = {"nvidia.com/gpu.product": "NVIDIA-H200"}  # what NVIDIA's GPU feature discovery labels them


def existing_nodes(raw: dict, node_selector: dict | None = None) -> dict:
    """The stack's pools as GPU nodes of an existing cluster: no keys of a node group the program would
    buy (capacityType, capacityReservationId, availabilityZone), and the labels that select the nodes."""
    for pool in raw.get("nodePools", {}).values():
        for key in ("capacityType", "capacityReservationId", "availabilityZone"):
            pool.pop(key, None)
        pool["nodeSelector"] = node_selector or H200_NODES
    return raw


def existing_example() -> dict:
    return copy.deepcopy(namespace_config(example_entries("existing-cluster")))


def test_recipe_on_the_wrong_hardware_names_the_recipe(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"]["hardware"] = "h100"
    keys = problem_keys(dev_raw, catalog)
    assert keys == ["gpt-oss-infra:deployments.gpt-oss.recipe"]


def test_reservation_az_must_have_an_existing_subnet(dev_raw, catalog):
    dev_raw["cluster"]["network"] = {
        "existingPrivateSubnets": {
            "us-east-2a": "subnet-0aaaaaaaaaaaaaaa1",
            "us-east-2b": "subnet-0bbbbbbbbbbbbbbb2",
        }
    }
    dev_raw["nodePools"]["gpu"] |= {
        "instanceType": "p5e.48xlarge",
        "capacityType": "CAPACITY_BLOCK",
        "capacityReservationId": "cr-0123456789abcdef0",
        "availabilityZone": "us-east-2c",
    }
    assert problem_keys(dev_raw, catalog) == ["gpt-oss-infra:nodePools.gpu.availabilityZone"]


def test_existing_cluster_needs_existing_storage(dev_raw, catalog):
    existing_nodes(existing(dev_raw, blockStorageClassName="gp3"))
    assert problem_keys(dev_raw, catalog) == ["gpt-oss-infra:modelCache.storage"]


def test_gb200_needs_kubernetes_1_33(dev_raw, catalog):
    dev_raw["cluster"]["kubernetesVersion"] = "1.32"
    dev_raw["nodePools"]["gpu"] = {
        "hardware": "gb200",
        "nodes": 9,
        "capacityType": "CAPACITY_BLOCK",
        "capacityReservationId": "cr-0123456789abcdef0",
        "availabilityZone": "us-east-2b",
    }
    assert "gpt-oss-infra:cluster.kubernetesVersion" in problem_keys(dev_raw, catalog)


def test_existing_storage_needs_a_storage_class(dev_raw, catalog):
    dev_raw["modelCache"] = {"storage": "existing", "size": "1Ti"}
    assert problem_keys(dev_raw, catalog) == ["gpt-oss-infra:modelCache.storageClassName"]
    dev_raw["modelCache"]["storageClassName"] = "shared-rwx"
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    assert stack.model_cache.pvc["spec"]["storageClassName"] == "shared-rwx"
    assert stack.model_cache.storage_class is None


def test_an_unpinned_kubernetes_version_is_refused(dev_raw, catalog):

    dev_raw["cluster"]["kubernetesVersion"] = "1.32"
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:cluster.kubernetesVersion"
    assert "pinned for 1.33, 1.34, 1.35, 1.36 (configs/eks-addons.yaml)" in problem.message


def test_a_private_only_api_in_existing_subnets_needs_its_networks_named(catalog):
    from gpt_oss_infra.core.inputs.config import namespace_config
    from gpt_oss_infra.core.stack import build_stack

    raw = namespace_config(copy.deepcopy(example_entries("h200")))
    raw["cluster"] |= {"endpointPublicAccess": False, "publicAccessCidrs": []}
    (problem,) = refused(raw, catalog).problems
    assert problem.key == "gpt-oss-infra:cluster.privateAccessCidrs"
    raw["cluster"]["privateAccessCidrs"] = ["10.20.0.0/24"]
    assert build_stack(raw, catalog, with_hf_token=False).config.cluster.resolved_private_access_cidrs == [
        "10.20.0.0/24"
    ]


def test_a_stack_runs_one_backend(dev_raw, catalog):
    """Every worker runs release.runtimeImage, which carries one engine: a deployment whose recipe
    names another backend is refused (here a copy of a recipe under a second backend's name)."""
    other = catalog.recipes["h200-agg-max-throughput"].model_copy(update={"backend": "vllm"})
    two_backends = dataclasses.replace(
        catalog,
        recipes=catalog.recipes | {"h200-vllm": other},
        backends=catalog.backends | {"vllm": catalog.backends["trtllm"]},
    )
    dev_raw["deployments"]["other"] = {"recipe": "h200-vllm", "nodePool": "gpu"}
    (problem,) = refused(dev_raw, two_backends).problems
    assert problem.key == "gpt-oss-infra:deployments.other.recipe"
    assert "runs on the vllm backend, but deployment gpt-oss's runs on trtllm" in problem.message


def test_bundled_grove_and_kai_together_are_refused_where_the_chart_needs_an_unverified_value(dev_raw, catalog):
    """From 1.5 the chart refuses the two bundled together without a KAI value we could not verify."""
    dev_raw["platform"] = {"grove": True, "kaiScheduler": True}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:platform.kaiScheduler"
    assert problem.message.startswith("the dynamo-platform 1.6.1 chart refuses bundled Grove and KAI scheduler")
    build_stack(on_release(dev_raw, catalog, "1.2.1"), catalog, with_hf_token=False)  # 1.2.1's chart takes both


# --- existing clusters: what a stack file written from README alone got wrong and planned anyway (issue 32)


def test_an_existing_clusters_pool_names_the_labels_of_its_nodes(catalog):
    """Nodes of a cluster the program did not make carry no gpt-oss-infra/pool label: the default
    selector would match nothing and leave the workers Pending."""
    raw = existing_example()
    for no_selector in (None, {}):
        if no_selector is None:
            del raw["nodePools"]["h200"]["nodeSelector"]
        else:
            raw["nodePools"]["h200"]["nodeSelector"] = no_selector
        (problem,) = refused(raw, catalog).problems
        assert problem.key == "gpt-oss-infra:nodePools.h200.nodeSelector"
        assert problem.message.startswith(
            "required on an existing cluster: its nodes carry no gpt-oss-infra/pool label unless you label them"
        )
        assert "nvidia.com/gpu.product: NVIDIA-H200, which NVIDIA's GPU feature discovery sets" in problem.message
        assert (
            "(kubectl label nodes <node> gpt-oss-infra/pool=h200) and set nodeSelector: {gpt-oss-infra/pool: h200}"
            in problem.message
        )
    raw["nodePools"]["h200"]["nodeSelector"] = {"gpt-oss-infra/pool": "h200"}  # labelled by the user: said so
    build_stack(raw, catalog, with_hf_token=False)


def test_a_created_clusters_pool_keeps_the_label_its_node_group_carries(dev_raw, catalog):
    assert "nodeSelector" not in dev_raw["nodePools"]["gpu"]
    build_stack(dev_raw, catalog, with_hf_token=False)


def test_existing_gb200_nodes_need_no_capacity_block(catalog):
    """GB200 is sold as Capacity Blocks only, to a cluster the program creates: nodes that exist need
    no invented reservation id or zone."""
    raw = existing_example()
    raw["cluster"]["kubernetesVersion"] = "1.33"
    raw["nodePools"] = {"gb200": {"hardware": "gb200", "nodes": 1, "nodeSelector": {"nvidia.com/gpu.product": "GB200"}}}
    raw["deployments"]["gpt-oss"] |= {"recipe": "gb200-agg-low-latency", "nodePool": "gb200"}
    raw["deployments"]["gpt-oss"].pop("gpus")
    assert build_stack(raw, catalog, with_hf_token=False).pools["gb200"].instance_type == "p6e-gb200.36xlarge"
    raw["nodePools"]["gb200"] |= {
        "capacityType": "CAPACITY_BLOCK",
        "capacityReservationId": "cr-0123456789abcdef0",
        "availabilityZone": "us-east-2b",
    }
    error = refused(raw, catalog)
    assert [problem.key for problem in error.problems] == [
        "gpt-oss-infra:nodePools.gb200.capacityType",
        "gpt-oss-infra:nodePools.gb200.capacityReservationId",
        "gpt-oss-infra:nodePools.gb200.availabilityZone",
    ]
    assert {problem.message for problem in error.problems} == {
        "only for a cluster the program creates (kind: eks): this pool describes GPU nodes of an existing "
        "cluster, which are there already, however they were bought; leave it out"
    }


def test_a_created_gb200_pool_still_needs_its_capacity_block(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"] = {"hardware": "gb200", "nodes": 1}
    dev_raw["deployments"]["gpt-oss"] = {"recipe": "gb200-agg-low-latency", "nodePool": "gpu"}
    assert problem_keys(dev_raw, catalog) == ["gpt-oss-infra:nodePools.gpu.capacityType"]


@pytest.mark.parametrize("version", ["1.20", "1.24", "1.38", "1.99"])
def test_an_existing_clusters_kubernetes_version_is_one_objects_can_be_validated_for(catalog, version):
    raw = existing_example()
    raw["cluster"]["kubernetesVersion"] = version
    (problem,) = refused(raw, catalog).problems
    assert str(problem) == (
        f"gpt-oss-infra:cluster.kubernetesVersion: Kubernetes {version} is not one this program can validate "
        "objects for: 1.25 to 1.37 (the schemas of kubernetes-validate 1.37.0, requirements.txt); set the "
        "cluster's own minor version (kubectl version: Server Version)"
    )


@pytest.mark.parametrize("version", ["1.25", "1.37"])
def test_the_ends_of_the_validated_range_plan(catalog, version):
    raw = existing_example()
    raw["cluster"]["kubernetesVersion"] = version
    assert build_stack(raw, catalog, with_hf_token=False).config.cluster.kubernetes_version == version


@pytest.mark.parametrize("example", ["existing-cluster", "trial-local"])
def test_a_region_is_checked_on_every_cluster_kind(catalog, example):
    raw = copy.deepcopy(namespace_config(example_entries(example)))
    config, _ = parse_stack_config(raw, catalog)
    (problem,) = aws_problems(config, "us-west-9")
    assert str(problem) == (
        "aws:region: 'us-west-9' is not one of the 46 regions botocore's endpoint data has EC2 in "
        "(closest: us-west-2, us-west-1, us-east-2)"
    )
    assert aws_problems(config, "us-west-2") == []
    assert aws_problems(config, None) == []  # an existing cluster needs none


def internal(raw: dict, **endpoint) -> dict:
    raw["deployments"]["gpt-oss"]["endpoint"] = {"exposure": "internal"} | endpoint
    return raw


def nlb_warnings(raw: dict, catalog) -> list[str]:
    stack = build_stack(raw, catalog, with_hf_token=False, api_key_clients=["ci"])
    return [warning for warning in stack.warnings if "allowedCidrs" in warning]


def test_an_internal_nlb_without_allowed_cidrs_in_a_vpc_we_did_not_make_is_warned_about_loudly(catalog):
    """The AWS Load Balancer Controller's default source range admits 0.0.0.0/0, internal or not."""
    raw = internal(existing_example())
    raw["cluster"]["loadBalancerController"] = True
    (warning,) = nlb_warnings(raw, catalog)
    assert warning == (
        "gpt-oss-infra:deployments.gpt-oss.endpoint.allowedCidrs: NOT SET, so the internal NLB admits 0.0.0.0/0 "
        "(the AWS Load Balancer Controller's default source range, internal or not): ANYTHING ROUTED TO THIS "
        "EXISTING CLUSTER'S VPC reaches it (peered VPCs, Transit Gateway, VPN, Direct Connect), with only the API "
        "keys in the way; the program does not know the VPC's CIDR to narrow it. Set allowedCidrs to the VPC's "
        "CIDR (aws ec2 describe-vpcs) or to its clients' networks"
    )
    internal(raw, allowedCidrs=["10.20.0.0/16"])
    assert nlb_warnings(raw, catalog) == []
    raw["cluster"]["loadBalancerController"] = False  # no NLB at all: its in-cluster Service
    internal(raw)
    assert nlb_warnings(raw, catalog) == []


def test_an_internal_nlb_of_a_created_cluster_is_warned_about_only_in_existing_subnets(dev_raw, catalog):
    internal(dev_raw)
    assert nlb_warnings(dev_raw, catalog) == []  # the VPC we create: its CIDR is the NLB's source range
    dev_raw["cluster"]["network"] = {
        "existingPrivateSubnets": {"us-east-2a": "subnet-0aaaaaaaaaaaaaaa1", "us-east-2b": "subnet-0bbbbbbbbbbbbbbb2"}
    }
    (warning,) = nlb_warnings(dev_raw, catalog)
    assert "ANYTHING ROUTED TO THE EXISTING SUBNETS' VPC reaches it" in warning


# --- the model's limits


def test_a_sequence_longer_than_the_models_context_is_refused_with_the_limit(dev_raw, catalog):
    """TensorRT-LLM would cut max_seq_len to the model's 131,072 at start-up; the plan refuses it instead."""
    dev_raw["deployments"]["gpt-oss"]["overrides"] = {"max_seq_len": 1048576, "max_input_len": 200000}
    error = refused(dev_raw, catalog)
    assert [str(problem) for problem in error.problems] == [
        "gpt-oss-infra:deployments.gpt-oss.overrides.max_seq_len: 1048576 is more than openai/gpt-oss-120b's "
        "context of 131072 tokens (maxPositionEmbeddings, configs/model.yaml): at most 131072; TensorRT-LLM would "
        "lower it to the model's at start-up, and the plan would size and describe the workers for sequences they "
        "never serve",
        "gpt-oss-infra:deployments.gpt-oss.overrides.max_input_len: 200000 is more than openai/gpt-oss-120b's "
        "context of 131072 tokens (maxPositionEmbeddings, configs/model.yaml): at most 131072; no prompt can be "
        "longer than the model's context",
    ]
    dev_raw["deployments"]["gpt-oss"]["overrides"] = {"max_seq_len": 131072, "max_input_len": 131072}
    build_stack(dev_raw, catalog, with_hf_token=False)


def test_a_role_of_a_disaggregated_recipe_is_checked_by_its_own_key(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"] |= {"hardware": "b200"}
    dev_raw["deployments"]["gpt-oss"] = {
        "recipe": "b200-disagg-1p4d",
        "nodePool": "gpu",
        "overrides": {"decode": {"max_seq_len": 262144}},
    }
    assert problem_keys(dev_raw, catalog) == ["gpt-oss-infra:deployments.gpt-oss.overrides.decode.max_seq_len"]


def test_a_recipe_whose_own_sequence_limit_exceeds_the_model_names_the_recipe(dev_raw, catalog):
    recipe = catalog.recipes["h200-agg-low-latency"]
    (role,) = recipe.workers
    worker = recipe.workers[role].model_copy(update={"engine": recipe.workers[role].engine | {"max_seq_len": 200000}})
    long = recipe.model_copy(update={"workers": {role: worker}})
    with_long = dataclasses.replace(catalog, recipes=catalog.recipes | {"h200-long": long})
    dev_raw["deployments"]["gpt-oss"]["recipe"] = "h200-long"
    (problem,) = refused(dev_raw, with_long).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.recipe"
    assert problem.message.startswith(
        f"recipe h200-long sets max_seq_len 200000 for its {role} workers, more than openai/gpt-oss-120b's "
        "context of 131072 tokens (maxPositionEmbeddings, configs/model.yaml): override it with at most 131072"
    )
    dev_raw["deployments"]["gpt-oss"]["overrides"] = {"max_seq_len": 65536}  # the override wins
    build_stack(dev_raw, with_long, with_hf_token=False)


# --- did-you-mean


@pytest.mark.parametrize(
    ("where", "value", "says"),
    [
        (
            ("deployments", "gpt-oss", "recipe"),
            "h200-agg-low-latncy",
            "unknown recipe 'h200-agg-low-latncy'; one of b200-agg-low-latency, ",
        ),
        (("deployments", "gpt-oss", "nodePool"), "gpus", "unknown node pool 'gpus'; one of gpu"),
        (("nodePools", "gpu", "hardware"), "H200", "unknown hardware 'H200'; one of h100, h200, b200, gb200"),
    ],
)
def test_an_unknown_name_gets_the_closest_known_one(dev_raw, catalog, where, value, says):
    section, name, key = where
    dev_raw[section][name][key] = value
    (problem,) = [p for p in refused(dev_raw, catalog).problems if p.key.endswith(f"{name}.{key}")]
    assert problem.message.startswith(says)
    closest = {"h200-agg-low-latncy": "h200-agg-low-latency", "gpus": "gpu", "H200": "h200"}[value]
    assert problem.message.endswith(f"; did you mean {closest!r}?")


def test_an_unknown_name_with_nothing_close_gets_the_list_alone(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["recipe"] = "fastest"
    (problem,) = refused(dev_raw, catalog).problems
    assert "did you mean" not in problem.message and problem.message.endswith("trial-mocker-disagg")


def test_an_elastic_spot_pool_is_allowed_where_every_recipe_on_it_tolerates_interruption(dev_raw, catalog):
    pool = dev_raw["nodePools"]["gpu"]
    pool.pop("nodes")
    pool.update(scaling={"maxNodes": 2}, capacityType="SPOT")
    assert problem_keys(copy.deepcopy(dev_raw), catalog) == ["gpt-oss-infra:nodePools.gpu.capacityType"]
    recipe = dev_raw["deployments"]["gpt-oss"]["recipe"]
    tolerant = dataclasses.replace(
        catalog,
        recipes=catalog.recipes
        | {recipe: catalog.recipes[recipe].model_copy(update={"tolerates_interruption": "a test's say-so"})},
    )
    config, _ = parse_stack_config(dev_raw, tolerant)
    assert config.node_pools["gpu"].capacity_type == "SPOT"
