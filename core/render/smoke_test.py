"""`pulumi up` ends when serving works: the graph's readiness await and the smoke-test Job.

- Every DynamoGraphDeployment carries `pulumi.com/waitFor: condition=Ready` [pk8s-await]: the
  provider waits for the operator's Ready condition (set when all of the graph's resources are
  ready), and the condition check is generation-aware, so an update waits for the new spec too.
  `pulumi.com/timeoutSeconds` bounds the wait (deployments.<name>.readyTimeoutMinutes).
- Then a Job sends one chat completion through the frontend (configs/scripts/smoke_test.py).
  pulumi-kubernetes fails the update when a Job fails, with its pods' termination messages in
  the error; the script writes its reason there (`FallbackToLogsOnError` adds the log tail).
  The Job's name carries a digest of the graph, so any change to the graph is tested again, and
  `pulumi.com/replaceUnready` runs a failed one again at the next `up`.
- A graph whose nodes do not exist yet (a Capacity Block that has not started) is created without
  waiting, and gets its smoke test at the first `pulumi up` after the nodes arrive.

  [pk8s-await] https://www.pulumi.com/docs/iac/clouds/kubernetes/guides/await-logic/ (pulumi-kubernetes
               4.18+: pulumi.com/waitFor, pulumi.com/skipAwait, pulumi.com/timeoutSeconds)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from core.inputs.catalog import SmokeTestSettings
from core.inputs.config import Release
from core.render.labels import DEPLOYMENT_LABEL, REPLACE_UNREADY, SYSTEM_POOL_AFFINITY, common_labels
from core.render.manifests import FRONTEND_PORT, frontend_service_name
from core.render.scripts import SCRIPT_VOLUME_MOUNT, Script, ScriptedJob, script_volume

SCRIPT = "smoke_test.py"  # configs/scripts/
WAIT_FOR_READY = "condition=Ready"
# The script gives up (and says why) at its deadline; the Job's deadline leaves room to schedule
# the pod and pull its image first, and Pulumi's await outlasts both, so the reason always arrives.
JOB_START_MARGIN_SECONDS = 180
AWAIT_MARGIN_SECONDS = 60


def readiness_annotations(ready_timeout_minutes: int) -> dict[str, str]:
    return {"pulumi.com/waitFor": WAIT_FOR_READY, "pulumi.com/timeoutSeconds": str(ready_timeout_minutes * 60)}


NOT_AWAITED = {"pulumi.com/skipAwait": "true"}


def smoke_test(
    graph: dict[str, Any], release: Release, settings: SmokeTestSettings, script: Script, simulated: bool = False
) -> ScriptedJob:
    """The Job; `simulated`: the graph's engine is simulated (the mocker), so tokens without text pass."""
    deployment = graph["metadata"]["name"]
    namespace = graph["metadata"]["namespace"]
    digest = hashlib.sha256(json.dumps(graph, sort_keys=True).encode()).hexdigest()[:8]
    labels = common_labels("smoke-test") | {DEPLOYMENT_LABEL: deployment}
    script_map = script.config_map(f"{deployment}-smoke-test", namespace, labels)
    env = {
        "ENDPOINT": f"{frontend_service_name(deployment)}:{FRONTEND_PORT}",
        "MODEL": release.model,
        "MAX_TOKENS": str(settings.max_tokens),
        "DEADLINE_SECONDS": str(settings.deadline_seconds),
        "PYTHONUNBUFFERED": "1",
    } | ({"SIMULATED": "1"} if simulated else {})
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{deployment}-smoke-{digest}",
            "namespace": namespace,
            "labels": labels,
            "annotations": REPLACE_UNREADY
            | {
                "pulumi.com/timeoutSeconds": str(
                    settings.deadline_seconds + JOB_START_MARGIN_SECONDS + AWAIT_MARGIN_SECONDS
                ),
                "gpt-oss-infra/graph-sha256": digest,
            },
        },
        "spec": {
            "backoffLimit": settings.backoff_limit,
            "activeDeadlineSeconds": settings.deadline_seconds + JOB_START_MARGIN_SECONDS,
            "template": {
                "metadata": {"labels": labels, "annotations": script.pod_annotations()},
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": SYSTEM_POOL_AFFINITY,
                    "automountServiceAccountToken": False,  # it talks to the frontend only
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "smoke-test",
                            "image": settings.image,
                            "command": ["python3", script.path],
                            "env": [{"name": name, "value": value} for name, value in env.items()],
                            "resources": settings.resources,
                            "terminationMessagePolicy": "FallbackToLogsOnError",
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [SCRIPT_VOLUME_MOUNT],
                        }
                    ],
                    "volumes": [script_volume(script_map)],
                },
            },
        },
    }
    return ScriptedJob(script=script_map, job=job)
