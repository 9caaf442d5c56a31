"""components/targets/eks.py: the EKS target's plan from EC2, and AwsCluster wiring network, EKS, nodes and storage."""

from __future__ import annotations

import pulumi
import pytest

from gpt_oss_infra.components.targets import eks as eks_target
from gpt_oss_infra.components.targets.eks import AwsCluster, AwsClusterArgs
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.pulumi_engine import CAPACITY_BLOCK_TOKEN, INSTANCE_TYPE_TOKEN, ZONES_TOKEN
from tests.components.conftest import ZONES, capacity_block_answers, is_secret

REGION = "us-east-2"
AWS_CLUSTER = "gpt-oss-infra:aws:AwsCluster"


def build_cluster(engine, stack, plan):
    made = {}

    def program():
        made["cluster"] = cluster = AwsCluster(
            "gptoss", AwsClusterArgs(stack.config, plan, REGION, stack.block_storage_class)
        )
        exports, file_system = cluster.target.exports, cluster.target.file_system
        return {
            "exports": pulumi.Output.from_input(exports),
            "kubeconfig_secret": is_secret(exports["kubeconfig"]),
            "file_system": pulumi.Output.all(file_system.id, file_system.dns_name, file_system.mount_name)
            if file_system
            else None,
        }

    values = engine.run(program)
    return made["cluster"].target, values


def resources(engine, *names: str) -> list[pulumi.Resource]:
    return [engine.built[name].resource for name in names]


def test_the_plan_reads_ec2_and_pins_the_add_ons_of_the_clusters_version(engine, example_stack, catalog):
    stack = example_stack("gb200")
    engine.mocks.account.capacity_blocks.update(capacity_block_answers(stack))
    plan = engine.call(lambda: eks_target.plan(stack, catalog))
    [pool] = stack.pools.values()
    assert engine.invoked(INSTANCE_TYPE_TOKEN) == [{"instanceType": pool.instance_type}]
    assert engine.invoked(CAPACITY_BLOCK_TOKEN) == [{"id": pool.config.capacity_reservation_id}]
    assert [group.pool for group in plan.eks.groups] == ["system", pool.name]
    pinned = catalog.addon_versions[stack.config.cluster.kubernetes_version]
    assert {addon.name: addon.version for addon in plan.eks.addons} == {
        addon.name: pinned[addon.name].version for addon in plan.eks.addons
    }
    assert pool.name in plan.waiting_pools()  # the block has not started: EC2's window decides


def test_the_plan_warns_when_ec2_reports_other_network_cards_than_the_catalog(engine, example_stack, catalog):
    stack = example_stack("dev")
    [instance_type] = {pool.instance_type for pool in stack.pools.values()}
    engine.mocks.account.instance_types[instance_type]["efaMaximumInterfaces"] = 1
    plan = engine.call(lambda: eks_target.plan(stack, catalog))
    assert [warning for warning in plan.warnings if f"{instance_type}.ec2 differs from what EC2 reports" in warning]


def test_a_gb200_pool_is_warned_to_be_undeployable_outside_the_local_zone_its_blocks_launch_in(eks_plan):
    """P6e-GB200 UltraServer Capacity Blocks launch only in the Dallas Local Zone of us-east-1 (EC2's
    "Launch instances using Capacity Blocks"), where a pool here cannot be placed."""
    [warning] = [warning for warning in eks_plan("gb200").warnings if "Local Zone" in warning]
    assert warning.startswith("gpt-oss-infra:nodePools.gb200: p6e-gb200.36xlarge's Capacity Blocks launch only in")
    assert "capacity-blocks-launch.html" in warning
    assert not [warning for warning in eks_plan("b200").warnings if "Local Zone" in warning]


def test_the_plan_needs_the_aws_region_before_anything_is_registered(engine, example_stack, catalog):
    engine.call(lambda: pulumi.runtime.set_all_config({}))
    with pytest.raises(
        ConfigError, match=r"^aws:region: required for a cluster of kind eks: pulumi config set aws:region"
    ):
        engine.call(lambda: eks_target.plan(example_stack("dev"), catalog))
    assert engine.mocks.resources == []


def test_build_makes_the_gptoss_cluster_in_the_configured_region(engine, example_stack, eks_plan):
    engine.configure({"aws:region": "eu-west-1"})
    made = {}

    def program():
        made["target"] = target = eks_target.build(example_stack("dev"), eks_plan("dev"), pulumi.ResourceOptions())
        return {"hint": target.exports["kubectlHint"]}

    values = engine.run(program)
    assert engine.built["gptoss"].type == AWS_CLUSTER
    assert made["target"].provider is engine.built["gptoss-eks-kubernetes"].resource
    assert "--region eu-west-1" in values["hint"]


def test_a_created_network_in_the_available_zones(engine, example_stack, eks_plan):
    stack = example_stack("dev")
    _, values = build_cluster(engine, stack, eks_plan("dev"))
    assert engine.children("gptoss") == [
        "gptoss-network",
        "gptoss-eks",
        "gptoss-addons",
        "gptoss-nodes",
        "gptoss-pool-gpu",
        "gptoss-node-addons",
        "gptoss-block-storage",
        "gptoss-model-storage",
    ]
    assert {engine.parent_type(name) for name in engine.children("gptoss")} == {AWS_CLUSTER}
    assert engine.urns["gptoss"].endswith(f"::pulumi:pulumi:Stack${AWS_CLUSTER}::gptoss")
    assert engine.invoked(ZONES_TOKEN) == [{"state": "available"}]
    zone_count = stack.config.cluster.network.availability_zones
    assert [engine.inputs(f"gptoss-network-private-{i}")["availabilityZone"] for i in range(zone_count)] == (
        ZONES[:zone_count]
    )
    private_subnets = [f"gptoss-network-private-{i}-id" for i in range(zone_count)]
    assert engine.inputs("gptoss-eks-cluster")["vpcConfig"]["subnetIds"] == private_subnets
    assert engine.inputs("gptoss-nodes-gpu")["subnetIds"] == private_subnets
    assert values["kubeconfig_secret"] is True
    exports = values["exports"]
    assert exports["clusterName"] == stack.config.cluster.name
    assert exports["network"] == {"vpcId": "gptoss-eks-cluster-vpc-id", "privateSubnetIds": private_subnets}
    assert exports["kubectlHint"] == (
        f"aws eks update-kubeconfig --name {stack.config.cluster.name} --region {REGION} "
        "&& kubectl get nodes -L gpt-oss-infra/pool -L gpt-oss-infra/hardware"
    )


def test_nodes_and_add_ons_come_up_in_the_order_eks_needs(engine, example_stack, eks_plan):
    plan, stack = eks_plan("dev"), example_stack("dev")
    build_cluster(engine, stack, plan)
    addons = [f"gptoss-addons-{spec.name}" for spec in plan.eks.addons if not spec.needs_nodes]
    node_addons = [f"gptoss-node-addons-{spec.name}" for spec in plan.eks.addons if spec.needs_nodes]
    assert engine.names_of("aws:eks/addon:Addon") == addons + node_addons
    assert "gptoss-node-addons-coredns" in node_addons  # CoreDNS is ACTIVE only once nodes run it
    assert engine.waits_for("gptoss-nodes") == ["gptoss-addons"]
    # The system nodes, never the GPU ones, which may wait for a Capacity Block.
    assert engine.waits_for("gptoss-node-addons") == ["gptoss-nodes-system"]
    assert engine.waits_for("gptoss-block-storage") == ["gptoss-node-addons"]
    for group in plan.eks.groups:  # policies and cost reports read the environment off every group
        assert (
            engine.inputs(f"gptoss-nodes-{group.pool}")["tags"]["gpt-oss-infra/environment"] == stack.config.environment
        )


def test_the_target_hands_over_the_provider_and_what_workloads_wait_for(engine, example_stack, eks_plan):
    stack = example_stack("dev")
    target, values = build_cluster(engine, stack, eks_plan("dev"))
    assert target.provider is engine.built["gptoss-eks-kubernetes"].resource
    assert target.system_ready == resources(engine, "gptoss-node-addons", "gptoss-block-storage")
    assert target.gpu_ready == {"gpu": engine.built["gptoss-nodes-gpu"].resource}
    # The block StorageClass is made in the new cluster, not wherever the ambient kubeconfig points.
    assert engine.provider_of("gptoss-block-storage") == engine.urns["gptoss-eks-kubernetes"]
    storage_class = engine.inputs("gptoss-block-storage")
    assert storage_class["metadata"] == stack.block_storage_class["metadata"]
    assert storage_class["provisioner"] == "ebs.csi.aws.com"
    assert target.storage_ready == resources(engine, *engine.names_of("aws:efs/mountTarget:MountTarget"))
    assert target.storage_ready
    assert values["file_system"] == ["gptoss-model-storage-efs-id", None, None]


def test_the_model_storage_keeps_its_urns_from_the_stacks_root(engine, example_stack, eks_plan):
    build_cluster(engine, example_stack("dev"), eks_plan("dev"))
    [alias] = engine.built["gptoss-model-storage"].opts.aliases
    assert (alias.name, alias.parent) == ("model-storage", pulumi.ROOT_STACK_RESOURCE)
    model_storage = engine.inputs("gptoss-model-storage-clients")
    assert (model_storage["vpcId"], model_storage["ingress"][0]["securityGroups"]) == (
        "gptoss-eks-cluster-vpc-id",
        ["gptoss-eks-cluster-sg-id"],
    )


def test_a_reserved_zone_comes_first_for_its_nodes_and_the_lustre_file_system(engine, example_stack, eks_plan):
    stack = example_stack("gb200")
    [pool] = stack.pools.values()
    target, values = build_cluster(engine, stack, eks_plan("gb200"))
    assert engine.inputs("gptoss-network-private-0")["availabilityZone"] == pool.config.availability_zone
    assert engine.inputs(f"gptoss-nodes-{pool.name}")["subnetIds"] == ["gptoss-network-private-0-id"]
    assert engine.inputs("gptoss-model-storage-fsx")["subnetIds"] == "gptoss-network-private-0-id"
    assert target.storage_ready[0] is engine.built["gptoss-model-storage-fsx"].resource
    fsx = "gptoss-model-storage-fsx"
    assert values["file_system"] == [f"{fsx}-id", f"{fsx}.fsx.example.com", f"{fsx}-mount"]


def test_existing_subnets_replace_the_network_pinned_zone_first(engine, example_stack, eks_plan):
    stack = example_stack("h200")
    [pool] = stack.pools.values()
    subnets = stack.config.cluster.network.existing_private_subnets
    _, values = build_cluster(engine, stack, eks_plan("h200"))
    assert "gptoss-network" not in engine.built
    assert engine.invoked(ZONES_TOKEN) == []
    ordered = [subnets[pool.config.availability_zone]] + [
        subnet for zone, subnet in subnets.items() if zone != pool.config.availability_zone
    ]
    assert engine.inputs("gptoss-eks-cluster")["vpcConfig"]["subnetIds"] == ordered
    assert engine.inputs(f"gptoss-nodes-{pool.name}")["subnetIds"] == [subnets[pool.config.availability_zone]]
    assert values["exports"]["network"]["privateSubnetIds"] == ordered


def test_an_existing_storage_class_needs_no_file_system(engine, dev_raw, catalog):
    dev_raw["modelCache"] = {"storage": "existing", "storageClassName": "shared-rwx", "size": "400Gi"}
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    plan = engine.call(lambda: eks_target.plan(stack, catalog))
    target, _ = build_cluster(engine, stack, plan)
    assert "gptoss-model-storage" not in engine.built
    assert (target.file_system, target.storage_ready) == (None, [])
