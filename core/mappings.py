"""Plain-dict helpers shared by the core."""

from __future__ import annotations

import copy
from typing import Any


def deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """A new dict: `update` merged into `base`, nested mappings merged key by key."""
    merged = copy.deepcopy(base)
    for name, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(name), dict):
            merged[name] = deep_merge(merged[name], value)
        else:
            merged[name] = copy.deepcopy(value)
    return merged


def value_at(values: dict[str, Any], path: str) -> Any:
    """The value at a dotted path ("a.b.c"), or None where the path ends early."""
    value: Any = values
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
