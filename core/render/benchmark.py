"""The opt-in benchmark: an aiperf Job against a deployment's frontend.

Concurrency is per-GPU concurrency x the deployment's real GPU count (all workers, all replicas):
seed 004's perf Job multiplied by 6 GPUs for a 5-GPU topology; this one counts.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from core.inputs.catalog import BenchmarkSettings
from core.inputs.config import Release
from core.render.labels import DEPLOYMENT_LABEL
from core.render.manifests import FRONTEND_PORT, MODEL_CACHE_MOUNT, frontend_service_name, model_snapshot_path
from core.render.model_cache import cache_job
from core.resolve.recipes import ResolvedDeployment

_SCRIPT = """set -eu
pip install --no-cache-dir --quiet "aiperf==${AIPERF_VERSION}"
python3 - <<'PY'
import json, os, time, urllib.request
url = f"http://{os.environ['ENDPOINT']}/v1/models"
while True:  # the frontend lists the model once a worker has registered it
    try:
        models = json.load(urllib.request.urlopen(url, timeout=10))
        if any(m.get("id") == os.environ["MODEL"] for m in models.get("data", [])):
            break
    except OSError:
        pass
    print("waiting for", os.environ["MODEL"], "at", url, flush=True)
    time.sleep(15)
PY
mkdir -p "${ARTIFACT_DIR}"
aiperf profile --artifact-dir "${ARTIFACT_DIR}" --model "${MODEL}" --tokenizer "${TOKENIZER}" \\
  --endpoint-type chat --endpoint /v1/chat/completions --streaming --url "http://${ENDPOINT}" \\
  --synthetic-input-tokens-mean "${ISL}" --synthetic-input-tokens-stddev 0 \\
  --output-tokens-mean "${OSL}" --output-tokens-stddev 0 \\
  --extra-inputs "max_tokens:${OSL}" --extra-inputs "min_tokens:${OSL}" --extra-inputs ignore_eos:true \\
  --extra-inputs '{"nvext":{"ignore_eos":true}}' \\
  --concurrency "${CONCURRENCY}" --request-count "${REQUEST_COUNT}" --warmup-request-count "${CONCURRENCY}" \\
  --random-seed 100 --ui simple
echo "results kept in ${ARTIFACT_DIR} on the model-cache volume"
"""


def benchmark_shape(deployment: ResolvedDeployment) -> dict[str, int]:
    """Input/output tokens and total concurrency: the deployment's choices, else its recipe's."""
    chosen, traffic = deployment.config.benchmark, deployment.recipe.traffic
    per_gpu = chosen.concurrency_per_gpu or traffic.concurrency_per_gpu
    return {
        "inputTokens": chosen.input_tokens or traffic.input_tokens,
        "outputTokens": chosen.output_tokens or traffic.output_tokens,
        "concurrency": per_gpu * deployment.total_gpus,
    }


def benchmark_job(
    deployment: ResolvedDeployment, release: Release, namespace: str, settings: BenchmarkSettings
) -> dict[str, Any]:
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
            "command": ["sh", "-c", _SCRIPT],
            "env": [{"name": key, "value": value} for key, value in env.items()],
            "resources": settings.resources,
        },
        backoff_limit=settings.backoff_limit,
        # `pulumi up` does not wait hours for a benchmark: follow it with kubectl logs -f job/<name>.
        annotations={"pulumi.com/skipAwait": "true"},
        labels={DEPLOYMENT_LABEL: deployment.name},
    )
