"""core/resolve/recipes.py: recipes reproduce their sources' settings exactly (the source text is quoted
next to each check; source ids as in SOURCES.md), and deployments' GPUs and overrides resolve into
consistent engine configs."""

from __future__ import annotations

import dataclasses

import pytest

from gpt_oss_infra.core.dynamo_graph import components_by_name
from gpt_oss_infra.core.inputs.catalog import Recipe
from gpt_oss_infra.core.stack import build_stack
from tests.support import refused, resolve


def test_worker_larger_than_a_node_is_refused(dev_raw, catalog):
    """GB200 nodes have 4 GPUs: a recipe asking for 8 per worker cannot be placed."""
    h200 = catalog.recipes["h200-agg-low-latency"]
    wide = Recipe.model_validate(h200.model_dump(by_alias=True) | {"hardware": "gb200"})
    wide_catalog = dataclasses.replace(catalog, recipes={"gb200-wide": wide})
    dev_raw["nodePools"]["gpu"] = {
        "hardware": "gb200",
        "nodes": 2,
        "capacityType": "CAPACITY_BLOCK",
        "capacityReservationId": "cr-0123456789abcdef0",
        "availabilityZone": "us-east-2b",
    }
    dev_raw["deployments"]["gpt-oss"]["recipe"] = "gb200-wide"
    (problem,) = refused(dev_raw, wide_catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.gpus"
    assert "exceed the 4 GPUs of a p6e-gb200.36xlarge node" in problem.message


def test_overrides_deep_merge_into_the_recipe(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["overrides"] = {"cuda_graph_config": {"max_batch_size": 16}}
    (worker,) = build_stack(dev_raw, catalog, with_hf_token=False).deployments[0].workers
    assert worker.engine["cuda_graph_config"] == {"max_batch_size": 16, "enable_padding": True}
    assert worker.engine["moe_config"] == {"backend": "TRITON"}


@pytest.mark.parametrize("gpus", [1, 4, 8])
def test_h200_agg_low_latency_matches_trtllm_gptoss_blog(dev_raw, catalog, gpus):
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
    # [dynamo-gptoss-trtllm]: "--dyn-reasoning-parser gpt_oss --dyn-tool-call-parser harmony"
    worker = components_by_name(serving.graph)["TrtllmWorker"]
    args = worker.main["args"]
    assert args[args.index("--dyn-reasoning-parser") + 1] == "gpt_oss"
    assert args[args.index("--dyn-tool-call-parser") + 1] == "harmony"
    assert worker.gpus == gpus


def test_hopper_recipes_get_no_blackwell_only_settings(catalog):
    for name, recipe in catalog.recipes.items():
        if recipe.gpu_free or catalog.hardware[recipe.hardware].architecture != "hopper":
            continue
        for spec in recipe.workers.values():
            assert spec.engine.get("moe_config", {}).get("backend") == "TRITON", name
            assert spec.engine.get("kv_cache_config", {}).get("dtype") != "fp8", name
            assert "OVERRIDE_QUANT_ALGO" not in spec.env, name


# Per recipe, the settings its sources give, quoted from the source text (role -> engine keys / env).
SEED_SETTINGS = {
    "b200-agg-low-latency": {  # [trtllm-gptoss-quickstart] low-latency config + launch flags
        "worker": {
            "enable_attention_dp": False,
            "moe_config": {"backend": "TRTLLM"},
            "cuda_graph_config": {"enable_padding": True, "max_batch_size": 720},
            "stream_interval": 20,
            "num_postprocess_workers": 4,
            "max_batch_size": 720,
            "max_num_tokens": 16384,
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
            "tensor_parallel_size": 8,
            "moe_expert_parallel_size": 8,
        }
    },
    "b200-agg-max-throughput": {  # [trtllm-gptoss-quickstart] max-throughput config + launch flags
        "worker": {
            "enable_attention_dp": True,
            "moe_config": {"backend": "CUTLASS"},
            "cuda_graph_config": {"enable_padding": True, "max_batch_size": 720},
            "attention_dp_config": {"enable_balance": True, "batching_wait_iters": 50, "timeout_iters": 1},
            "max_batch_size": 720,
            "max_num_tokens": 16384,
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
            "tensor_parallel_size": 8,
            "moe_expert_parallel_size": 8,
        }
    },
    "gb200-agg-low-latency": {  # [trtllm-gptoss-blog] low_latency.yaml, 4x GB200 command
        "worker": {
            "enable_attention_dp": False,
            "cuda_graph_config": {"max_batch_size": 8, "enable_padding": True},
            "moe_config": {"backend": "TRTLLM"},
            "kv_cache_config": {"free_gpu_memory_fraction": 0.75},
            "tensor_parallel_size": 4,
            "moe_expert_parallel_size": 4,
        }
    },
    "gb200-agg-max-throughput": {  # [dynamo-recipe-gptoss] aggregated target: TP4, EP4 + attention-DP
        "worker": {
            "enable_attention_dp": True,
            "cuda_graph_config": {"max_batch_size": 800, "enable_padding": True},
            "kv_cache_config": {"enable_block_reuse": False, "free_gpu_memory_fraction": 0.9},
            "stream_interval": 20,
            "moe_config": {"backend": "CUTLASS"},
            "max_batch_size": 800,
            "tensor_parallel_size": 4,
            "moe_expert_parallel_size": 4,
        }
    },
    "h200-agg-max-throughput": {  # [trtllm-gptoss-blog] max_throughput.yaml with the H200 TRITON note
        "worker": {
            "enable_attention_dp": True,
            "cuda_graph_config": {"max_batch_size": 640, "enable_padding": True},
            "stream_interval": 10,
            "moe_config": {"backend": "TRITON"},
            "max_batch_size": 640,
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
        }
    },
    "h100-agg-long-context": {  # [baseten-truss-gptoss120b] runtime and patch_kwargs tables
        "worker": {
            "tensor_parallel_size": 2,
            "moe_expert_parallel_size": 2,
            "max_batch_size": 64,
            "max_seq_len": 98304,
            "enable_chunked_prefill": True,
            "max_num_tokens": 8192,
            "cuda_graph_config": {"enable_padding": True},
            "kv_cache_config": {"free_gpu_memory_fraction": 0.8, "enable_block_reuse": True},
        }
    },
    "b200-disagg-4p4d": {  # [dynamo-gptoss-trtllm] 'Understanding the Configuration' and launch commands
        "prefill": {
            "enable_attention_dp": False,
            "enable_chunked_prefill": True,
            "disable_overlap_scheduler": True,
            "moe_config": {"backend": "CUTLASS"},
            "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 65536},
            "cuda_graph_config": {"max_batch_size": 32, "enable_padding": True},
            "max_num_tokens": 20000,
            "max_batch_size": 32,
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
            "tensor_parallel_size": 4,
            "moe_expert_parallel_size": 4,
        },
        "decode": {
            "enable_attention_dp": True,
            "disable_overlap_scheduler": False,
            "moe_config": {"backend": "CUTLASS"},
            "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 65536},
            "cuda_graph_config": {"max_batch_size": 128, "enable_padding": True},
            "max_num_tokens": 16384,
            "max_batch_size": 128,
            "kv_cache_config": {"free_gpu_memory_fraction": 0.9},
            "tensor_parallel_size": 4,
            "moe_expert_parallel_size": 4,
        },
    },
}

ONE_P_FOUR_D = {  # [dynamo-recipe-gptoss] disaggregated target: TP1 prefill + TP4 decode, UCX 9216, overlap off/on
    "prefill": {
        "tensor_parallel_size": 1,
        "moe_expert_parallel_size": 1,
        "max_batch_size": 64,
        "disable_overlap_scheduler": True,
        "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 9216},
        "kv_cache_config": {"dtype": "fp8", "enable_block_reuse": False, "free_gpu_memory_fraction": 0.8},
    },
    "decode": {
        "tensor_parallel_size": 4,
        "moe_expert_parallel_size": 1,
        "max_batch_size": 1280,
        "disable_overlap_scheduler": False,
        "cache_transceiver_config": {"backend": "UCX", "max_tokens_in_buffer": 9216},
        "kv_cache_config": {"dtype": "fp8", "enable_block_reuse": False, "free_gpu_memory_fraction": 0.85},
    },
}
SEED_SETTINGS |= {"b200-disagg-1p4d": ONE_P_FOUR_D, "gb200-disagg-1p4d": ONE_P_FOUR_D}
SEED_ENV = {"TRTLLM_ENABLE_PDL": "1", "TRT_LLM_DISABLE_LOAD_WEIGHTS_IN_PARALLEL": "True"}


def resolve_on_its_hardware(dev_raw, catalog, recipe_name: str):
    """On the fewest nodes that hold it, as the sources run it: with their own KV transfer (UCX), not
    the program's EFA settings, which a pool whose KV cache crosses nodes gets (tests/program/test_efa.py)."""
    recipe = catalog.recipes[recipe_name]
    hardware = catalog.hardware[recipe.hardware]
    per_node = hardware.instance_types[hardware.default_instance_type].gpus_per_node
    gpus = sum(role.gpus.default for role in recipe.workers.values())
    dev_raw["nodePools"]["gpu"] = {"hardware": recipe.hardware, "nodes": 1 if gpus <= per_node else 2, "efa": False}
    if recipe.hardware == "gb200":
        dev_raw["nodePools"]["gpu"] |= {
            "capacityType": "CAPACITY_BLOCK",
            "capacityReservationId": "cr-0123456789abcdef0",
            "availabilityZone": "us-east-2b",
        }
    return resolve(dev_raw, catalog, recipe_name)


@pytest.mark.parametrize("recipe_name", sorted(SEED_SETTINGS))
def test_recipe_reproduces_its_seed(dev_raw, catalog, recipe_name):
    serving = resolve_on_its_hardware(dev_raw, catalog, recipe_name)
    workers = {worker.role: worker for worker in serving.deployment.workers}
    assert set(workers) == set(SEED_SETTINGS[recipe_name])
    for role, expected in SEED_SETTINGS[recipe_name].items():
        engine = workers[role].engine
        assert {key: engine.get(key) for key in expected} == expected, role
        assert SEED_ENV.items() <= workers[role].env.items()
        assert workers[role].gpus == engine["tensor_parallel_size"]
    components = components_by_name(serving.graph)
    for role, worker in workers.items():
        args = components[worker.service_name].main["args"]
        assert args[args.index("--dyn-reasoning-parser") + 1] == "gpt_oss"
        if role != "worker":  # disaggregated workers carry their mode and a KV cache transceiver
            assert args[args.index("--disaggregation-mode") + 1] == role
            assert components[worker.service_name].type == role
            assert worker.engine["cache_transceiver_config"]["backend"] == "UCX"


@pytest.mark.parametrize("recipe_name", ["b200-disagg-1p4d", "gb200-disagg-1p4d"])
def test_one_p_four_d_uses_the_blackwell_quantization(dev_raw, catalog, recipe_name):
    serving = resolve_on_its_hardware(dev_raw, catalog, recipe_name)
    for worker in serving.deployment.workers:
        assert worker.env["OVERRIDE_QUANT_ALGO"] == "W4A8_MXFP4_MXFP8"  # [dynamo-recipe-gptoss]
    assert serving.deployment.total_gpus == 5


def test_every_recipe_is_in_the_seed_table(catalog):
    """Or imitates one of those (the trial recipes: tests/core/resolve/test_imitation.py)."""
    trial = {"trial-mocker-agg", "trial-mocker-disagg"}
    assert set(catalog.recipes) == set(SEED_SETTINGS) | {"h200-agg-low-latency"} | trial


def test_unknown_engine_key_in_overrides_names_the_closest_field(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["overrides"] = {"cuda_graph_confg": {"max_batch_size": 8}}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.overrides.cuda_graph_confg"
    assert "did you mean 'cuda_graph_config'" in problem.message


def test_disagg_overrides_are_per_role(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"] = {"hardware": "b200", "nodes": 1}
    dev_raw["deployments"]["gpt-oss"] = {
        "recipe": "b200-disagg-1p4d",
        "nodePool": "gpu",
        "overrides": {"decode": {"max_batch_size": 512}, "prefil": {}},
    }
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.overrides.prefil"
    del dev_raw["deployments"]["gpt-oss"]["overrides"]["prefil"]
    workers = build_stack(dev_raw, catalog, with_hf_token=False).deployments[0].workers
    assert {w.role: w.engine["max_batch_size"] for w in workers} == {"prefill": 64, "decode": 512}
