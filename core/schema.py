"""Shared pydantic plumbing: strict camelCase models and errors that name the exact key."""

from __future__ import annotations

import difflib
import re
import types
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, ValidationInfo, model_validator
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from gpt_oss_infra.core.errors import ConfigError, Problem

# RFC 1123 label: what Kubernetes accepts as a namespace, a Service name or a label value.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


# The validation context of a public block's arguments: each key is its field's Python name, not its
# stack-file (camelCase) key, so that a problem names the argument as the caller wrote it.
ARGUMENTS = "arguments"


class StrictModel(BaseModel):
    """Unknown keys are refused with the list of keys that are allowed at that place, and the
    closest of them where one is close."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict):
            by_name = bool(info.context and info.context.get(ARGUMENTS))
            allowed = sorted(name if by_name else field.alias or name for name, field in cls.model_fields.items())
            unknown = sorted(set(data) - set(allowed), key=str)
            if unknown:
                closest = closest_name(str(unknown[0]), allowed)
                raise PydanticCustomError(
                    "unknown_key",
                    "unknown key; allowed keys here: {allowed}{hint}",
                    {
                        "key": unknown[0],
                        "allowed": ", ".join(allowed),
                        "hint": f"; did you mean {closest!r}?" if closest else "",
                    },
                )
        return data


Model = TypeVar("Model", bound=BaseModel)


def from_arguments(model: type[Model], arguments: dict[str, Any]) -> Model:
    """`model` from a block's arguments, named as its fields: ConfigError naming each bad one as given."""
    try:
        return model.model_validate(arguments, by_alias=False, by_name=True, context={ARGUMENTS: True})
    except ValidationError as error:
        raise ConfigError(problems_from(error, "", model)) from None


def field_argument(model: type[BaseModel], field: str, argument: str, value: Any) -> Any:
    """`value` checked as the field `field` of `model` (its type, constraints and validators: the key is
    defined there), where a block takes it as the argument `argument`: ConfigError naming that argument."""
    try:
        checked = model.model_fields[field]
        annotation: Any = Annotated[(checked.annotation, *checked.metadata)] if checked.metadata else checked.annotation
        return TypeAdapter(annotation).validate_python(value)
    except ValidationError as error:
        # A problem inside the value (a mapping's entry) is under the argument and its path: node_selector.zone.
        within = problems_from(error, "", model)
        raise ConfigError([Problem(f"{argument}.{p.key}" if p.key else argument, p.message) for p in within]) from None


def closest_name(name: str, names: list[str] | tuple[str, ...] | set[str] | dict[str, Any]) -> str | None:
    """The one of `names` that `name` most likely misspells, or None: the same name but for case and
    '-'/'_' (node_selector: nodeSelector), else difflib's closest at its usual cutoff (0.6)."""

    def folded(text: str) -> str:
        return re.sub(r"[-_]", "", text.lower())

    by_folded = {folded(candidate): candidate for candidate in sorted(names)}
    if folded(name) in by_folded:
        return by_folded[folded(name)]
    close = difflib.get_close_matches(folded(name), list(by_folded), n=1)
    return by_folded[close[0]] if close else None


def problems_from(error: ValidationError, key_prefix: str, model: type[BaseModel] | None = None) -> list[Problem]:
    """Turn pydantic errors into Problems keyed like `gpt-oss-infra:deployments.gpt-oss.gpus`.

    `key_prefix` is joined to the first path element: "gpt-oss-infra:" for stack config,
    "configs/recipes/x.yaml: " for catalog files. `model`: the model validated, whose fields'
    descriptions say what a number out of its bounds is (else the bound alone).
    """
    problems = []
    for err in error.errors(include_url=False):
        loc = [str(part) for part in err["loc"]]
        if err["type"] == "unknown_key":
            loc.append(str(err["ctx"]["key"]))
        if loc[-1:] == ["[key]"]:  # a bad mapping key: the key itself is the culprit
            loc.pop()
        field = field_at(model, err["loc"]) if model is not None else None
        problems.append(Problem(key_prefix + ".".join(loc), _message(err, field)))
    return problems


# pydantic's bound errors -> the context key of the bound and how a user reads it.
_BOUNDS = {
    "greater_than": ("gt", "more than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}


def _message(err: ErrorDetails, field: FieldInfo | None = None) -> str:
    kind = err["type"]
    if kind == "missing":
        return "required key is missing"
    if kind in _BOUNDS:
        return _bound_message(err, field.description if field else None)
    message = err["msg"].removeprefix("Value error, ")
    if kind == "literal_error" and isinstance(err.get("input"), str):
        allowed = re.findall(r"'([^']*)'", err["ctx"]["expected"])
        closest = closest_name(err["input"], allowed) if allowed else None
        return f"{message} (got {err['input']!r}; did you mean {closest!r}?)" if closest else message
    if kind == "union_tag_invalid":
        allowed = re.findall(r"'([^']*)'", err["ctx"]["expected_tags"])
        closest = closest_name(str(err["ctx"]["tag"]), allowed)
        return f"{message}; did you mean {closest!r}?" if closest else message
    return message


def _bound_message(err: ErrorDetails, what: str | None) -> str:
    """'Input should be greater than 0' -> 'must be at least 1 (got 0): the GPUs each worker gets': the
    limit in words, the value given, and what the key is for (its field's description)."""
    bound_key, words = _BOUNDS[err["type"]]
    bound, value = err["ctx"][bound_key], err.get("input")
    whole = isinstance(bound, int) and not isinstance(bound, bool)  # an int field's bound: ints only
    if whole and bound_key in ("gt", "lt"):  # a whole number more than 0 is at least 1
        words, bound = ("at least", bound + 1) if bound_key == "gt" else ("at most", bound - 1)
    got = f" (got {value!r})" if isinstance(value, str) else f" (got {_number(value)})" if value is not None else ""
    return f"must be {words} {_number(bound)}{got}" + (f": {what}" if what else "")


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def field_at(model: type[BaseModel], loc: tuple[int | str, ...] | list[int | str]) -> FieldInfo | None:
    """The field an error's location ends at, through nested models, mappings, lists and tagged
    unions (pydantic puts the tag in the path: cluster.eks.name); None where the path ends elsewhere
    (a mapping's value, a list item) or goes where this cannot follow."""
    annotation: Any = model
    field = None
    for part in loc:
        annotation = _unwrapped(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = next((f for name, f in annotation.model_fields.items() if part in (name, f.alias)), None)
            if field is None:
                return None
            annotation = field.annotation
            continue
        field = None
        origin = get_origin(annotation)
        if origin is dict:
            annotation = get_args(annotation)[1]
        elif origin is list:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            tagged = [member for member in get_args(annotation) if part in _tags(member)]
            if len(tagged) != 1:
                return None
            annotation = tagged[0]
        else:
            return None
    return field


def _unwrapped(annotation: Any) -> Any:
    """Annotated[X, ...] -> X; X | None -> X."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
            continue
        if get_origin(annotation) in (Union, types.UnionType):
            members = [member for member in get_args(annotation) if member is not type(None)]
            if len(members) == 1:
                annotation = members[0]
                continue
        return annotation


def _tags(member: Any) -> tuple[Any, ...]:
    """The values of a tagged union member's `kind` (its discriminator)."""
    if not (isinstance(member, type) and issubclass(member, BaseModel)) or "kind" not in member.model_fields:
        return ()
    kind = _unwrapped(member.model_fields["kind"].annotation)
    return get_args(kind) if get_origin(kind) is Literal else ()
