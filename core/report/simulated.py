"""What make simulate found for a deployment (configs/simulated.yaml), for the plan summary: the entry replayed
for the same recipe, GPUs per worker, pool and autoscaling, or nothing. Every figure is simulated."""

from __future__ import annotations

from typing import Any

from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.simulated import SimulatedMatch, SimulatedRun
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment

# "configured": a what-if deployment's own fixed size, replayed when smaller than the peak size.
DAY_RUNS = ("configured", "static", "planner", "planner-delayed", "oracle")


def deployment_match(deployment: ResolvedDeployment) -> SimulatedMatch | None:
    """What a replay must have stood in for to be this deployment's (None: it runs no GPU)."""
    if deployment.pool is None:
        return None
    autoscaling = deployment.config.autoscaling
    return SimulatedMatch.model_validate(
        {
            "recipe": deployment.recipe_name,
            "gpus": {worker.role: worker.gpus for worker in deployment.workers},
            "instanceType": deployment.pool.instance_type,
            "nodes": deployment.pool.config.most_nodes,
            "autoscaling": None
            if autoscaling is None
            else {
                "ttftMs": autoscaling.ttft_ms,
                "itlMs": autoscaling.itl_ms,
                "bounds": {
                    w.role: (w.scaling.min_replicas, w.scaling.max_replicas) for w in deployment.workers if w.scaling
                },
            },
        }
    )


def simulated_report(catalog: Catalog, deployment: ResolvedDeployment) -> dict[str, Any] | None:
    wanted = deployment_match(deployment)
    found = [(key, entry) for key, entry in catalog.simulated.deployments.items() if entry.match == wanted]
    if wanted is None or not found:
        return None
    key, entry = found[0]
    runs = entry.runs

    def run(name: str) -> dict[str, Any]:
        return _run(runs[name])

    bounds = ", ".join(f"{role} {low}..{high}" for role, (low, high) in entry.bounds.items())
    return {
        "basis": f"simulated: {catalog.simulated.tool}, configs/simulated.yaml {key}",
        "scaling": ("what if it were autoscaled: " if entry.what_if else "") + bounds,
        "sla": entry.sla,
        "startDelayMinutes": entry.start_delay_minutes,
        # The highest rate the peak size serves within the SLA (found by replay, from the modelled rate)
        "servesPerSecond": entry.capacity.requests_per_second,
        "modelledRate": entry.capacity.modelled_rate,
        "day": {name: run(f"day/{name}") for name in DAY_RUNS if f"day/{name}" in runs},
        "steady": {name: run(f"steady/{name}") for name in ("static", "planner", "oracle")},
        "sharedPrefixes": {name: run(f"shared/{name}") for name in ("kv", "round-robin")},
    }


def _run(run: SimulatedRun) -> dict[str, Any]:
    return {
        "withinSla": round(100 * run.within_sla / run.requests, 1) if run.requests else None,
        "ttftP50Ms": run.ttft_p50_ms,
        "ttftP99Ms": run.ttft_p99_ms,
        "itlP50Ms": run.itl_p50_ms,
        "itlP99Ms": run.itl_p99_ms,
        "gpuHours": run.gpu_hours,
        "usd": run.usd,
        "scalingEvents": run.scaling_events,
    }


def change(value: float, against: float) -> str:
    """`value` against `against` in words: "30% less", "12% more", or "" when they round to the same."""
    percent = round(100 * (value / against - 1))
    return "" if percent == 0 else f"{abs(percent)}% {'more' if percent > 0 else 'less'}"


def kept(static: float | None, planner: float | None, delayed: float | None) -> str:
    """How much of the Planner's saving against static (GPU-hours) survives its new workers' start delay, in
    words; "" when there is no saving to keep."""
    if static is None or planner is None or delayed is None or planner >= static:
        return ""
    return f" (keeps {100 * (static - delayed) / (static - planner):.0f}% of the Planner's saving)"
