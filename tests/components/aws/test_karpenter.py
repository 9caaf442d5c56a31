"""Elastic pools (issue 35): the autoscaling example's B200 pool is provisioned by Karpenter. Its NodePool and
EC2NodeClass say what its managed node group said (labels, taint, AMI family, IMDSv2, root volume, EFA layout),
its GPU limit is the budget its Planners are placed within, its workers are never disrupted, and Karpenter's
AWS side is its own published template's, with every parameter filled in."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gpt_oss_infra.components.aws.karpenter import Karpenter
from gpt_oss_infra.core.checks import scheduling
from gpt_oss_infra.core.checks.stack_checks import schema_problems, stack_problems
from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.core.render.aws.karpenter import controller_policies, karpenter_resources
from gpt_oss_infra.core.render.aws.resources import ClusterNetwork, cluster_network
from gpt_oss_infra.core.render.aws.specs import gpu_node_group, wildcard_actions
from gpt_oss_infra.core.render.gpu_software import chart_problems
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


def test_the_controller_starts_on_its_crds_and_every_policy_and_its_objects_outlast_a_slow_drain(engine, eks_plan):
    """The CRDs come from their own chart (Helm never upgrades a chart's crds/); the controller waits for its
    policies; the NodePool and EC2NodeClass get 30 minutes to drain and terminate GPU nodes at destroy."""
    plan = eks_plan(STACK).eks
    cluster = ClusterNetwork("gptoss-autoscaling", "vpc-0123", "sg-0123")  # as the EKS cluster gives them
    resources = karpenter_resources("k", "gptoss-autoscaling", "us-east-2", cluster, plan.elastic)

    def program() -> None:
        built: dict = {}
        Karpenter("k", resources, built, plan.karpenter, [])

    engine.run(program)
    assert engine.inputs("k-crds")["chart"] == "oci://public.ecr.aws/karpenter/karpenter-crd"
    assert engine.inputs("k-release")["skipCrds"] is True
    attachments = sorted(name for name in engine.built if name.endswith("-attachment"))
    assert len(attachments) == 6
    assert set(engine.waits_for("k-release")) >= {"k-crds", "k-identity", *attachments}
    for name in ("k-b200-node-class", "k-b200-node-pool"):
        assert engine.built[name].opts.custom_timeouts.delete == "30m"
    assert "k-release" in engine.waits_for("k-b200-node-class")
    assert engine.waits_for("k-b200-node-pool") == ["k-b200-node-class"]


def test_the_crd_chart_is_the_controllers_version_and_a_value_neither_declares_is_caught(karpenter):
    assert karpenter.crds.chart.version == karpenter.release.chart.version
    assert chart_problems([karpenter.crds, karpenter.release], set()) == []
    broken = dataclasses.replace(karpenter.release, values=karpenter.release.values | {"setings": {}})
    (problem,) = chart_problems([broken], set())
    assert problem.message.startswith("setings: not a value this chart declares (vendor/charts/karpenter/1.14.1)")


def test_the_controller_is_placed_on_the_system_nodes_beside_the_rest(example_stack, catalog):
    """Two replicas of 1 CPU and 1 GiB each, one per node: they fit the autoscaling example's system nodes; at
    7 CPUs each they leave the platform's own pods no room, which the placement check says."""
    stack = example_stack(STACK)
    controller = scheduling.karpenter_pods(catalog.charts["karpenter"], {"cpu": "1", "memory": "1Gi"})
    assert (controller.replicas, controller.requests.cpu, controller.requests.memory) == (2, 1000, 1024)
    assert stack_problems(stack, catalog)[0] == []
    greedy = dataclasses.replace(
        catalog,
        karpenter=catalog.karpenter.model_copy(
            update={"controller_resources": {"requests": {"cpu": "7", "memory": "1Gi"}, "limits": {}}}
        ),
    )
    problems, _ = stack_problems(stack, greedy)
    assert problems and all("short of CPU" in problem.message for problem in problems)


def test_the_trial_shows_the_same_wiring_on_cpu_nodes(eks_plan, example_stack):
    """The trial stack's elastic cpu pool: the same NodePool and EC2NodeClass, with a cpu limit where a GPU
    pool has nvidia.com/gpu, its own taint (its workers only), no EFA; the Planner-scaled mocker graph on it,
    never disrupted; the other graphs on the system nodes."""
    plan = eks_plan("trial").eks
    assert plan.karpenter is not None and [spec.pool for spec in plan.elastic] == ["workers"]
    spec = plan.karpenter.node_pools["workers"]["spec"]
    assert spec["limits"] == {"cpu": "16", "nodes": "2"}  # 2 x m7i.2xlarge, 8 vCPUs each
    assert spec["template"]["metadata"]["labels"] == {"gpt-oss-infra/hardware": "cpu", "gpt-oss-infra/pool": "workers"}
    assert spec["template"]["spec"]["taints"] == [
        {"key": "gpt-oss-infra/pool", "value": "workers", "effect": "NoSchedule"}
    ]
    assert {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m7i.2xlarge"]} in spec["template"][
        "spec"
    ]["requirements"]
    node_class = plan.karpenter.node_classes["workers"]["spec"]
    assert "networkInterfaces" not in node_class and "placementGroupSelector" not in node_class
    stack = example_stack("trial")
    assert (
        schema_problems(plan.karpenter.objects(), stack.config.cluster.kubernetes_version, stack.platform.dynamo) == []
    )
    placed = {}
    for serving in stack.serving:
        for component in graph_components(serving.graph):
            if component.type == "worker":
                placed[serving.deployment.name] = (component.pod.get("nodeSelector"), component.annotations)
    selector, annotations = placed["elastic"]
    assert selector == {"gpt-oss-infra/pool": "workers"}
    assert annotations.items() >= DO_NOT_DISRUPT.items()
    assert placed["agg"][0] is None and "karpenter.sh/do-not-disrupt" not in placed["agg"][1]
    (elastic,) = [s.deployment for s in stack.serving if s.deployment.name == "elastic"]
    assert planner_settings(elastic, stack.config.release)["max_gpu_budget"] == 3  # a mocker worker counts one
