"""Helpers shared by components that create Kubernetes objects from `core.manifests` dicts."""

from __future__ import annotations

import re
from typing import Any


def resource_args(manifest: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of a typed pulumi-kubernetes resource for a manifest dict.

    apiVersion/kind are implied by the resource class; top-level keys become snake_case
    (stringData -> string_data). Nested dicts keep Kubernetes' camelCase names, which the SDK
    passes through unchanged.
    """
    return {
        re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value
        for key, value in manifest.items()
        if key not in ("apiVersion", "kind")
    }


def substitute(manifest: Any, values: dict[str, Any]) -> Any:
    """A copy of `manifest` with every string equal to a key of `values` replaced by its value
    (e.g. core.model_cache.FILE_SYSTEM_ID -> the file system's id Output)."""
    if isinstance(manifest, dict):
        return {key: substitute(value, values) for key, value in manifest.items()}
    if isinstance(manifest, list):
        return [substitute(item, values) for item in manifest]
    if isinstance(manifest, str) and manifest in values:
        return values[manifest]
    return manifest
