"""core/inputs/rules.py: cross-field rules name the exact key and what is allowed."""

from __future__ import annotations

import copy
import dataclasses

from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, existing, on_release, problem_keys, refused


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
    existing(dev_raw, blockStorageClassName="gp3")
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
