"""Helpers shared by components that create Kubernetes objects from the core's manifest dicts."""

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
