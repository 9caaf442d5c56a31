"""`make docs` writes the stack config reference (docs/config.md) from the config models themselves, as
helm-docs writes a chart's values table: every key as a stack file spells it, its type, its default
and its meaning (the field's description), so the page cannot drift from what the program accepts.
A test keeps the page equal to what this writes."""

from __future__ import annotations

import argparse
import re
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from gpt_oss_infra.core.inputs import types as value_types
from gpt_oss_infra.core.inputs.config import (
    SECRET_COMMANDS,
    SECRET_MEANINGS,
    EksClusterConfig,
    ExistingClusterConfig,
    StackConfig,
)
from gpt_oss_infra.tools.generated_blocks import with_block

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "config.md"
BEGIN, END = "<!-- make docs: config reference begin -->", "<!-- make docs: config reference end -->"

# The typed values of core/inputs/types.py, by the name a reader knows them by.
VALUE_NAMES = {
    "DeploymentName": "DNS label, at most 40 characters",
    "DnsLabel": "DNS label",
    "Size": "Kubernetes quantity",
    "Cidr": "CIDR",
    "Retention": "retention (12h, 15d, 2w)",
    "CommitId": "40 hex characters",
    "PinnedImage": "pinned image",
    "KubernetesVersion": 'minor version ("1.36")',
    "RoleArn": "IAM role ARN",
    "SubnetId": "subnet id",
    "AvailabilityZone": "availability zone",
    "ReservationId": "cr- and 17 hex characters",
    "AcmCertificateArn": "ACM certificate ARN",
    "Hostname": "DNS name",
}
# A map's key, as the reference writes it.
MAP_KEYS = {"nodePools": "<pool>", "deployments": "<name>", "clientRateLimits": "<client>"}


def _validators() -> dict[int, str]:
    """Each typed value's validator (the last item of its Annotated metadata) -> its reader's name."""
    named = {}
    for alias, name in VALUE_NAMES.items():
        metadata = getattr(value_types, alias).__metadata__
        named[id(metadata[-1])] = name
    return named


VALIDATORS = _validators()


def rows() -> list[tuple[str, str, str, str]]:
    """(key, type, default, meaning) for every key of the stack config, secrets last."""
    found = list(_model_rows(StackConfig, ""))
    found += [
        (name, "secret", "unset", f"{SECRET_MEANINGS[name]}; set it with `{command}`")
        for name, command in SECRET_COMMANDS.items()
    ]
    return found


def _model_rows(model: type[BaseModel], prefix: str) -> typing.Iterator[tuple[str, str, str, str]]:
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        yield from _field_rows(key, field)


def _field_rows(key: str, field: FieldInfo) -> typing.Iterator[tuple[str, str, str, str]]:
    annotation = _without_none(field.annotation)
    meaning = field.description or ""
    if key == "cluster":  # the tagged union: what every kind has, then each kind's own keys
        yield key, "object", "required", meaning
        yield from _cluster_rows()
        return
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield key, "object", _default(field), meaning or (annotation.__doc__ or "").split("\n")[0]
        yield from _model_rows(annotation, f"{key}.")
        return
    if get_origin(annotation) is dict:
        value_type = _without_none(get_args(annotation)[1])
        if isinstance(value_type, type) and issubclass(value_type, BaseModel):
            placeholder = MAP_KEYS[key.rsplit(".", 1)[-1]]
            bounds = [bound for item in field.metadata if (bound := _bound(item))]
            yield key, _bounded(f"map of `{placeholder}` to object", bounds), _default(field), meaning
            yield from _model_rows(value_type, f"{key}.{placeholder}.")
            return
    yield key, _type_text(annotation, field.metadata), _default(field), meaning


def _cluster_rows() -> typing.Iterator[tuple[str, str, str, str]]:
    kinds = (EksClusterConfig, ExistingClusterConfig)
    shared = [name for name in EksClusterConfig.model_fields if name in ExistingClusterConfig.model_fields]
    yield (
        "cluster.kind",
        " \\| ".join(f"`{_kind(model)}`" for model in kinds),
        "required",
        "; ".join(model.model_fields["kind"].description or "" for model in kinds),
    )
    for name in shared:
        if name != "kind":
            yield from _field_rows(f"cluster.{_key(EksClusterConfig, name)}", EksClusterConfig.model_fields[name])
    for model in kinds:
        for name, field in model.model_fields.items():
            if name not in shared:
                for key, kind, default, meaning in _field_rows(f"cluster.{_key(model, name)}", field):
                    yield key, kind, default, f"*{_kind(model)} only*: {meaning}"


def _kind(model: type[BaseModel]) -> str:
    return get_args(model.model_fields["kind"].annotation)[0]


def _key(model: type[BaseModel], name: str) -> str:
    return model.model_fields[name].alias or name


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def _type_text(annotation: Any, metadata: list[Any]) -> str:
    # A Field inside an Annotated carries its constraints (min_length, ...) in its own metadata.
    metadata = [part for item in metadata for part in (item.metadata if isinstance(item, FieldInfo) else [item])]
    for item in metadata:
        if id(item) in VALIDATORS:
            return VALIDATORS[id(item)]
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        base, *more = get_args(annotation)
        return _type_text(base, [*more, *metadata])
    if origin is Literal:
        return " \\| ".join(f"`{value}`" for value in get_args(annotation))
    bounds = [bound for item in metadata if (bound := _bound(item))]
    if origin is list:
        return _bounded(f"list of {_type_text(get_args(annotation)[0], [])}", bounds)
    if origin is dict:
        key_type, value_type = get_args(annotation)
        return f"map of {_type_text(key_type, [])} to {_type_text(value_type, [])}"
    if annotation is Any:
        return "any"
    base = {bool: "bool", int: "int", float: "number", str: "string"}.get(annotation, str(annotation))
    return _bounded(base, bounds)


def _bounded(text: str, bounds: list[str]) -> str:
    return f"{text} {', '.join(bounds)}" if bounds else text


def _bound(item: Any) -> str | None:
    for kind, attribute, sign in ((Ge, "ge", "≥"), (Gt, "gt", ">"), (Le, "le", "≤"), (Lt, "lt", "<")):
        if isinstance(item, kind):
            return f"{sign} {getattr(item, attribute)}"
    if isinstance(item, MinLen):
        return f"(at least {item.min_length})"
    if isinstance(item, MaxLen):
        return f"(at most {item.max_length})"
    return None


def _default(field: FieldInfo) -> str:
    default = field.default
    if default is PydanticUndefined:
        return "required"
    if default is None:
        return "unset"
    if isinstance(default, BaseModel):
        return "(below)"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    return f"`{default}`"


def table() -> str:
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{key}` | {_cell(kind)} | {default} | {_cell(meaning)} |" for key, kind, default, meaning in rows()]
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Markdown table text: `<name>` placeholders outside code spans escaped, so they are not read as HTML."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else part.replace("<", "&lt;").replace(">", "&gt;") for part in parts)


def page_text(text: str) -> str:
    """The page with its generated block replaced by the models' table."""
    return with_block(text, BEGIN, END, table())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpt_oss_infra config-reference", description=__doc__)
    parser.parse_args(argv)
    PAGE.write_text(page_text(PAGE.read_text()))
    print(f"wrote the stack config reference into {PAGE.relative_to(ROOT)}")
    return 0
