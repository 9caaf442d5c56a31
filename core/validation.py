"""Check rendered objects against their real consumers before anything is deployed.

- DynamoGraphDeployment: the CRD's v1alpha1 openAPIV3Schema from Dynamo v1.0.0 (the oldest
  release we support) and from Dynamo main (configs/schemas/dynamo/*/, see SOURCES.md), with
  unknown fields rejected: the API server prunes unknown fields silently, so a misplaced key
  would otherwise vanish without an error.
- Every other object: kubernetes-validate --strict against the cluster's Kubernetes version.
"""

from __future__ import annotations

import gzip
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml

from core.catalog import CONFIG_DIR

DGD_CRD_FILE = "nvidia.com_dynamographdeployments.yaml.gz"
DGD_SCHEMA_RELEASES = ("v1.0.0", "main")


def object_problems(manifest: dict[str, Any], kubernetes_version: str) -> list[str]:
    """Schema errors of one object, as `<path>: <message>` lines ([] when valid)."""
    if manifest["kind"] == "DynamoGraphDeployment":
        return [
            f"{_path(error)}: {error.message} (Dynamo {release} CRD)"
            for release in DGD_SCHEMA_RELEASES
            for error in _dgd_validator(release).iter_errors(manifest)
        ]
    try:
        kubernetes_validate.validate(manifest, f"{kubernetes_version}.0", strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(str(p) for p in error.path)}: {error.message} (Kubernetes {kubernetes_version})"]
    return []


def dgd_schema(release: str, config_dir: Path = CONFIG_DIR) -> dict[str, Any]:
    """The v1alpha1 schema of the DGD CRD at `release`, closed to unknown fields."""
    path = config_dir / "schemas" / "dynamo" / release / DGD_CRD_FILE
    with gzip.open(path) as stream:
        crd = yaml.load(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")
    return _closed(version["schema"]["openAPIV3Schema"])


@cache
def _dgd_validator(release: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(dgd_schema(release))


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
