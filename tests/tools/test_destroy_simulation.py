"""tools/destroy_simulation.py: `pulumi destroy` of every shipped stack deletes everything it made, or
leaves what it keeps on purpose, and the simulation catches the two ways it used not to finish: a
protected resource (Pulumi refuses it, and what it depends on stays) and a retained FSx file system
(whose network interfaces keep its security group, subnet and VPC from being deleted)."""

from __future__ import annotations

import dataclasses

import pytest

from gpt_oss_infra.tools.dependencies import transitive_waits
from gpt_oss_infra.tools.destroy_simulation import EFS, FSX_LUSTRE, SECURITY_GROUP, SUBNET, VPC, simulate_destroy
from gpt_oss_infra.tools.pulumi_engine import ProgramRun, Registration
from tests.support import example_entries, run_entries, stack_names, successful_run

PVC = "kubernetes:core/v1:PersistentVolumeClaim"


def with_options(run: ProgramRun, types: set[str], **options) -> list[Registration]:
    """The run's resources, those of `types` with these options (what the program used to register)."""
    return [
        dataclasses.replace(resource, options=resource.options | options) if resource.type in types else resource
        for resource in run.resources
    ]


@pytest.fixture(scope="module")
def fsx_run() -> ProgramRun:
    """configs/examples/Pulumi.gb200.yaml: FSx for Lustre in the stack's own VPC."""
    return successful_run(example_entries("gb200"), stack="gb200")


@pytest.mark.parametrize("stack", stack_names())
def test_destroy_of_every_shipped_stack_deletes_everything_it_made(stack):
    run = run_entries(example_entries(stack), stack=stack)  # the run of the stack file the other tests read
    assert run.error is None, run.error
    destroy = simulate_destroy(run.resources)
    assert destroy.left() == []
    assert len(destroy.of("deleted")) == sum(1 for r in run.resources if not r.type.startswith("gpt-oss-infra:"))


def test_a_protected_model_cache_stops_the_destroy_and_keeps_what_it_uses(fsx_run):
    """Before 0.3.0, the cache's claim and file system were protected (and retained)."""
    old = with_options(fsx_run, {FSX_LUSTRE, PVC}, protect=True, retainOnDelete=True)
    destroy = simulate_destroy(old)
    assert not destroy.complete
    refused = {step.type for step in destroy.of("refused")}
    assert refused == {FSX_LUSTRE, PVC}
    assert {SECURITY_GROUP, SUBNET, VPC} <= {step.type for step in destroy.left()}  # its network stays, and the VPC


def test_a_retained_fsx_file_system_keeps_its_security_group_subnet_and_vpc(fsx_run):
    destroy = simulate_destroy(with_options(fsx_run, {FSX_LUSTRE}, retainOnDelete=True))
    assert not destroy.complete
    in_use = {step.name: step.why for step in destroy.of("in use")}
    assert "gptoss-model-storage-fsx remains (DependencyViolation)" in in_use["gptoss-model-storage-clients"]
    assert "gptoss-model-storage-fsx" in in_use["gptoss-network-private-0"]  # its interfaces are in that subnet
    assert "gptoss-network-vpc" in in_use  # and the VPC keeps its subnets
    assert {step.type for step in destroy.left()} >= {SECURITY_GROUP, SUBNET, VPC, FSX_LUSTRE}


def test_keeping_the_fsx_cache_deletes_the_file_system_after_a_final_backup():
    entries = example_entries("gb200")
    entries["gpt-oss-infra:modelCache"] = entries["gpt-oss-infra:modelCache"] | {"keepOnDestroy": True}
    destroy = simulate_destroy(successful_run(entries, stack="gb200").resources)
    assert destroy.complete and destroy.left() == []
    assert destroy.kept == ["a final backup of gptoss-model-storage-fsx (FSx for Lustre, SkipFinalBackup false)"]


def test_keeping_the_efs_cache_retains_the_file_system_and_nothing_of_the_network():
    entries = example_entries("dev")
    entries["gpt-oss-infra:modelCache"] = entries["gpt-oss-infra:modelCache"] | {"keepOnDestroy": True}
    destroy = simulate_destroy(successful_run(entries, stack="dev").resources)
    assert destroy.complete
    assert [(step.type, step.name) for step in destroy.left()] == [(EFS, "gptoss-model-storage-efs")]
    assert {SECURITY_GROUP, SUBNET, VPC} <= {step.type for step in destroy.of("deleted")}


def test_without_its_teardown_guard_a_gateways_nlb_is_left_behind_holding_the_subnets_and_vpc():
    """The leak issue 21 fixed: Envoy Gateway and the Load Balancer Controller deleted before the NLB went."""
    run = successful_run(example_entries("staging") | {"gpt-oss-infra:apiKeys": {"ci": "sk-test"}}, stack="staging")
    assert simulate_destroy(run.resources).complete
    destroy = simulate_destroy([r for r in run.resources if r.name != "dynamo-platform-gateway-load-balancers-gone"])
    assert not destroy.complete
    (orphaned,) = destroy.of("orphaned")
    assert orphaned.name == "NLB of Service envoy-gateway-system/envoy-gpt-oss-gpt-oss"
    assert orphaned.why.startswith(
        "no teardown guard holds gptoss-load-balancers-release, dynamo-platform-gateway-release until it is gone"
    )
    assert {step.type for step in destroy.of("in use")} == {SUBNET, VPC}


def test_a_guard_that_does_not_wait_for_the_controllers_saves_no_nlb():
    """Pulumi deletes what does not depend on each other in any order: a guard present but without its
    dependency on the controllers may go after them, so the simulation may not count it."""
    run = successful_run(example_entries("staging") | {"gpt-oss-infra:apiKeys": {"ci": "sk-test"}}, stack="staging")
    guard = "dynamo-platform-gateway-load-balancers-gone"
    controllers = {"dynamo-platform-gateway-release", "gptoss-load-balancers-release"}
    assert controllers <= next(r for r in run.resources if r.name == guard).waits_for  # the edges the test removes
    unordered = [
        dataclasses.replace(r, waits_for=r.waits_for - controllers) if r.name == guard else r for r in run.resources
    ]
    destroy = simulate_destroy(unordered)
    assert [step.name for step in destroy.of("orphaned")] == [
        "NLB of Service envoy-gateway-system/envoy-gpt-oss-gpt-oss"
    ]


def test_only_the_mount_targets_of_an_efs_file_system_hold_it():
    """DeleteFileSystem fails (FileSystemInUse) only while the file system has mount targets (the EFS API
    reference): the access points the CSI driver made, which outlive their claims (reclaim policy
    Retain), go with it. One mount target left in place keeps the file system, and the destroy stops."""
    run = successful_run(example_entries("dev"), stack="dev")
    mount_targets = sorted(r.name for r in run.resources if r.type == "aws:efs/mountTarget:MountTarget")
    assert len(mount_targets) == 3
    kept_mount = [
        dataclasses.replace(r, options={"retainOnDelete": True}) if r.name == mount_targets[0] else r
        for r in run.resources
    ]
    destroy = simulate_destroy(kept_mount)
    assert not destroy.complete
    in_use = {step.name: step.why for step in destroy.of("in use")}
    assert in_use["gptoss-model-storage-efs"] == (
        f"the cloud refuses while {mount_targets[0]} remains (DependencyViolation)"
    )


@pytest.fixture(scope="module")
def elastic_run() -> ProgramRun:
    """configs/examples/Pulumi.autoscaling.yaml: an elastic pool, its nodes Karpenter's."""
    return successful_run(example_entries("autoscaling"), stack="autoscaling")


def test_destroy_removes_karpenters_nodes_before_the_controller_and_the_cluster(elastic_run):
    """Pulumi deletes a resource only after everything that depends on it: the graphs go first (their workers'
    do-not-disrupt would hold the nodes), then the NodePool, whose nodes Karpenter drains, then its
    EC2NodeClass, then the controller and its CRDs, identity and queue, and the cluster last."""
    destroy = simulate_destroy(elastic_run.resources)
    assert destroy.complete and destroy.of("orphaned") == []
    waits = transitive_waits(elastic_run.resources)
    node_pool, node_class = "gptoss-karpenter-b200-node-pool", "gptoss-karpenter-b200-node-class"
    for graph in ("chat-graph", "long-prompts-graph"):
        assert node_pool in waits[graph]
    assert node_class in waits[node_pool]
    assert {"gptoss-karpenter-release", "gptoss-karpenter-crds"} <= waits[node_class]
    assert {"gptoss-karpenter-identity", "gptoss-karpenter-crds", "gptoss-eks-cluster"} <= waits[
        "gptoss-karpenter-release"
    ]


def test_a_node_pool_that_may_outlive_its_controller_leaves_its_nodes_holding_the_network(elastic_run):
    """As if the NodePool did not wait for the Karpenter release: destroy may uninstall Karpenter first, and
    the nodes' finalizers then hold them (aws/karpenter-provider-aws#6870)."""
    node_pool, node_class = "gptoss-karpenter-b200-node-pool", "gptoss-karpenter-b200-node-class"
    assert node_class in next(r for r in elastic_run.resources if r.name == node_pool).waits_for
    unordered = [
        dataclasses.replace(r, waits_for=r.waits_for - {node_class, "gptoss-karpenter-release"})
        if r.name in (node_pool, node_class)
        else r
        for r in elastic_run.resources
    ]
    destroy = simulate_destroy(unordered)
    (orphaned,) = destroy.of("orphaned")
    assert orphaned.name == "nodes of Karpenter NodePool b200"
    assert orphaned.why.startswith(f"{node_pool} may be deleted after the Karpenter controller")
    assert {SUBNET, SECURITY_GROUP, VPC} <= {step.type for step in destroy.of("in use")}


def test_a_graph_that_may_outlive_its_node_pool_holds_the_nodes(elastic_run):
    """As if a graph did not wait for its pool's NodePool: its do-not-disrupt workers may still be on the nodes."""
    graph = "chat-graph"
    node_pool = "gptoss-karpenter-b200-node-pool"
    waits = {r.name: r.waits_for for r in elastic_run.resources}
    parts = [r.name for r in elastic_run.resources if node_pool in r.waits_for and r.name.startswith("chat")]
    assert graph in parts or any(node_pool in waits[p] for p in parts)
    cut = [
        dataclasses.replace(r, waits_for=r.waits_for - {node_pool}) if r.name.startswith("chat") else r
        for r in elastic_run.resources
    ]
    (orphaned,) = simulate_destroy(cut).of("orphaned")
    assert orphaned.why.startswith("chat-graph may still serve on them when gptoss-karpenter-b200-node-pool goes")
