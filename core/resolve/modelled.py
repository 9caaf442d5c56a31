"""A recipe's serving point in NVIDIA AIConfigurator's terms: the exact inputs of its modelled figures.

AIConfigurator (configs/aiconfigurator.yaml pins it) composes measured kernel timings into TTFT, TPOT
and throughput for a model, a GPU system, a parallel layout, a batch and the prompt and answer
lengths. Here a worker's engine config becomes that layout (TensorRT-LLM's sizes; with attention data
parallel, the ranks serve their own sequences: AIConfigurator's tp 1 and dp = the ranks), its batch
(the recipe's concurrency spread over the ranks, capped by max_batch_size), the context tokens of a
step (one prompt, chunked to max_num_tokens; a prefill worker's batch: the prompts max_num_tokens
holds), KV cache fraction, sequence length and quantization. What AIConfigurator has no
input for (the MoE backend) is named beside the inputs, never guessed into them.

`make estimate` (tools/estimate.py) sends these inputs and stores them with the figures in
configs/estimates.yaml; a recipe whose inputs here no longer equal the stored ones is stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.backends import EngineView
from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, Catalog, Traffic
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment, recipe_engine

AGGREGATED, DISAGGREGATED = "agg", "disagg"  # AIConfigurator's estimate modes


@dataclass(frozen=True)
class WorkerPoint:
    """One worker role of a serving point: its GPUs, how many of it, its engine as the core reads it."""

    role: str  # worker | prefill | decode
    gpus: int
    count: int
    view: EngineView
    env: dict[str, str]


def layout(view: EngineView) -> dict[str, int]:
    """A worker's TensorRT-LLM parallel sizes as AIConfigurator's."""
    return parallel_layout(view.tensor_parallel, view.expert_parallel or 1, view.attention_data_parallel)


def parallel_layout(ranks: int, expert: int, attention_data_parallel: bool) -> dict[str, int]:
    """tp x dp ranks of attention, moe_tp x moe_ep of experts, for TensorRT-LLM's tensor_parallel_size
    `ranks` and moe_expert_parallel_size `expert`."""
    if attention_data_parallel:
        return {"tp": 1, "dp": ranks, "moe_tp": 1, "moe_ep": ranks}
    return {"tp": ranks, "dp": 1, "moe_tp": ranks // expert, "moe_ep": expert}


@dataclass(frozen=True)
class ModelledRequest:
    """What AIConfigurator is asked for one serving point."""

    system: str
    inputs: dict[str, Any]  # cli_estimate's keyword arguments
    not_inputs: dict[str, str]  # engine settings it has no input for, by role


def estimate_request(catalog: Catalog, hardware: str, traffic: Traffic, workers: list[WorkerPoint]) -> ModelledRequest:
    """One replica of these workers on this hardware at the recipe's traffic."""
    entry = catalog.hardware[hardware]
    moe_default = catalog.aiconfigurator.moe_quantization[entry.architecture]
    return ModelledRequest(
        entry.aiconfigurator_system, estimate_inputs(traffic, workers, moe_default), not_inputs(workers)
    )


def quantization(view: EngineView, env: dict[str, str], moe_default: str) -> dict[str, str]:
    """The worker's quantization in AIConfigurator's terms: its MoE's (TensorRT-LLM's default for the
    GPU architecture unless OVERRIDE_QUANT_ALGO says otherwise) and an FP8 KV cache where it has one."""
    quant = {"moe_quant_mode": env.get("OVERRIDE_QUANT_ALGO", moe_default).lower()}
    if view.kv_cache_dtype == "fp8":
        quant["kvcache_quant_mode"] = "fp8"
    return quant


def estimate_inputs(traffic: Traffic, workers: list[WorkerPoint], moe_default: str) -> dict[str, Any]:
    """cli_estimate's keyword arguments for one replica of these workers at the recipe's traffic."""
    concurrency = traffic.concurrency_per_gpu * point_gpus(workers)
    lengths = {"isl": traffic.input_tokens, "osl": traffic.output_tokens}
    # Quantization is per estimate, not per role: both roles of our recipes agree (a test says so).
    quant = quantization(workers[-1].view, workers[-1].env, moe_default)
    if len(workers) == 1:
        (worker,) = workers
        inputs = _worker(worker, "", _decode_batch(worker, concurrency))
        # A step's context tokens besides the decoding sequences: one prompt, chunked to max_num_tokens.
        inputs["ctx_tokens"] = min(traffic.input_tokens, worker.view.max_num_tokens)
        return {"mode": AGGREGATED, **lengths, **inputs, **quant}
    by_role = {worker.role: worker for worker in workers}
    prefill, decode = by_role["prefill"], by_role["decode"]
    # A prefill step takes as many whole prompts as its tokens per iteration hold (at least one, chunked).
    prefill_batch = max(1, min(prefill.view.max_batch_size, prefill.view.max_num_tokens // traffic.input_tokens))
    return {
        "mode": DISAGGREGATED,
        **lengths,
        **_worker(prefill, "prefill_", prefill_batch),
        **_worker(decode, "decode_", _decode_batch(decode, concurrency)),
        **quant,
    }


def _decode_batch(worker: WorkerPoint, concurrency: int) -> int:
    """Sequences per rank: the concurrency over the workers' attention ranks, up to max_batch_size."""
    ranks = worker.count * layout(worker.view)["dp"]
    return min(-(-concurrency // ranks), worker.view.max_batch_size)


def _worker(worker: WorkerPoint, prefix: str, batch: int) -> dict[str, Any]:
    sizes = layout(worker.view)
    inputs = {
        f"{prefix}tp_size": sizes["tp"],
        f"{prefix}attention_dp_size": sizes["dp"],
        f"{prefix}moe_tp_size": sizes["moe_tp"],
        f"{prefix}moe_ep_size": sizes["moe_ep"],
        f"{prefix}batch_size": batch,
        f"{prefix}free_gpu_memory_fraction": worker.view.kv_cache_fraction,
    }
    if prefix:
        inputs[f"{prefix}num_workers"] = worker.count
    if worker.view.max_seq_len is not None:
        inputs[f"{prefix}max_seq_len"] = worker.view.max_seq_len
    return inputs


def not_inputs(workers: list[WorkerPoint]) -> dict[str, str]:
    """Engine settings of the point that AIConfigurator 0.12.0 takes no input for, by role."""
    return {
        worker.role: f"moe_config.backend {worker.view.moe_backend}"
        for worker in workers
        if worker.view.moe_backend is not None
    }


def recipe_workers(catalog: Catalog, recipe_name: str, gpus: int | None = None) -> list[WorkerPoint]:
    """One replica of a recipe's workers, the aggregated worker at `gpus` (default: its default)."""
    recipe = catalog.recipes[recipe_name]
    backend = catalog.backends[recipe.backend]
    points = []
    for role, spec in recipe.workers.items():
        size = gpus if gpus is not None and recipe.mode == "aggregated" else spec.gpus.default
        view = backend.view(recipe_engine(spec, size, backend))
        points.append(WorkerPoint(role, size, 1, view, dict(spec.env)))
    return points


def deployment_workers(deployment: ResolvedDeployment) -> list[WorkerPoint]:
    """One replica of a deployment's workers, overrides included."""
    return [
        WorkerPoint(worker.role, worker.gpus, 1, deployment.backend.view(worker.engine), dict(worker.env))
        for worker in deployment.workers
    ]


def modelled_gpu_counts(catalog: Catalog) -> dict[str, list[int]]:
    """Every GPU recipe and the worker GPU counts it allows (one point each; a disaggregated recipe's
    roles have one size each, its point is their sum)."""
    counts = {}
    for name, recipe in catalog.recipes.items():
        if recipe.hardware == CPU_ONLY:
            continue
        if recipe.mode == "aggregated":
            counts[name] = list(recipe.workers["worker"].gpus.allowed)
        else:
            counts[name] = [sum(spec.gpus.default for spec in recipe.workers.values())]
    return counts


def point_gpus(workers: list[WorkerPoint]) -> int:
    return sum(worker.gpus * worker.count for worker in workers)


def search_experiments(catalog: Catalog, recipe_name: str) -> dict[str, dict[str, Any]]:
    """cli_exp's experiments for the best configurations at a recipe's GPUs (one replica at its default
    size), lengths, quantization and its goal's latency targets: aggregated and disaggregated."""
    recipe = catalog.recipes[recipe_name]
    targets = catalog.aiconfigurator.goals[recipe.goal]
    workers = recipe_workers(catalog, recipe_name)
    request = estimate_request(catalog, recipe.hardware, recipe.traffic, workers)
    quant = {key: request.inputs[key] for key in QUANTIZATION_INPUTS if key in request.inputs}
    common = {
        "total_gpus": point_gpus(workers),
        "isl": recipe.traffic.input_tokens,
        "osl": recipe.traffic.output_tokens,
        "ttft": targets.ttft_ms,
        "tpot": targets.tpot_ms,
    }
    roles = ("prefill", "decode")
    return {
        AGGREGATED: {"serving_mode": AGGREGATED, "system_name": request.system, **common, **quant},
        DISAGGREGATED: {
            "serving_mode": DISAGGREGATED,
            **{f"{role}_system_name": request.system for role in roles},
            **common,
            **{f"{role}_{key}": value for role in roles for key, value in quant.items()},
        },
    }


QUANTIZATION_INPUTS = ("moe_quant_mode", "kvcache_quant_mode")
