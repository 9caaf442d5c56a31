"""A deployment's throughput, latency and $ per million tokens, each figure saying what it is.

- published: a measurement at exactly the deployment's point (configs/performance.yaml `recipes`); it
  wins where it exists. A figure measured elsewhere is never scaled to the point.
- modelled: NVIDIA AISimulate's at exactly the recipe's point (configs/estimates.yaml, written by
  `make estimate`), used where the deployment's workers are the recipe's own (no overrides that change
  the point); with the tool's, the database's and the GPU system's names.
- simulated: a mocker recipe's; the trial and the benchmark Job print them, the plan prints none.
And the best configuration AISimulate found at the recipe's GPUs, lengths and goal's latency
targets, with the recipe's modelled throughput as a fraction of it (flagged below the threshold).
"""

from __future__ import annotations

from typing import Any

from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.estimates import SearchRow
from gpt_oss_infra.core.resolve import modelled
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment

SECONDS_PER_HOUR = 3600


def throughput_estimate(catalog: Catalog, deployment: ResolvedDeployment, usd_per_hour: float | None) -> dict[str, Any]:
    """The deployment's figures: `tokensPerSecond` and `usdPerMillionTokens` from the published
    measurement at its point, else from the modelled one, with `basis` saying which (or why none)."""
    traffic = deployment.recipe.traffic
    gpus = deployment.total_gpus
    point = {
        "gpus": gpus,
        "inputTokens": traffic.input_tokens,
        "outputTokens": traffic.output_tokens,
        "concurrency": deployment.concurrency,
    }
    simulation = deployment.backend.simulation(deployment.workers[0].engine)
    if simulation is not None:
        return {
            "point": point,
            "tokensPerSecond": None,
            "usdPerMillionTokens": None,
            "basis": f"simulated: {simulation}; make trial and the benchmark Job print simulated figures, no GPU cost",
        }
    at_point = catalog.performance.recipes.get(deployment.recipe_name)  # the published measurement, if of this point
    if at_point is not None and (
        at_point.gpus,
        at_point.input_tokens,
        at_point.output_tokens,
        at_point.concurrency,
    ) != tuple(point.values()):
        at_point = None
    figures = _modelled(catalog, deployment, usd_per_hour)
    estimate: dict[str, Any] = {"point": point}
    if at_point is not None:
        per_second = at_point.output_tokens_per_second
        estimate |= {
            "tokensPerSecond": per_second,
            "usdPerMillionTokens": per_million_tokens(usd_per_hour, per_second),
            "basis": f"published: {at_point.source}",
        }
    elif "tokensPerSecond" in figures:
        estimate |= {
            "tokensPerSecond": figures["tokensPerSecond"],
            "usdPerMillionTokens": figures["usdPerMillionTokens"],
            "basis": figures["basis"],
        }
    else:
        estimate |= {"tokensPerSecond": None, "usdPerMillionTokens": None, "basis": f"unknown: {figures['basis']}"}
    nearest = catalog.performance.nearest.get(deployment.recipe_name, "none")
    estimate["published"] = (
        f"published: {at_point.source}" if at_point is not None else f"none at this point; nearest: {nearest}"
    )
    estimate["modelled"] = figures
    best = best_configuration(catalog, deployment, figures)
    if best is not None:
        estimate["bestConfiguration"] = best
    return estimate


def per_million_tokens(usd_per_hour: float | None, tokens_per_second: float) -> float | None:
    return None if usd_per_hour is None else round(usd_per_hour / (tokens_per_second * SECONDS_PER_HOUR) * 1e6, 3)


def _modelled(catalog: Catalog, deployment: ResolvedDeployment, usd_per_hour: float | None) -> dict[str, Any]:
    """AISimulate's figures at the deployment's point, or `basis` saying why there are none."""
    found, why_not = modelled.modelled_point(catalog, deployment)
    if found is None:
        return {"basis": why_not}
    if found.figures is None:
        return {"basis": f"not modelled: {found.not_modelled}"}
    figures = found.figures
    per_second = round(figures.output_tokens_per_second_per_gpu * deployment.total_gpus, 1)
    assumed = sorted({note for notes in found.not_inputs.values() for note in notes})
    return {
        "tokensPerSecond": per_second,
        "usdPerMillionTokens": per_million_tokens(usd_per_hour, per_second),
        "tokensPerSecondPerGpu": figures.output_tokens_per_second_per_gpu,
        "tokensPerSecondPerUser": figures.tokens_per_second_per_user,
        "ttftMs": figures.ttft_ms,
        "tpotMs": figures.tpot_ms,
        # What AISimulate estimates the batch needs (weights, activations, KV cache), not what
        # TensorRT-LLM reserves (it takes its KV cache fraction of whatever is free).
        "memoryGbPerGpuNeeded": figures.memory_gb,
        "basis": f"modelled: {catalog.estimates.tool}, {found.system} {catalog.aiconfigurator.backend} "
        f"{found.database} database, at the recipe's point"
        + (f"; not its inputs: {'; '.join(assumed)}" if assumed else "")
        + (f"; AISimulate warns: {figures.warning}" if figures.warning else ""),
    }


def best_configuration(
    catalog: Catalog, deployment: ResolvedDeployment, figures: dict[str, Any]
) -> dict[str, Any] | None:
    """The best configuration AISimulate found at the recipe's default GPUs, lengths and its goal's
    targets, and this deployment's modelled throughput per GPU as a fraction of it (same GPUs only)."""
    per_replica = modelled.point_gpus(modelled.deployment_workers(deployment))
    return against_best(catalog, deployment.recipe_name, per_replica, figures)


def against_best(catalog: Catalog, recipe: str, gpus: int, figures: dict[str, Any]) -> dict[str, Any] | None:
    """A recipe's modelled figures at `gpus` (one replica) against its search's best configuration,
    where the search ran at those GPUs. The best is the recipe itself where it meets the targets with
    more throughput than every configuration the search tried (its aggregated search stops at 512
    sequences per rank)."""
    search = catalog.estimates.searches.get(recipe)
    if search is None:
        return None
    targets = catalog.aiconfigurator.goals[search.goal]
    found: dict[str, Any] = {
        "goal": search.goal,
        "targets": f"TTFT <= {targets.ttft_ms:g} ms, TPOT <= {targets.tpot_ms:g} ms",
        "gpus": search.inputs[modelled.AGGREGATED]["total_gpus"],
    }
    if not search.best:
        return found | {"best": f"none found: {search.not_modelled}"}
    best = search.best[0]
    found["best"] = describe(best, found["gpus"])
    if "tokensPerSecondPerGpu" not in figures or gpus != found["gpus"]:
        return found
    meets = figures["ttftMs"] <= targets.ttft_ms and figures["tpotMs"] <= targets.tpot_ms
    fraction = round(figures["tokensPerSecondPerGpu"] / best.tokens_per_second_per_gpu, 3)
    if meets and fraction > 1:
        found["best"] = "this recipe: it meets the targets with more throughput than every configuration searched"
        fraction = 1.0
    threshold = catalog.aiconfigurator.flag_below_fraction_of_best
    return found | {
        "fractionOfBest": fraction,
        "meetsTargets": meets,
        "flagged": fraction < threshold,
        "flagBelowFraction": threshold,
    }


def describe(row: SearchRow, total_gpus: int) -> str:
    """A search row in a line: its replicas on the search's GPUs, its layout per role, its figures."""
    workers = []
    for role, worker in row.workers.items():
        count = f"{worker['workers']:g} x " if "workers" in worker else ""
        layout = f"tp{worker['tp']:g} dp{worker['dp']:g} moe_tp{worker['moe_tp']:g} moe_ep{worker['moe_ep']:g}"
        workers.append(f"{role} {count}{layout} batch {worker['bs']:g}")
    replicas = total_gpus // row.gpus
    return (
        f"{row.mode}, {replicas} x {row.gpus} GPU{'s' if row.gpus > 1 else ''}: {'; '.join(workers)}: "
        f"{row.tokens_per_second_per_gpu:,.0f} tok/s/GPU, {row.tokens_per_second_per_user:,.1f} tok/s/user, "
        f"TTFT {row.ttft_ms:,.0f} ms, TPOT {row.tpot_ms:.1f} ms"
    )
