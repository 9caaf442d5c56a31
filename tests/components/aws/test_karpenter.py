"""Elastic pools (issue 35): the autoscaling example's B200 pool is provisioned by Karpenter. Its NodePool and
EC2NodeClass say what its managed node group said (labels, taint, AMI family, IMDSv2, root volume, EFA layout),
its GPU limit is the budget its Planners are placed within, its workers are never disrupted, and Karpenter's
AWS side is its own published template's, with every parameter filled in."""

from __future__ import annotations

import json

import pytest

from gpt_oss_infra.core.checks.stack_checks import schema_problems
from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.core.render.aws.karpenter import controller_policies, karpenter_resources
from gpt_oss_infra.core.render.aws.resources import cluster_network
from gpt_oss_infra.core.render.aws.specs import gpu_node_group, wildcard_actions
from gpt_oss_infra.core.render.karpenter import DO_NOT_DISRUPT, NODE_ROLE
from gpt_oss_infra.core.render.planner import planner_settings

STACK = "autoscaling"
NODE_ROLE_ARN = "arn:aws:iam::123456789012:role/gptoss-karpenter-node-role-1a2b3c"


@pytest.fixture(scope="module")
def karpenter(eks_plan):
    plan = eks_plan(STACK).eks
    assert plan.karpenter is not None and [spec.pool for spec in plan.elastic] == ["b200"]
    return plan.karpenter


def test_the_elastic_pool_is_no_managed_node_group(eks_plan):
    assert [group.pool for group in eks_plan(STACK).eks.groups] == ["system"]


def test_its_node_pool_bounds_nodes_by_the_budget_its_planners_are_placed_within(karpenter, example_stack):
    stack = example_stack(STACK)
    spec = karpenter.node_pools["b200"]["spec"]
    assert spec["limits"] == {"nvidia.com/gpu": "32", "nodes": "4"}  # 4 x p6-b200.48xlarge, 8 GPUs each
    budgets = {d.name: planner_settings(d, stack.config.release)["max_gpu_budget"] for d in stack.deployments}
    assert budgets == {"chat": 16, "long-prompts": 12}
    # One figure: the pool's GPUs at its most are the NodePool's limit, and hold both Planners at their most.
    assert stack.pools["b200"].total_gpus == 32 >= sum(budgets.values())


def test_its_nodes_are_the_managed_groups_nodes(karpenter, example_stack, eks_plan):
    """Same labels and taint as a node group of the same pool, so that workers and the placement check select
    them alike; the same EFA layout as the launch template's; pinned to the pool's zone."""
    stack = example_stack(STACK)
    pool = stack.pools["b200"]
    (elastic,) = eks_plan(STACK).eks.elastic
    group = gpu_node_group(pool, elastic.network_interfaces, None)
    template = karpenter.node_pools["b200"]["spec"]["template"]
    assert template["metadata"]["labels"] == group.labels
    assert [(t["key"], t["value"], t["effect"]) for t in template["spec"]["taints"]] == [
        ("nvidia.com/gpu", "true", "NoSchedule")
    ]
    assert {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-2a"]} in template["spec"][
        "requirements"
    ]
    node_class = karpenter.node_classes["b200"]["spec"]
    assert node_class["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]  # pinned, never @latest
    assert node_class["metadataOptions"]["httpTokens"] == "required"
    assert node_class["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert node_class["blockDeviceMappings"][0]["ebs"] == {
        "volumeSize": "500Gi",
        "volumeType": "gp3",
        "encrypted": True,
        "deleteOnTermination": True,
    }
    layout = [(i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) for i in node_class["networkInterfaces"]]
    assert layout == [
        (i["network_card_index"], i["device_index"], i["interface_type"]) for i in elastic.network_interfaces
    ]
    assert layout[0] == (0, 0, "interface") and len(layout) == 1 + 8  # p6-b200: 8 EFA-only interfaces
    assert node_class["placementGroupSelector"] == {"name": "gptoss-autoscaling-b200"}
    assert node_class["role"] == NODE_ROLE  # the shell puts the node role's name in


def test_serving_workers_are_never_consolidated_and_nodes_never_expire(karpenter, example_stack):
    spec = karpenter.node_pools["b200"]["spec"]
    assert spec["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert spec["template"]["spec"]["expireAfter"] == "Never"
    assert "terminationGracePeriod" not in spec["template"]["spec"]  # drift waits for do-not-disrupt pods
    workers = [
        component
        for serving in example_stack(STACK).serving
        for component in graph_components(serving.graph)
        if component.gpus
    ]
    assert len(workers) == 3  # chat's worker, long-prompts' prefill and decode
    assert all(component.annotations.items() >= DO_NOT_DISRUPT.items() for component in workers)
    fixed = [c for s in example_stack("b200").serving for c in graph_components(s.graph) if c.gpus]
    assert fixed and not any("karpenter.sh/do-not-disrupt" in c.annotations for c in fixed)


def test_its_objects_are_valid_against_karpenters_crds_and_a_broken_one_is_caught(karpenter, example_stack):
    stack = example_stack(STACK)
    dynamo, version = stack.platform.dynamo, stack.config.cluster.kubernetes_version
    assert schema_problems(karpenter.objects(), version, dynamo) == []
    broken = json.loads(json.dumps(karpenter.node_pools["b200"]))
    broken["spec"]["disruption"]["consolidationPolicy"] = "WhenIdle"
    (problem,) = schema_problems([broken], version, dynamo)
    assert problem.key == "NodePool /b200" and "WhenIdle" in problem.message


def test_the_controller_is_installed_with_its_queue_on_its_own_identity(karpenter, eks_plan):
    values = karpenter.release.values
    assert values["settings"] == {"clusterName": "gptoss-autoscaling", "interruptionQueue": "gptoss-autoscaling"}
    assert karpenter.release.chart.version == "1.14.1"
    made = {
        r.name: r
        for r in karpenter_resources(
            "k", "gptoss-autoscaling", "us-east-2", cluster_network("c"), eks_plan(STACK).eks.elastic
        )
    }
    assert made["k-identity"].inputs["namespace"] == "kube-system"
    assert made["k-identity"].inputs["service_account"] == values["serviceAccount"]["name"] == "karpenter"
    assert made["k-node-access"].inputs["type"] == "EC2_LINUX"  # its own role: one access entry per principal
    assert made["k-interruption-queue"].inputs["name"] == "gptoss-autoscaling"
    rules = [r for r in made.values() if r.type == "aws:cloudwatch/eventRule:EventRule"]
    assert len(rules) == 5
    assert made["k-b200-placement"].inputs == {"name": "gptoss-autoscaling-b200", "strategy": "cluster"}


def test_its_policies_are_the_published_ones_with_every_parameter_filled_in():
    policies = controller_policies("gptoss-autoscaling", "us-east-2", NODE_ROLE_ARN)
    assert sorted(policies) == [
        "EKSIntegrationPolicy",
        "IAMIntegrationPolicy",
        "InterruptionPolicy",
        "NodeLifecyclePolicy",
        "ResourceDiscoveryPolicy",
        "ZonalShiftPolicy",
    ]
    text = json.dumps(policies)
    assert "${" not in text
    assert "arn:aws:sqs:us-east-2:123456789012:gptoss-autoscaling" in text
    pass_role = policies["IAMIntegrationPolicy"]["Statement"][0]
    assert pass_role["Action"] == "iam:PassRole" and pass_role["Resource"] == NODE_ROLE_ARN
    assert all(wildcard_actions(policy) == [] for policy in policies.values())
