"""`pulumi up` ends when serving works: the graph's readiness await and the smoke-test Job.

- Every DynamoGraphDeployment carries `pulumi.com/waitFor: condition=Ready` [pk8s-await]: the
  provider waits for the operator's Ready condition (set when all of the graph's resources are
  ready), and the condition check is generation-aware, so an update waits for the new spec too.
  `pulumi.com/timeoutSeconds` bounds the wait (deployments.<name>.readyTimeoutMinutes).
- Then a Job sends one chat completion through the frontend (jobs/smoke_test.py) and,
  when the endpoint has a gateway, through its front door as a client would: without an API key it
  must get 401, with the key of the first client in apiKeys (read from the API-key Secret) an
  answer. The path is the NLB where the NLB admits the pod (core.render.gateway.front_door): the Job
  reads the NLB's DNS name from the Envoy Service's status, with a Role that lets it get that one
  Service; else the Envoy Service's cluster address, and servingChecks says which.
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

from gpt_oss_infra.core.inputs.catalog import SmokeTestSettings
from gpt_oss_infra.core.inputs.config import Release
from gpt_oss_infra.core.render.gateway import FrontDoor, Gateway, api_key_secret_name
from gpt_oss_infra.core.render.labels import DEPLOYMENT_LABEL, REPLACE_UNREADY, SYSTEM_POOL_AFFINITY, common_labels
from gpt_oss_infra.core.render.manifests import FRONTEND_PORT, frontend_service_name
from gpt_oss_infra.core.render.rbac import granted
from gpt_oss_infra.core.render.scripts import (
    API_TOKEN_VOLUME,
    SCRIPT_VOLUME_MOUNT,
    Script,
    ScriptedJob,
    script_volume,
)

SCRIPT = "smoke_test.py"  # jobs/
WAIT_FOR_READY = "condition=Ready"
# The script gives up (and says why) at its deadline; the Job's deadline leaves room to schedule
# the pod and pull its image first, and Pulumi's await outlasts both, so the reason always arrives.
JOB_START_MARGIN_SECONDS = 180
AWAIT_MARGIN_SECONDS = 60


def readiness_annotations(ready_timeout_minutes: int) -> dict[str, str]:
    return {"pulumi.com/waitFor": WAIT_FOR_READY, "pulumi.com/timeoutSeconds": str(ready_timeout_minutes * 60)}


GATEWAY_FILES = "/var/run/smoke-test/gateway"
TOKEN_FILES = "/var/run/smoke-test/serviceaccount"
SERVICES = "services"  # the core API's resource the smoke test's Role lets it get (one of them)
NOT_AWAITED = {"pulumi.com/skipAwait": "true"}


def smoke_test(
    graph: dict[str, Any],
    release: Release,
    settings: SmokeTestSettings,
    script: Script,
    simulated: bool = False,
    front_door: FrontDoor | None = None,
) -> ScriptedJob:
    """The Job; `simulated`: the graph's engine is simulated (the mocker), so tokens without text
    pass; `front_door`: the gateway's, when the endpoint has one."""
    deployment = graph["metadata"]["name"]
    namespace = graph["metadata"]["namespace"]
    digest = hashlib.sha256(json.dumps(graph, sort_keys=True).encode()).hexdigest()[:8]
    labels = common_labels("smoke-test") | {DEPLOYMENT_LABEL: deployment}
    name = f"{deployment}-smoke-test"
    script_map = script.config_map(name, namespace, labels)
    env = {
        "ENDPOINT": f"{frontend_service_name(deployment)}:{FRONTEND_PORT}",
        "MODEL": release.model,
        "MAX_TOKENS": str(settings.max_tokens),
        "DEADLINE_SECONDS": str(settings.deadline_seconds),
        "PYTHONUNBUFFERED": "1",
    } | ({"SIMULATED": "1"} if simulated else {})
    deadline = settings.deadline_seconds
    access: list[dict[str, Any]] = []
    volumes, mounts = [script_volume(script_map)], [SCRIPT_VOLUME_MOUNT]
    if front_door is not None:
        deadline += settings.gateway_deadline_seconds
        env |= _front_door_env(front_door, settings)
        # Files, not environment variables, for the key and the token (which `env` would show).
        volumes.append(
            {
                "name": "api-key",
                "secret": {
                    "secretName": api_key_secret_name(deployment),
                    "items": [{"key": front_door.client, "path": "api-key"}],
                },
            }
        )
        mounts.append({"name": "api-key", "mountPath": GATEWAY_FILES, "readOnly": True})
        if front_door.via_nlb:
            access = service_reader(name, namespace, front_door, labels)
            volumes.append(API_TOKEN_VOLUME)
            mounts.append({"name": "api-token", "mountPath": TOKEN_FILES, "readOnly": True})
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{deployment}-smoke-{digest}",
            "namespace": namespace,
            "labels": labels,
            "annotations": REPLACE_UNREADY
            | {
                "pulumi.com/timeoutSeconds": str(deadline + JOB_START_MARGIN_SECONDS + AWAIT_MARGIN_SECONDS),
                "gpt-oss-infra/graph-sha256": digest,
            },
        },
        "spec": {
            "backoffLimit": settings.backoff_limit,
            "activeDeadlineSeconds": deadline + JOB_START_MARGIN_SECONDS,
            "template": {
                "metadata": {"labels": labels, "annotations": script.pod_annotations()},
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": SYSTEM_POOL_AFFINITY,
                    # No token but API_TOKEN_VOLUME's, where it reads the NLB's address (one Service).
                    "automountServiceAccountToken": False,
                    **({"serviceAccountName": name} if access else {}),
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
                            "env": [{"name": key, "value": value} for key, value in env.items()],
                            "resources": settings.resources,
                            "terminationMessagePolicy": "FallbackToLogsOnError",
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": mounts,
                        }
                    ],
                    "volumes": volumes,
                },
            },
        },
    }
    return ScriptedJob(script=script_map, job=job, access=access)


def proven(deployment: str, front: Gateway | None) -> str:
    """What a passed smoke test proved, for servingChecks."""
    frontend = f"answered a chat completion through {frontend_service_name(deployment)}"
    if front is None:
        return frontend
    door = front.front_door
    return f"{frontend}, then through the gateway, {door.path}: 401 without an API key, an answer with {door.client}'s"


def _front_door_env(door: FrontDoor, settings: SmokeTestSettings) -> dict[str, str]:
    """Where the script finds the gateway and the client's API key (a file from the Secret)."""
    env = (
        {"GATEWAY_SERVICE": f"{door.namespace}/{door.service}", "SERVICE_ACCOUNT_DIR": TOKEN_FILES}
        if door.via_nlb  # the Service's status holds the NLB's DNS name
        else {"GATEWAY_ADDRESS": f"{door.service}.{door.namespace}.svc.cluster.local"}
    )
    env |= {
        "GATEWAY_PORT": str(door.port),
        "GATEWAY_SCHEME": "https" if door.tls else "http",
        "GATEWAY_DEADLINE_SECONDS": str(settings.gateway_deadline_seconds),
        "API_KEY_FILE": f"{GATEWAY_FILES}/api-key",
    }
    return env | ({"GATEWAY_HOST": door.host} if door.host else {})


def service_reader(name: str, namespace: str, door: FrontDoor, labels: dict[str, str]) -> list[dict[str, Any]]:
    """The smoke test's ServiceAccount, and a Role in the gateway's namespace to get its one Service."""
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
    }
    # In Envoy Gateway's namespace, which every stack shares: named after the Service, unique there.
    role_meta = {"name": f"{door.service}-reader", "namespace": door.namespace, "labels": labels}
    rules = [{"apiGroups": [""], "resources": [SERVICES], "resourceNames": [door.service], "verbs": ["get"]}]
    return [account, *granted("Role", role_meta, rules, name, namespace)]
