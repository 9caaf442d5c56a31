"""How long a worker the Planner scales down may take to stop, so that it finishes every request it holds.

What Dynamo 1.6.1's TensorRT-LLM worker does on SIGTERM (dynamo/common/utils/graceful_shutdown.py, wired
by dynamo/trtllm/main.py): it unregisters its endpoints from discovery, so the router sends it nothing
new; sleeps DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS (default 5 s), while the requests it holds go on; a
prefill worker then waits for its KV transfers (at most 30 s); then it sets its shutdown event, which
aborts every generation still running (handler_base.py: "Engine was shut down during generation").
Kubernetes kills the pod at its terminationGracePeriodSeconds (Dynamo's operator sets 60 s).

So a scaled worker gets a grace period as long as the longest request its engine admits (max_seq_len,
or the model's context) at the recipe's modelled time per output token, and its pod that grace, the
prefill drain's 30 s and a margin of ours for the engine and runtime to stop. Every scale-down then holds
the worker's GPUs that long: the price of dropping nothing.
"""

from __future__ import annotations

import math

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX
from gpt_oss_infra.core.resolve import modelled
from gpt_oss_infra.core.resolve.autoscaling import Drain
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment

GRACE_PERIOD_VARIABLE = "DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS"  # graceful_shutdown.py's _GRACE_PERIOD_ENV
PREFILL_DRAIN_SECONDS = 30  # dynamo/trtllm/main.py _DRAIN_TIMEOUT_S: a prefill worker's KV transfers
STOP_MARGIN_SECONDS = 30  # ours, not a published figure: the engine and the runtime stopping after the event


def drain(deployment: ResolvedDeployment, catalog: Catalog) -> tuple[Drain | None, list[Problem]]:
    """A scaled deployment's drain, from its modelled point; None without autoscaling, or refused where no
    modelled time per token sizes it."""
    if deployment.config.autoscaling is None:
        return None, []
    found, why_not = modelled.pace(catalog, deployment)
    if found is None:
        return None, [
            Problem(
                f"{KEY_PREFIX}deployments.{deployment.name}.autoscaling",
                "a worker the Planner stops must have time to finish its longest request, sized at the recipe's "
                f"modelled time per output token, and this deployment has none ({why_not})",
            )
        ]
    ttft_ms, tpot_ms, basis = found
    context = catalog.model.max_position_embeddings
    longest = max(
        deployment.backend.view(worker.engine).max_seq_len or context
        for worker in deployment.workers
        if worker.scaling is not None
    )
    request_seconds = math.ceil((ttft_ms + longest * tpot_ms) / 1000)
    return Drain(
        longest_tokens=longest,
        tpot_ms=tpot_ms,
        ttft_ms=ttft_ms,
        request_seconds=request_seconds,
        grace_seconds=request_seconds + PREFILL_DRAIN_SECONDS + STOP_MARGIN_SECONDS,
        basis=basis,
    ), []
