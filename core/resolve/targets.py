"""An autoscaled deployment's latency targets against the fastest its workers answer: one request alone
at the recipe's point (AIConfigurator's `alone` figures in configs/estimates.yaml, else the timing tables
modelled for the recipe's workers at their lightest load, configs/mocker-timing/). A target below that is
one no number of workers meets: the Planner would scale to its maximum and stay there."""

from __future__ import annotations

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX
from gpt_oss_infra.core.resolve import modelled
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment


def target_problems(deployment: ResolvedDeployment, catalog: Catalog) -> list[Problem]:
    autoscaling = deployment.config.autoscaling
    if autoscaling is None:
        return []
    floor = _floor(deployment, catalog)
    if floor is None:  # nothing modelled: the drain's sizing refuses it (core/resolve/drain.py)
        return []
    ttft, itl, basis = floor
    key = f"{KEY_PREFIX}deployments.{deployment.name}.autoscaling"
    traffic = deployment.recipe.traffic
    return [
        Problem(
            f"{key}.{field}",
            f"{target:g} ms is below the {what} of one request alone on these workers, {fastest:g} ms "
            f"({basis}, {traffic.input_tokens} in / {traffic.output_tokens} out): no number of workers meets it",
        )
        for field, target, fastest, what in (
            ("ttftMs", autoscaling.ttft_ms, ttft, "time to first token"),
            ("itlMs", autoscaling.itl_ms, itl, "time per output token"),
        )
        if target < fastest
    ]


def _floor(deployment: ResolvedDeployment, catalog: Catalog) -> tuple[float, float, str] | None:
    point, _ = modelled.modelled_point(catalog, deployment)
    if point is not None and point.alone is not None:
        return point.alone.ttft_ms, point.alone.tpot_ms, f"modelled: {catalog.estimates.tool}, batch of one"
    found = modelled.timing_tables_for(catalog, deployment)
    if found is None:
        return None
    profile, tables = found
    ttft, itl = modelled.table_pace(tables, deployment.recipe.traffic, 1)
    return ttft, itl, f"modelled: {tables['modelledBy']['tool']} timing tables (configs/mocker-timing/{profile}.yaml)"
