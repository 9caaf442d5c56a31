"""Plain-dict helpers shared by the core."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
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


def leaves(path: str, value: Any) -> Iterator[tuple[str, Any]]:
    """(path, value) of every scalar under `value`, paths as a config key spells them: a.b[0].c."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(f"{path}.{key}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(f"{path}[{index}]", item)
    else:
        yield path, value


def snake_to_camel(name: str) -> str:
    """http_put_response_hop_limit -> httpPutResponseHopLimit: how the Pulumi SDKs name a property.
    Anything without '_' (gpt-oss, vpcId) stays as written, unlike pydantic's to_camel."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def camel_to_snake(name: str) -> str:
    """ngcApiKey -> ngc_api_key: snake_to_camel undone, how a Python argument is named."""
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in name)


def renamed_words(text: str, renames: dict[str, str], *, after_dots: bool) -> str:
    """`text` with each key of `renames` that stands as a whole word in it replaced by its value. With
    `after_dots`, a word that ends a dotted path is one too (endpoint.certificate_arn); without, a dotted path
    is left as it is (nodePools.gpu.capacityType stays, capacityType alone is renamed)."""
    if not renames:
        return text
    before = r"(?<![\w])" if after_dots else r"(?<![\w.])"
    words = "|".join(map(re.escape, sorted(renames, key=len, reverse=True)))  # the longest of overlapping keys
    return re.sub(rf"{before}({words})(?![\w])", lambda match: renames[match.group(1)], text)
