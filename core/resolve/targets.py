"""An autoscaled deployment's latency targets against the fastest its workers answer: one request alone
at the recipe's point (AISimulate's `alone` figures in configs/estimates.yaml, else the timing tables
modelled for the recipe's workers at their lightest load, configs/mocker-timing/). A target below that is
one no number of workers meets, for a request of the recipe's shape: the Planner would scale to its
maximum and stay there."""

from __future__ import annotations

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX
from gpt_oss_infra.core.resolve import modelled
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment


def target_problems(deployment: ResolvedDeployment, catalog: Catalog) -> tuple[list[Problem], list[str]]:
    """An ITL target below one request alone is refused: prefix caching and shorter prompts do not speed up
    decoding. A TTFT target below it is warned about only: KV cache hits (the KV router's point) and shorter
    prompts can answer faster than the recipe's prompt from scratch."""
    autoscaling = deployment.config.autoscaling
    floor = modelled.pace(catalog, deployment, alone=True)[0] if autoscaling is not None else None
    if autoscaling is None or floor is None:  # nothing modelled: the drain's sizing refuses it (drain.py)
        return [], []
    ttft, itl, basis = floor
    key = f"{KEY_PREFIX}deployments.{deployment.name}.autoscaling"
    traffic = deployment.recipe.traffic
    alone = f"({basis}, {traffic.input_tokens} in / {traffic.output_tokens} out)"
    problems = [
        Problem(
            f"{key}.itlMs",
            f"{autoscaling.itl_ms:g} ms is below the time per output token of one request alone on these workers, "
            f"{itl:g} ms {alone}: no number of workers meets it",
        )
    ]
    warnings = [
        f"{key}.ttftMs: {autoscaling.ttft_ms:g} ms is below the time to first token of one request alone on "
        f"these workers, {ttft:g} ms {alone}: only KV cache hits or shorter prompts meet it, so the Planner "
        "will likely hold every worker it may"
    ]
    return (problems if autoscaling.itl_ms < itl else []), (warnings if autoscaling.ttft_ms < ttft else [])
