"""core/render/manifests.py: what the DynamoGraphDeployment's services get from the stack."""

from __future__ import annotations

from core.dynamo_graph import ModelVolume, components_by_name
from core.stack import build_stack
from tests.support import resolve


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
