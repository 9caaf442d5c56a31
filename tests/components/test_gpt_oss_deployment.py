"""components/gpt_oss_deployment.py: a deployment's engine config, its graph, smoke test and benchmark, and what it
reports, as GptOssStack has the block make them (GptOssDeployment.of_stack)."""

from __future__ import annotations

import pulumi
import pytest

from gpt_oss_infra.components.gpt_oss_deployment import DecidedDeployment, GptOssDeployment
from gpt_oss_infra.core.render import manifests
from gpt_oss_infra.core.render.stack_objects import defer_serving
from tests.components.conftest import SYSTEM_READY, assert_on_the_cluster, on_stand_in_cluster

SERVING = "gpt-oss-infra:index:GptOssDeployment"


def build_serving(engine, serving, with_gpu_nodes: bool = True):
    def program():
        gpu_nodes = pulumi.ComponentResource("test:index:GpuNodes", "gpu-nodes") if with_gpu_nodes else None
        name = serving.deployment.name
        decided = DecidedDeployment(serving, api_keys=None, gpu_nodes=gpu_nodes)
        component = GptOssDeployment.of_stack(name, decided, opts=on_stand_in_cluster())
        return {"endpoint": component.endpoint, "check": component.serving_check, "url": component.url}

    return engine.run(program)


def test_the_graph_waits_for_its_engine_config_and_its_pools_nodes(engine, example_stack):
    serving = example_stack("dev").serving[0]
    build_serving(engine, serving)
    assert assert_on_the_cluster(engine, "gpt-oss", SERVING) == [
        "gpt-oss-engine-config",
        "gpt-oss-graph",
        "gpt-oss-smoke-test-script",
        "gpt-oss-smoke-test",
    ]
    assert engine.inputs("gpt-oss-engine-config")["data"] == serving.engine_config["data"]
    graph = engine.registered("gpt-oss-graph")
    assert graph.typ == f"kubernetes:{serving.graph['apiVersion']}:{serving.graph['kind']}"
    assert {key: graph.inputs[key] for key in ("metadata", "spec")} == {
        "metadata": serving.graph["metadata"],
        "spec": serving.graph["spec"],
    }
    assert engine.waits_for("gpt-oss-graph") == [SYSTEM_READY, "gpt-oss-engine-config", "gpu-nodes"]


def test_without_node_groups_the_graph_waits_for_its_engine_config(engine, example_stack):
    serving = example_stack("existing-cluster").serving[0]
    build_serving(engine, serving, with_gpu_nodes=False)
    assert engine.waits_for("gpt-oss-graph") == [SYSTEM_READY, "gpt-oss-engine-config"]


def test_an_autoscaled_graph_waits_for_its_planners_config_and_access(engine, example_stack):
    serving = next(each for each in example_stack("autoscaling").serving if each.deployment.name == "chat")
    build_serving(engine, serving)
    access = ["chat-planner-role", "chat-planner-rolebinding"]
    assert engine.waits_for("chat-graph") == [
        SYSTEM_READY,
        "chat-engine-config",
        "chat-planner-config",
        *access,
        "gpu-nodes",
    ]
    assert [engine.registered(name).typ for name in access] == [
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
    ]
    assert engine.inputs("chat-planner-rolebinding")["subjects"] == serving.planner_access[1]["subjects"]


def test_the_check_names_the_smoke_test_that_answered_through_the_frontend(engine, example_stack):
    serving = example_stack("dev").serving[0]
    values = build_serving(engine, serving)
    assert engine.waits_for("gpt-oss-smoke-test") == [SYSTEM_READY, "gpt-oss-graph", "gpt-oss-smoke-test-script"]
    service = manifests.frontend_service_name("gpt-oss")
    namespace = serving.graph["metadata"]["namespace"]
    job = serving.smoke_test.job["metadata"]["name"]
    endpoint = f"http://{service}.{namespace}.svc.cluster.local:{manifests.FRONTEND_PORT}"
    assert values == {
        "endpoint": endpoint,
        "check": f"answered a chat completion through {service} (Job {job})",
        "url": endpoint,  # no gateway: clients call the in-cluster endpoint
    }


def test_a_graph_whose_nodes_come_later_is_not_checked_yet(engine, example_stack):
    stack = defer_serving(example_stack("dev"), {"gpu": "the block starts later"})
    values = build_serving(engine, stack.serving[0])
    assert engine.children("gpt-oss") == ["gpt-oss-engine-config", "gpt-oss-graph"]
    assert values["check"] == "not checked yet: the block starts later"


@pytest.mark.parametrize(("deployment", "benchmarked"), [("disagg-1p4d", True), ("disagg-4p4d", False)])
def test_the_benchmark_runs_against_the_graph_only_when_enabled(engine, example_stack, deployment, benchmarked):
    [serving] = [each for each in example_stack("b200-disagg").serving if each.deployment.name == deployment]
    build_serving(engine, serving)
    benchmark = f"{deployment}-benchmark"
    assert (benchmark in engine.children(deployment)) is benchmarked
    if benchmarked:
        assert engine.waits_for(benchmark) == [SYSTEM_READY, f"{deployment}-graph", f"{benchmark}-script"]
        assert engine.inputs(benchmark)["metadata"]["name"] == serving.benchmark.job["metadata"]["name"]
