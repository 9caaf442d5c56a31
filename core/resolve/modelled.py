"""A recipe's serving point in NVIDIA AISimulate's terms: the exact inputs of its modelled figures.

AISimulate (configs/aiconfigurator.yaml says how it is asked) composes measured kernel timings into
TTFT, TPOT and throughput for a model, a GPU system, a parallel layout, a batch and the prompt and
answer lengths. Here a worker's engine config becomes:
- its layout: TensorRT-LLM's tensor and expert parallel sizes; with attention data parallel the ranks
  serve their own sequences (AISimulate's tp 1 and dp = the ranks);
- its batch per attention rank: the recipe's concurrency spread over the ranks, capped by
  max_batch_size; a prefill worker takes one prompt at a time (as AISimulate's own search does);
- the context tokens of an aggregated step besides the decoding sequences: one prompt, chunked to
  max_num_tokens (an assumption: TensorRT-LLM schedules them at run time);
- its KV cache fraction and dtype, max_seq_len, and its MoE quantization: TensorRT-LLM's choice for
  the GPU architecture and MoE backend, or OVERRIDE_QUANT_ALGO.
What AISimulate takes no input for, or assumes itself, is listed beside the inputs (`not_inputs`).

`make estimate` (tools/estimate.py) sends these inputs and stores them with the figures in
configs/estimates.yaml; a recipe whose inputs here no longer equal the stored ones is stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.backends import EngineView
from gpt_oss_infra.core.backends.mocker import TIMING_FLAG, MockerBackend
from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, Catalog, Traffic
from gpt_oss_infra.core.inputs.estimates import ModelledPoint
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment, recipe_engine

AGGREGATED, DISAGGREGATED = "agg", "disagg"  # AISimulate's estimate modes
ACTIVATION_TOKENS = 8192  # the max_num_tokens AISimulate sizes a worker's activations for


@dataclass(frozen=True)
class WorkerPoint:
    """One worker role of a serving point: its GPUs, how many of it, its engine as the core reads it."""

    role: str  # worker | prefill | decode
    gpus: int
    count: int
    view: EngineView
    env: dict[str, str]


@dataclass(frozen=True)
class ModelledRequest:
    """What AISimulate is asked for one serving point, or why it cannot be asked."""

    system: str
    inputs: dict[str, Any]  # cli_estimate's keyword arguments
    not_inputs: dict[str, list[str]]  # by role: settings it takes no input for, or assumes itself
    not_modelled: str | None = None  # a setting AISimulate has no equivalent for


def layout(view: EngineView) -> dict[str, int]:
    """A worker's TensorRT-LLM parallel sizes as AISimulate's."""
    return parallel_layout(view.tensor_parallel, view.expert_parallel or 1, view.attention_data_parallel)


def parallel_layout(ranks: int, expert: int, attention_data_parallel: bool) -> dict[str, int]:
    """tp x dp ranks of attention, moe_tp x moe_ep of experts, for TensorRT-LLM's tensor_parallel_size
    `ranks` and moe_expert_parallel_size `expert` (the experts' tensor parallel is the rest)."""
    attention = {"tp": 1, "dp": ranks} if attention_data_parallel else {"tp": ranks, "dp": 1}
    return attention | {"moe_tp": ranks // expert, "moe_ep": expert}


def estimate_request(catalog: Catalog, hardware: str, traffic: Traffic, workers: list[WorkerPoint]) -> ModelledRequest:
    """One replica of these workers on this hardware at the recipe's traffic."""
    system = catalog.hardware[hardware].aiconfigurator_system
    quant, unmodelled = quantization(catalog, hardware, workers[-1])
    # One estimate takes one quantization: both roles of a disaggregated point must agree (a test says so).
    request = ModelledRequest(system, estimate_inputs(traffic, workers, quant), not_inputs(workers))
    return request if unmodelled is None else ModelledRequest(system, request.inputs, request.not_inputs, unmodelled)


def quantization(catalog: Catalog, hardware: str, worker: WorkerPoint) -> tuple[dict[str, str], str | None]:
    """The worker's quantization in AISimulate's terms (its MoE's and an FP8 KV cache's), and why
    there is none where AISimulate has no mode for what TensorRT-LLM runs."""
    quant = {"kvcache_quant_mode": "fp8"} if worker.view.kv_cache_dtype == "fp8" else {}
    mode, unmodelled = moe_quant_mode(catalog, hardware, worker.view.moe_backend, worker.env)
    return ({"moe_quant_mode": mode} if mode else {}) | quant, unmodelled


def moe_quant_mode(
    catalog: Catalog, hardware: str, moe_backend: str | None, env: dict[str, str]
) -> tuple[str | None, str | None]:
    """AISimulate's MoE quantization mode for what TensorRT-LLM runs: OVERRIDE_QUANT_ALGO, else its
    choice for the architecture and MoE backend; or why there is none."""
    settings = catalog.aiconfigurator
    by_backend = settings.moe_quantization[catalog.hardware[hardware].architecture]
    algorithm = env.get("OVERRIDE_QUANT_ALGO") or by_backend.get(moe_backend or "", by_backend["default"])
    mode = settings.quantization_modes.get(algorithm.upper())
    if mode is None:
        return None, f"TensorRT-LLM runs its MoE as {algorithm}, which AISimulate has no quantization mode for"
    return mode, None


def estimate_inputs(traffic: Traffic, workers: list[WorkerPoint], quant: dict[str, str]) -> dict[str, Any]:
    """cli_estimate's keyword arguments for one replica of these workers at the recipe's traffic."""
    assert traffic.concurrency_per_gpu is not None  # modelled recipes are GPU ones, whose traffic has it
    concurrency = traffic.concurrency_per_gpu * point_gpus(workers)
    lengths = {"isl": traffic.input_tokens, "osl": traffic.output_tokens}
    if len(workers) == 1:
        (worker,) = workers
        inputs = _worker(worker, "", _decode_batch(worker, concurrency))
        inputs["ctx_tokens"] = min(traffic.input_tokens, worker.view.max_num_tokens)  # one prompt a step
        return {"mode": AGGREGATED, **lengths, **inputs, **quant}
    by_role = {worker.role: worker for worker in workers}
    prefill, decode = by_role["prefill"], by_role["decode"]
    return {
        "mode": DISAGGREGATED,
        **lengths,
        **_worker(prefill, "prefill_", 1),
        **_worker(decode, "decode_", _decode_batch(decode, concurrency)),
        **quant,
    }


def alone(inputs: dict[str, Any]) -> dict[str, Any]:
    """A point's inputs with one request alone (a batch of one per decode rank; a prefill worker already
    takes one prompt at a time): the fastest its workers answer, which no number of them beats."""
    batch = "batch_size" if inputs["mode"] == AGGREGATED else "decode_batch_size"
    return inputs | {batch: 1}


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


def not_inputs(workers: list[WorkerPoint]) -> dict[str, list[str]]:
    """By role: the engine settings AISimulate takes no input for, and what it assumes instead."""
    found = {}
    for worker in workers:
        view, notes = worker.view, []
        if view.moe_backend is not None:
            notes.append(f"moe_config.backend {view.moe_backend}")
        if view.max_num_tokens != ACTIVATION_TOKENS:
            notes.append(f"max_num_tokens {view.max_num_tokens}: activations sized for {ACTIVATION_TOKENS}")
        if view.max_seq_len is None:
            notes.append("max_seq_len unset (TensorRT-LLM's default): AISimulate takes isl + osl")
        if notes:
            found[worker.role] = notes
    return found


def recipe_workers(catalog: Catalog, recipe_name: str, gpus: int | None = None) -> list[WorkerPoint]:
    """One replica of a recipe's workers, the aggregated worker at `gpus` (default: its default)."""
    recipe = catalog.recipes[recipe_name]
    backend = catalog.backends[recipe.backend]
    points = []
    for role, spec in recipe.workers.items():
        size = gpus if gpus is not None and recipe.mode == "aggregated" else spec.gpu_sizes.default
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
            counts[name] = list(recipe.workers["worker"].gpu_sizes.allowed)
        else:
            counts[name] = [sum(spec.gpu_sizes.default for spec in recipe.workers.values())]
    return counts


def point_gpus(workers: list[WorkerPoint]) -> int:
    return sum(worker.gpus * worker.count for worker in workers)


def search_experiments(catalog: Catalog, recipe_name: str) -> dict[str, dict[str, Any]]:
    """The search at a recipe's GPUs (one replica at its default size), lengths, quantization, KV
    cache fraction and max_seq_len, and its goal's latency targets."""
    recipe = catalog.recipes[recipe_name]
    assert recipe.goal is not None, f"recipe {recipe_name} runs on CPU nodes: it has no goal to search for"
    targets = catalog.aiconfigurator.goals[recipe.goal]
    workers = recipe_workers(catalog, recipe_name)
    request = estimate_request(catalog, recipe.hardware, recipe.traffic, workers)
    engine = {"free_gpu_memory_fraction": workers[-1].view.kv_cache_fraction}  # the decoding side's
    if workers[-1].view.max_seq_len is not None:
        engine["max_seq_len"] = workers[-1].view.max_seq_len
    return experiments(
        request.system,
        point_gpus(workers),
        (recipe.traffic.input_tokens, recipe.traffic.output_tokens),
        (targets.ttft_ms, targets.tpot_ms),
        {key: request.inputs[key] for key in QUANTIZATION_INPUTS if key in request.inputs} | engine,
    )


def experiments(
    system: str, total_gpus: int, lengths: tuple[int, int], targets: tuple[float, float], settings: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """cli_exp's experiments: aggregated and disaggregated at the same GPUs, lengths, latency targets
    and settings (a disaggregated experiment's quantization is per role, the rest shared)."""
    common = {"total_gpus": total_gpus, "isl": lengths[0], "osl": lengths[1], "ttft": targets[0], "tpot": targets[1]}
    roles = ("prefill", "decode")
    per_role = {
        (f"{role}_{key}" if key in QUANTIZATION_INPUTS else key): value
        for role in roles
        for key, value in settings.items()
    }
    return {
        AGGREGATED: {"serving_mode": AGGREGATED, "system_name": system, **common, **settings},
        DISAGGREGATED: {
            "serving_mode": DISAGGREGATED,
            **{f"{role}_system_name": system for role in roles},
            **common,
            **per_role,
        },
    }


QUANTIZATION_INPUTS = ("moe_quant_mode", "kvcache_quant_mode")


def modelled_point(catalog: Catalog, deployment: ResolvedDeployment) -> tuple[ModelledPoint | None, str]:
    """The stored point that is exactly this deployment's (one replica), or why there is none."""
    recipe, name = deployment.recipe, deployment.recipe_name
    workers = deployment_workers(deployment)
    gpus = point_gpus(workers) if recipe.mode == "disaggregated" else workers[0].gpus
    stored = catalog.estimates.recipes.get(name, {}).get(gpus)
    if stored is None:
        return None, f"not modelled: configs/estimates.yaml has no point of {name} at {gpus} GPUs (run make estimate)"
    own = estimate_request(catalog, recipe.hardware, recipe.traffic, recipe_workers(catalog, name, gpus))
    if own.inputs != stored.inputs or own.system != stored.system:
        return (
            None,
            f"not modelled: {name}'s point changed since configs/estimates.yaml was written (run make estimate)",
        )
    # Built from the deployment's own workers: the same inputs unless its overrides change the point.
    if estimate_request(catalog, recipe.hardware, recipe.traffic, workers).inputs != own.inputs:
        return None, "not modelled: this deployment's overrides change the recipe's modelled point"
    return stored, ""


def timing_tables(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """The timing tables AISimulate modelled for recipes' workers, by profile (configs/mocker-timing/,
    which the mocker backend reads): prefill TTFT by prompt length, decode ITL by active KV tokens and context."""
    mocker = catalog.backends.get("mocker")
    if not isinstance(mocker, MockerBackend):
        return {}
    return {profile: tables for profile, tables in mocker.timing.items() if tables is not None}


def timing_tables_for(catalog: Catalog, deployment: ResolvedDeployment) -> tuple[str, dict[str, Any]] | None:
    """The timing tables modelled for this deployment's recipe at its workers' GPUs, and their profile; a
    mocker worker's are the profile it runs (its `planner_profile_data`)."""
    tables_by_profile = timing_tables(catalog)
    own = {worker.engine.get(TIMING_FLAG) for worker in deployment.workers} - {None}
    if deployment.backend.name == "mocker" and len(own) == 1 and (profile := own.pop()) in tables_by_profile:
        return profile, tables_by_profile[profile]
    gpus = {worker.role: worker.gpus for worker in deployment.workers}
    for profile, tables in tables_by_profile.items():
        sides = (tables["prefill"], tables["decode"])
        if tables["recipe"] == deployment.recipe_name and all(gpus.get(s["role"]) == s["gpus"] for s in sides):
            return profile, tables
    return None


def table_pace(tables: dict[str, Any], traffic: Traffic, concurrency: int) -> tuple[float, float]:
    """TTFT and inter-token latency (ms) from timing tables, `concurrency` sequences of the traffic's shape
    in the KV cache (1: one request alone), each grid rounded up: no faster than the grid point above."""
    sequence = traffic.input_tokens + traffic.output_tokens
    decode, prefill = tables["decode"], tables["prefill"]
    active = _at_or_above(decode["activeKvTokens"], concurrency * sequence)
    itl = decode["itlMs"][active][_at_or_above(decode["contextTokens"], sequence)]
    return prefill["ttftMs"][_at_or_above(prefill["islTokens"], traffic.input_tokens)], itl


def _at_or_above(grid: list[int], value: int) -> int:
    """The index of the first grid point at or above `value` (the last if none)."""
    return next((index for index, point in enumerate(grid) if point >= value), len(grid) - 1)


def pace(
    catalog: Catalog, deployment: ResolvedDeployment, alone: bool = False
) -> tuple[tuple[float, float, str] | None, str]:
    """TTFT and time per output token (ms) of the deployment's workers, and what they are: at the recipe's
    point, or (`alone`) with one request alone. AISimulate's figures at the point (configs/estimates.yaml),
    else the timing tables it modelled for the recipe's workers (configs/mocker-timing/), read at the recipe's
    traffic (or at their lightest load); or None and why there are none."""
    point, why_not = modelled_point(catalog, deployment)
    figures = None if point is None else point.alone if alone else point.figures
    if point is not None and figures is not None:
        at = "batch of one" if alone else f"{point.system}, at the recipe's point (configs/estimates.yaml)"
        return (figures.ttft_ms, figures.tpot_ms, f"modelled: {catalog.estimates.tool}, {at}"), ""
    found = timing_tables_for(catalog, deployment)
    if found is not None:
        profile, tables = found
        ttft, itl = table_pace(tables, deployment.recipe.traffic, 1 if alone else deployment.concurrency)
        basis = f"modelled: {tables['modelledBy']['tool']} timing tables (configs/mocker-timing/{profile}.yaml)"
        return (ttft, itl, basis if alone else f"{basis}, at the recipe's traffic, rounded up to their grid"), ""
    return None, why_not or (point.not_modelled if point is not None and point.not_modelled else "not modelled")
