"""Scripts the program's Jobs run: files in jobs/, each mounted from its own ConfigMap.

A script lives in a file, where a reader and a linter (shellcheck, in the tests) see it whole.
The Job's pod template carries the script's digest: a changed script changes the Job's template,
which Kubernetes does not let change in place, so Pulumi replaces the Job and the new script runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

SCRIPT_MOUNT = "/scripts"
SCRIPT_VOLUME = "script"
SCRIPT_DIGEST = "gpt-oss-infra/script-sha256"
SCRIPT_VOLUME_MOUNT = {"name": SCRIPT_VOLUME, "mountPath": SCRIPT_MOUNT, "readOnly": True}
# For a script that reads the Kubernetes API: the ServiceAccount's token (bound, an hour) and the
# cluster's CA, which the API's certificate is checked against, as files (a pod mounts no token otherwise).
API_TOKEN_VOLUME = {
    "name": "api-token",
    "projected": {
        "sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        ]
    },
}


@dataclass(frozen=True)
class Script:
    file_name: str  # under jobs/, and under SCRIPT_MOUNT in the container
    text: str

    @property
    def path(self) -> str:
        return f"{SCRIPT_MOUNT}/{self.file_name}"

    def config_map(self, name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "data": {self.file_name: self.text},
        }

    def pod_annotations(self) -> dict[str, str]:
        return {SCRIPT_DIGEST: hashlib.sha256(self.text.encode()).hexdigest()}


@dataclass(frozen=True)
class ScriptedJob:
    """A Job and the ConfigMap that holds its script (which must exist before the pod starts)."""

    script: dict[str, Any]  # the ConfigMap
    job: dict[str, Any]
    # What its pod reads the Kubernetes API with, made before it: ServiceAccount, Role, RoleBinding.
    access: list[dict[str, Any]] = field(default_factory=list)

    def objects(self) -> list[dict[str, Any]]:
        return [*self.access, self.script, self.job]


def script_volume(script_map: dict[str, Any]) -> dict[str, Any]:
    """The pod volume of a script's ConfigMap; containers mount it with SCRIPT_VOLUME_MOUNT."""
    return {"name": SCRIPT_VOLUME, "configMap": {"name": script_map["metadata"]["name"]}}
