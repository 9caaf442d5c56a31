"""Recipes reproduce their seeds' settings exactly (the seed text is quoted next to each check)."""

from __future__ import annotations

import pytest

from core.stack import build_stack


def resolve(dev_raw, catalog, recipe: str, gpus: int | None = None, **deployment):
    dev_raw["deployments"]["gpt-oss"] = {"recipe": recipe, "nodePool": "gpu", **deployment}
    if gpus is not None:
        dev_raw["deployments"]["gpt-oss"]["gpus"] = gpus
    return build_stack(dev_raw, catalog, with_hf_token=False).serving[0]


@pytest.mark.parametrize("gpus", [1, 4, 8])
def test_h200_agg_low_latency_matches_seed_000(dev_raw, catalog, gpus):
    serving = resolve(dev_raw, catalog, "h200-agg-low-latency", gpus)
    (worker,) = serving.deployment.workers
    engine = worker.engine
    # "--tp_size N --ep_size N" for the 1x, 4x and 8x commands
    assert engine["tensor_parallel_size"] == engine["moe_expert_parallel_size"] == gpus == worker.gpus
    # low_latency.yaml: "enable_attention_dp: false",
    # "cuda_graph_config: max_batch_size: 8, enable_padding: true"
    assert engine["enable_attention_dp"] is False
    assert engine["cuda_graph_config"] == {"max_batch_size": 8, "enable_padding": True}
    # "(H200 Only) ... set the moe_config.backend to TRITON"
    assert engine["moe_config"] == {"backend": "TRITON"}
    # "--kv_cache_free_gpu_memory_fraction 0.75", "--trust_remote_code"
    assert engine["kv_cache_config"] == {"free_gpu_memory_fraction": 0.75}
    assert engine["trust_remote_code"] is True
    # "-e TRTLLM_ENABLE_PDL=1 -e TRT_LLM_DISABLE_LOAD_WEIGHTS_IN_PARALLEL=True"
    assert worker.env == {"TRTLLM_ENABLE_PDL": "1", "TRT_LLM_DISABLE_LOAD_WEIGHTS_IN_PARALLEL": "True"}
    # seed 002: "--dyn-reasoning-parser gpt_oss --dyn-tool-call-parser harmony"
    args = serving.graph["spec"]["services"]["TrtllmWorker"]["extraPodSpec"]["mainContainer"]["args"]
    assert args[args.index("--dyn-reasoning-parser") + 1] == "gpt_oss"
    assert args[args.index("--dyn-tool-call-parser") + 1] == "harmony"
    assert serving.graph["spec"]["services"]["TrtllmWorker"]["resources"]["limits"]["gpu"] == str(gpus)


def test_hopper_recipes_get_no_blackwell_only_settings(catalog):
    for name, recipe in catalog.recipes.items():
        if catalog.hardware[recipe.hardware].architecture != "hopper":
            continue
        for spec in recipe.workers.values():
            assert spec.engine.get("moe_config", {}).get("backend") == "TRITON", name
            assert spec.engine.get("kv_cache_config", {}).get("dtype") != "fp8", name
            assert "OVERRIDE_QUANT_ALGO" not in spec.env, name


def test_workers_load_the_pinned_revision_from_the_cache(dev_raw, catalog):
    serving = resolve(dev_raw, catalog, "h200-agg-low-latency")
    worker = serving.graph["spec"]["services"]["TrtllmWorker"]
    container = worker["extraPodSpec"]["mainContainer"]
    model_path = container["args"][container["args"].index("--model-path") + 1]
    assert model_path == (
        "/opt/models/hub/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
    )
    assert {"name": "HF_HOME", "value": "/opt/models"} in container["env"]
    assert worker["volumeMounts"] == [{"name": "model-cache", "mountPoint": "/opt/models"}]
    assert worker["extraPodSpec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert worker["extraPodSpec"]["nodeSelector"] == {"gpt-oss-infra/pool": "gpu"}


def test_changed_engine_config_rolls_the_workers(dev_raw, catalog):
    def annotation(serving):
        worker = serving.graph["spec"]["services"]["TrtllmWorker"]
        return worker["extraPodMetadata"]["annotations"]["gpt-oss-infra/engine-config-sha256"]

    before = annotation(resolve(dev_raw, catalog, "h200-agg-low-latency"))
    after = annotation(
        resolve(dev_raw, catalog, "h200-agg-low-latency", overrides={"cuda_graph_config": {"max_batch_size": 16}})
    )
    assert before != after
