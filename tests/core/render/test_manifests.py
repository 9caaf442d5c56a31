"""core/render/manifests.py: what the DynamoGraphDeployment's services get from the stack."""

from __future__ import annotations

import hashlib
import json

import pytest

from gpt_oss_infra.core.dynamo_graph import ModelVolume, components_by_name
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, on_release, resolve


def test_workers_load_the_pinned_revision_from_the_cache(dev_raw, catalog):
    serving = resolve(dev_raw, catalog, "h200-agg-low-latency")
    worker = components_by_name(serving.graph)["TrtllmWorker"]
    container = worker.main
    model_path = container["args"][container["args"].index("--model-path") + 1]
    assert model_path == (
        "/opt/models/hub/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
    )
    assert {"name": "HF_HOME", "value": "/opt/models"} in container["env"]
    assert worker.volume == ModelVolume("model-cache", "/opt/models")
    assert worker.pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert worker.pod["nodeSelector"] == {"gpt-oss-infra/pool": "gpu"}


def test_changed_engine_config_rolls_the_workers(dev_raw, catalog):
    def annotation(serving):
        return components_by_name(serving.graph)["TrtllmWorker"].annotations["gpt-oss-infra/engine-config-sha256"]

    before = annotation(resolve(dev_raw, catalog, "h200-agg-low-latency"))
    after = annotation(
        resolve(dev_raw, catalog, "h200-agg-low-latency", overrides={"cuda_graph_config": {"max_batch_size": 16}})
    )
    assert before != after


def test_router_mode_reaches_the_frontend(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["routerMode"] = "kv"
    graph = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].graph
    args = components_by_name(graph)["Frontend"].main["args"]
    assert args[:2] == ["--router-mode", "kv"]


@pytest.mark.parametrize(
    ("settings", "router"),
    [
        ({}, "round-robin"),  # one worker: nothing to choose between
        ({"gpus": 4, "replicas": 2}, "kv"),  # requests that share a prefix go where its KV cache is
        ({"gpus": 4, "replicas": 2, "routerMode": "round-robin"}, "round-robin"),  # as configured
        ({"gpus": 4, "autoscaling": {"ttftMs": 500, "itlMs": 20, "maxReplicas": 2}}, "kv"),  # may grow to two
        ({"gpus": 4, "autoscaling": {"ttftMs": 500, "itlMs": 20, "maxReplicas": 1}}, "round-robin"),
    ],
)
def test_the_router_is_kv_wherever_a_role_can_have_more_than_one_worker(dev_raw, catalog, settings, router):
    dev_raw["deployments"]["gpt-oss"] |= settings
    dev_raw["observability"] = {"enabled": True}  # the Planner's Prometheus
    graph = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].graph
    components = components_by_name(graph)
    assert components["Frontend"].main["args"][:2] == ["--router-mode", router]
    # The workers publish the KV events a KV router reads.
    assert ("--publish-kv-events" in components["TrtllmWorker"].main["args"]) == (router == "kv")


def test_a_recipe_without_kv_block_reuse_keeps_round_robin(dev_raw, catalog):
    """b200-disagg-1p4d turns block reuse off: its workers publish no reuse events for a KV router to read."""
    dev_raw["nodePools"]["gpu"] |= {"hardware": "b200", "nodes": 2}
    dev_raw["deployments"]["gpt-oss"] = {"recipe": "b200-disagg-1p4d", "nodePool": "gpu", "replicas": 2}
    graph = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].graph
    assert components_by_name(graph)["Frontend"].main["args"][:2] == ["--router-mode", "round-robin"]


def test_an_autoscaled_graph_gets_the_planner_and_leaves_its_workers_replicas_to_it(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"] |= {"gpus": 4, "autoscaling": {"ttftMs": 500, "itlMs": 20, "maxReplicas": 2}}
    dev_raw["observability"] = {"enabled": True, "namespace": "metrics"}
    serving = build_stack(dev_raw, catalog, with_hf_token=False).serving[0]
    components = components_by_name(serving.graph)
    assert components["TrtllmWorker"].scaling_adapter  # its replicas left out (tests/core/test_dynamo_graph.py)
    planner = components["Planner"]
    assert planner.main["env"] == [
        {
            "name": "PROMETHEUS_ENDPOINT",
            "value": "http://kube-prometheus-stack-prometheus.metrics.svc.cluster.local:9090",
        }
    ]
    # The Planner's load-based scaling reads the workers' forward-pass metrics, whatever observability says.
    assert "--publish-metrics" in components["TrtllmWorker"].main["args"]
    settings = json.loads(serving.planner_config["data"]["planner_config.json"])
    assert settings["mode"] == "agg" and settings["min_endpoint"] == 1 and settings["decode_engine_num_gpu"] == 4
    assert settings["max_gpu_budget"] == 8  # two 4-GPU workers
    sha = planner.annotations["gpt-oss-infra/planner-config-sha256"]
    assert sha == hashlib.sha256(serving.planner_config["data"]["planner_config.json"].encode()).hexdigest()


def test_an_autoscaled_graphs_planner_may_list_its_pods_and_read_its_adapters_scale(dev_raw, catalog):
    """While a worker is Pending, the 1.6.1 Planner takes that scale-up back only if it can list the graph's pods
    and read the adapters' scale (dynamo/planner/connectors/kubernetes.py); else it ignores every scaling until
    the worker is scheduled, holding the GPUs it asked for."""
    assert build_stack(dev_raw, catalog, with_hf_token=False).serving[0].planner_access == []  # no Planner
    dev_raw["deployments"]["gpt-oss"] |= {"gpus": 4, "autoscaling": {"ttftMs": 500, "itlMs": 20, "maxReplicas": 2}}
    dev_raw["observability"] = {"enabled": True}
    serving = build_stack(dev_raw, catalog, with_hf_token=False).serving[0]
    role, binding = serving.planner_access
    namespace = serving.graph["metadata"]["namespace"]
    assert role["metadata"] == binding["metadata"] and role["metadata"]["namespace"] == namespace
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
        {"apiGroups": ["nvidia.com"], "resources": ["dynamographdeploymentscalingadapters/scale"], "verbs": ["get"]},
    ]
    # The ServiceAccount Dynamo's operator gives every Planner pod.
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "planner-serviceaccount", "namespace": namespace}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert role in serving.objects() and binding in serving.objects()


@pytest.mark.parametrize(
    ("release", "router", "observed", "flags"),
    [
        ("1.6.1", "round-robin", False, []),
        ("1.6.1", "kv", False, ["--publish-kv-events"]),
        ("1.6.1", "round-robin", True, ["--publish-metrics"]),  # 1.6's KV-event flag publishes no metrics
        ("1.6.1", "kv", True, ["--publish-kv-events", "--publish-metrics"]),
        ("1.5.1", "kv", True, ["--publish-kv-events"]),  # one flag publishes both before 1.6
        ("1.2.1", "round-robin", True, ["--publish-events-and-metrics"]),
    ],
)
def test_workers_publish_what_the_router_and_the_dashboards_read(dev_raw, catalog, release, router, observed, flags):
    on_release(dev_raw, catalog, release)
    dev_raw["deployments"]["gpt-oss"]["routerMode"] = router
    dev_raw["observability"] = {"enabled": observed}
    graph = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].graph
    args = components_by_name(graph)["TrtllmWorker"].main["args"]
    assert [arg for arg in args if arg.startswith("--publish")] == flags


@pytest.mark.parametrize(
    ("release", "image", "override"),
    [
        ("1.6.1", "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1", None),
        ("1.6.1", f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime@sha256:{'a' * 64}", "1.6.1"),
        ("1.6.1", "registry.example.com/mirror/tensorrtllm-runtime:ours-7", "1.6.1"),
        ("1.3.0", f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime@sha256:{'a' * 64}", None),  # no such field before 1.4
    ],
)
def test_an_image_that_does_not_name_the_release_gets_the_runtime_version(dev_raw, catalog, release, image, override):
    on_release(dev_raw, catalog, release)["release"]["runtimeImage"] = image
    graph = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].graph
    assert {c.runtime_version for c in components_by_name(graph).values()} == {override}


def test_an_efa_worker_gets_the_runtime_version_its_tag_does_not_say(catalog):
    """1.6.1-efa parses as a pre-release of 1.6.1: the CRD says to set the override then."""
    stack = build_stack(namespace_config(example_entries("b200-disagg")), catalog, with_hf_token=False)
    workers = [c for s in stack.serving for c in components_by_name(s.graph).values() if c.type != "frontend"]
    assert {(c.main["image"].rpartition(":")[2], c.runtime_version) for c in workers} == {("1.6.1-efa", "1.6.1")}
