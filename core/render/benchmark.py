"""The opt-in benchmark: an aiperf Job against a deployment's frontend.

Concurrency is per-GPU concurrency x the deployment's real GPU count (all workers, all replicas):
the perf Job of Dynamo's gpt-oss-120b recipe ([dynamo-recipe-gptoss], SOURCES.md) multiplies by 6 GPUs
for a 5-GPU topology; this one counts. A recipe without GPUs (the trial's) gives it per replica.
"""

from __future__ import annotations

import hashlib
import json

from gpt_oss_infra.core.inputs.catalog import BenchmarkSettings
from gpt_oss_infra.core.inputs.config import Release
from gpt_oss_infra.core.render.labels import DEPLOYMENT_LABEL
from gpt_oss_infra.core.render.manifests import (
    FRONTEND_PORT,
    MODEL_CACHE_MOUNT,
    frontend_service_name,
    model_snapshot_path,
)
from gpt_oss_infra.core.render.model_cache import cache_job
from gpt_oss_infra.core.render.scripts import Script, ScriptedJob
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment

SCRIPT = "benchmark.sh"  # jobs/


def benchmark_shape(deployment: ResolvedDeployment) -> dict[str, int]:
    """Input/output tokens and total concurrency: the deployment's choices, else its recipe's."""
    chosen, traffic = deployment.config.benchmark, deployment.recipe.traffic
    return {
        "inputTokens": chosen.input_tokens or traffic.input_tokens,
        "outputTokens": chosen.output_tokens or traffic.output_tokens,
        "concurrency": chosen.concurrency_per_gpu * deployment.total_gpus
        if chosen.concurrency_per_gpu
        else deployment.concurrency,
    }


def benchmark_job(
    deployment: ResolvedDeployment, release: Release, namespace: str, settings: BenchmarkSettings, script: Script
) -> ScriptedJob:
    shape = benchmark_shape(deployment)
    # The settings are in the name: a changed benchmark is a new Job (Jobs are immutable).
    digest = hashlib.sha256(json.dumps([shape, release.model_revision], sort_keys=True).encode()).hexdigest()[:8]
    name = f"{deployment.name}-bench-{digest}"
    env = {
        "AIPERF_VERSION": settings.aiperf,
        "ENDPOINT": f"{frontend_service_name(deployment.name)}:{FRONTEND_PORT}",
        "MODEL": release.model,
        "TOKENIZER": model_snapshot_path(release),
        "ISL": str(shape["inputTokens"]),
        "OSL": str(shape["outputTokens"]),
        "CONCURRENCY": str(shape["concurrency"]),
        "REQUEST_COUNT": str(shape["concurrency"] * settings.requests_per_concurrency),
        "ARTIFACT_DIR": f"{MODEL_CACHE_MOUNT}/perf/{name}",
        "HF_HOME": MODEL_CACHE_MOUNT,
        "PYTHONUNBUFFERED": "1",
    }
    return cache_job(
        name=name,
        namespace=namespace,
        component="benchmark",
        container={
            "name": "aiperf",
            "image": settings.image,
            "env": [{"name": key, "value": value} for key, value in env.items()],
            "resources": settings.resources,
        },
        script=script,
        script_map_name=f"{deployment.name}-benchmark",
        backoff_limit=settings.backoff_limit,
        # `pulumi up` does not wait hours for a benchmark: follow it with kubectl logs -f job/<name>.
        annotations={"pulumi.com/skipAwait": "true"},
        labels={DEPLOYMENT_LABEL: deployment.name},
    )
