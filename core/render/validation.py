"""Check rendered objects against their real consumers before anything is deployed.

- DynamoGraphDeployment: the openAPIV3Schema of its apiVersion in the CRD of the pinned Dynamo
  release (configs/dynamo/<version>/crds/, the CRD the program installs), with unknown fields
  rejected: the API server prunes unknown fields silently, so a misplaced key would otherwise
  vanish without an error.
- Every other object: kubernetes-validate --strict against the cluster's Kubernetes version.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema
import kubernetes_validate

from core.dynamo import DynamoVersion

DGD_KIND = "DynamoGraphDeployment"


def object_problems(manifest: dict[str, Any], kubernetes_version: str, dynamo: DynamoVersion) -> list[str]:
    """Schema errors of one object, as `<path>: <message>` lines ([] when valid)."""
    if manifest["kind"] == DGD_KIND:
        version = manifest["apiVersion"].split("/")[1]
        return [
            f"{_path(error)}: {error.message} (Dynamo {dynamo.version} CRD)"
            for error in _dgd_validator(dynamo, version).iter_errors(manifest)
        ]
    try:
        kubernetes_validate.validate(manifest, f"{kubernetes_version}.0", strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(str(p) for p in error.path)}: {error.message} (Kubernetes {kubernetes_version})"]
    return []


def dgd_schema(dynamo: DynamoVersion, version: str) -> dict[str, Any]:
    """The schema of `version` (e.g. v1alpha1) in the release's DGD CRD, closed to unknown fields."""
    served = next(v for v in dynamo.crd(DGD_KIND)["spec"]["versions"] if v["name"] == version)
    return _closed(served["schema"]["openAPIV3Schema"])


@cache
def _dgd_validator(dynamo: DynamoVersion, version: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(dgd_schema(dynamo, version))


def _closed(node: Any) -> Any:
    """Reject properties a schema object does not declare, as a strict API server would."""
    if isinstance(node, dict):
        closable = (
            node.get("type") == "object"
            and "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        )
        node = {key: _closed(value) for key, value in node.items()}
        if closable:
            node["additionalProperties"] = False
    elif isinstance(node, list):
        node = [_closed(item) for item in node]
    return node


def _path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(object)"
