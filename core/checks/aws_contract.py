"""Whether AWS would accept what the program plans: each AWS resource's inputs, turned into the API
requests the Pulumi provider makes (configs/aws-api/mapping.yaml), checked against botocore's
service models, the same JSON models the AWS SDKs are generated from (configs/aws-api/SOURCES.md).
`pulumi preview` and `up` run it on the core's AWS resources (core/render/aws/resources.py) before
anything is registered (aws_refusals); `make plan` on every AWS resource a program registers.

Offline and without credentials: botocore only reads its bundled data files. Checked per request
member: type, enum, string length and pattern, number range, list and map length, required
members (of the request and of every nested structure present), EC2 instance types in members
the model types as plain strings, and the constraints the models state only in prose (the
mapping's `rules`, each quoted from the member's documentation). Not checked: what depends on the
account or on other resources (quotas, whether an id exists, an instance type's availability).
"""

from __future__ import annotations

import difflib
import functools
import html
import itertools
import re
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from botocore.exceptions import UnknownServiceError
from botocore.model import OperationModel, OperationNotFoundError, Shape

from gpt_oss_infra.core.errors import Problem as KeyedProblem
from gpt_oss_infra.core.inputs.aws_values import service_model
from gpt_oss_infra.core.mappings import leaves, snake_to_camel
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.placeholders import SECRET, UNKNOWN
from gpt_oss_infra.core.render.aws.resources import GIVEN, AwsResource, Ref
from gpt_oss_infra.core.yaml_files import read_yaml

MAPPING_FILE = CONFIG_DIR / "aws-api" / "mapping.yaml"

# A required member the provider fills itself (a generated name, the id of what it just created):
# present in the request, but not a value the program chose.
PROVIDED = "[provider]"
# Values that are not known or not shown until `pulumi up`: present, never checked.
NOT_CHECKED = {SECRET, UNKNOWN, PROVIDED}

# A path into inputs or a request: member names, list positions, and ITEM for "any item" ([]).
ITEM = "[]"
PathParts = tuple[str | int, ...]


# --- problems


@dataclass(frozen=True)
class RequestProblem:
    resource: str  # the Pulumi resource name
    input: str  # the Pulumi input path, e.g. networkInterfaces[3].interfaceType
    member: str  # the call and request member, e.g. ec2:CreateLaunchTemplate LaunchTemplateData.InstanceType
    value: Any
    allowed: str  # what the API allows there

    def __str__(self) -> str:
        value = "unset" if self.value is None else repr(self.value)
        return f"{self.resource}: {self.input} -> {self.member} = {value}: the API allows {self.allowed}"


# --- paths


def parse_path(text: str) -> PathParts:
    """Parse "a.b[].c[0]" into ("a", "b", ITEM, "c", 0)."""
    parts: list[str | int] = []
    for segment in text.split("."):
        name, *brackets = segment.split("[")
        if name:
            parts.append(name)
        for bracket in brackets:
            index = bracket.rstrip("]")
            parts.append(int(index) if index else ITEM)
    return tuple(parts)


def render_path(parts: PathParts) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int) or part == ITEM:
            text += ITEM if part == ITEM else f"[{part}]"
        elif re.fullmatch(r"\w+", part):
            text += f".{part}" if text else part
        else:  # a map key such as a label or tag name
            text += f"[{part!r}]"
    return text


def _pattern_of(parts: PathParts) -> PathParts:
    return tuple(ITEM if isinstance(part, int) else part for part in parts)


def _indices(parts: PathParts) -> list[int]:
    return [part for part in parts if isinstance(part, int)]


def _fill(pattern: PathParts, indices: Iterable[int]) -> PathParts:
    """The pattern's ITEMs replaced, in order, by these list positions."""
    remaining = iter(indices)
    return tuple(next(remaining, ITEM) if part == ITEM else part for part in pattern)


# --- the mapping (configs/aws-api/mapping.yaml)


@dataclass(frozen=True)
class Target:
    """Where one Pulumi input goes in a request."""

    to: PathParts
    transform: str | None = None
    when: PathParts | None = None  # the Pulumi input that must be set for this target to apply
    enum_of: str | None = None  # "<service>:<Shape>": an enum of another API the value must be in


@dataclass(frozen=True)
class Supply:
    """What supplies a required member: an input, the provider itself, or an input else the provider."""

    input: PathParts | None
    provider: str | None
    value: Any = PROVIDED


@dataclass(frozen=True)
class Rule:
    """A constraint the model states only in the member's documentation (quoted there)."""

    member: PathParts
    quote: str
    when: dict[PathParts, list[Any]] = field(default_factory=dict)
    allowed: list[Any] | None = None
    multiple_of: int | None = None
    min: int | None = None
    max: int | None = None
    pattern: str | None = None


@dataclass(frozen=True)
class Operation:
    service: str
    name: str
    reference: str
    required: dict[str, Supply]
    members: dict[PathParts, list[Target]]
    rules: list[Rule]
    when: PathParts | None = None  # the Pulumi input that must be set for the provider to make the call
    each: PathParts | None = None  # a Pulumi list input: one call per item

    @property
    def call(self) -> str:
        return f"{self.service}:{self.name}"

    def model(self) -> OperationModel:
        return service_model(self.service).operation_model(self.name)


@dataclass(frozen=True)
class ResourceMapping:
    registry: str
    operations: list[Operation]
    provider_only: dict[PathParts, str]

    def maps(self, input_pattern: PathParts) -> bool:
        return input_pattern in self.provider_only or any(input_pattern in op.members for op in self.operations)

    def maps_under(self, input_pattern: PathParts) -> bool:
        """Whether inputs inside this one are mapped (for a list or structure not known yet)."""
        depth = len(input_pattern)
        return any(source[:depth] == input_pattern for op in self.operations for source in op.members)


@dataclass(frozen=True)
class Mapping:
    resources: dict[str, ResourceMapping]
    not_checked: dict[str, str]

    def covers(self, type_: str) -> bool:
        return type_ in self.resources or type_ in self.not_checked


@functools.cache
def load_mapping(path: Path = MAPPING_FILE) -> Mapping:
    raw = read_yaml(path)
    return Mapping(
        resources={type_: _resource_mapping(entry) for type_, entry in raw["resources"].items()},
        not_checked=dict(raw.get("not_checked") or {}),
    )


def _resource_mapping(entry: dict[str, Any]) -> ResourceMapping:
    return ResourceMapping(
        registry=entry["registry"],
        operations=[_operation(op) for op in entry["operations"]],
        provider_only={parse_path(path): reason for path, reason in (entry.get("provider_only") or {}).items()},
    )


def _operation(entry: dict[str, Any]) -> Operation:
    service, name = entry["call"].split(":")
    return Operation(
        service=service,
        name=name,
        reference=entry["reference"],
        required={
            member: Supply(
                input=parse_path(supply["input"]) if "input" in supply else None,
                provider=supply.get("provider"),
                value=supply.get("value", PROVIDED),
            )
            for member, supply in (entry.get("required") or {}).items()
        },
        members={parse_path(source): _targets(target) for source, target in entry["members"].items()},
        rules=[_rule(rule) for rule in entry.get("rules") or []],
        when=parse_path(entry["when"]) if "when" in entry else None,
        each=parse_path(entry["each"]) if "each" in entry else None,
    )


def _targets(entry: str | dict[str, Any] | list[dict[str, Any]]) -> list[Target]:
    """The short form (a member path), the long form, or a list of long forms."""
    if isinstance(entry, str):
        return [Target(parse_path(entry))]
    entries = entry if isinstance(entry, list) else [entry]
    return [
        Target(
            to=parse_path(item["to"]),
            transform=item.get("transform"),
            when=parse_path(item["when"]) if "when" in item else None,
            enum_of=item.get("enum_of"),
        )
        for item in entries
    ]


def _rule(entry: dict[str, Any]) -> Rule:
    return Rule(
        member=parse_path(entry["member"]),
        quote=entry["quote"],
        when={parse_path(path): values for path, values in (entry.get("when") or {}).items()},
        allowed=entry.get("allowed"),
        multiple_of=entry.get("multiple_of"),
        min=entry.get("min"),
        max=entry.get("max"),
        pattern=entry.get("pattern"),
    )


# --- transforms: where a value's form differs between the Pulumi input and the API member

OMIT = object()  # the provider sends nothing for this value


class Unconvertible(ValueError):
    """The provider cannot turn this value into the member's form; the message says what it takes."""


# Go's strconv.ParseBool, which terraform-provider-aws's nullable bool uses; "" means unset.
_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_GO_BOOLS |= {"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def _bool_string(value: Any) -> Any:
    if value == "":
        return OMIT
    if not isinstance(value, str) or value not in _GO_BOOLS:
        raise Unconvertible('a boolean as a string ("true" or "false"), which the provider parses')
    return _GO_BOOLS[value]


def _key_value_list(value: Any) -> Any:
    if not isinstance(value, dict):
        raise Unconvertible("a map of tag names to values")
    return [{"Key": key, "Value": tag} for key, tag in value.items()]


def _attribute_string(value: Any) -> Any:
    """An attribute map's value: the provider sends numbers and booleans as their strings."""
    if isinstance(value, bool):
        return str(value).lower()
    if not isinstance(value, int | str):
        raise Unconvertible("a number, a boolean or a string")
    return str(value)


def _one_item_list(value: Any) -> Any:
    return [value]


def _unset_when_minus_one(value: Any) -> Any:
    return OMIT if value == -1 else value


# Each use in the mapping says where its difference is documented.
TRANSFORMS: dict[str, Callable[[Any], Any]] = {
    "attribute_string": _attribute_string,
    "bool_string": _bool_string,
    "key_value_list": _key_value_list,
    "one_item_list": _one_item_list,
    "unset_when_minus_one": _unset_when_minus_one,
}


# --- botocore's models


def shape_at(shape: Shape, parts: PathParts) -> Shape | None:
    """The shape of the member at this path (None if there is no such member)."""
    for part in parts:
        if isinstance(part, int) or part == ITEM:
            if shape.type_name != "list":
                return None
            shape = shape.member
        elif shape.type_name == "structure" and part in shape.members:
            shape = shape.members[part]
        elif shape.type_name == "map" and (not shape.key.enum or part in shape.key.enum):
            shape = shape.value  # a map entry (e.g. an SQS queue attribute), its key one the API names
        else:
            return None
    return shape


def documentation(operation: Operation, member: PathParts) -> str:
    """The member's documentation in the model as plain text (tags dropped, spaces collapsed)."""
    shape, text = operation.model().input_shape, ""
    for part in member:
        if isinstance(part, int) or part == ITEM:
            shape = shape.member
        else:
            shape = shape.members[part]
            text = shape.documentation
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


# Botocore's patterns are written for Java's java.util.regex; Python's `re` lacks Unicode
# property classes (\p{L}) and reads a UTF-16 surrogate pair (\uD800\uDC00) as two code points.
_PROPERTY = re.compile(r"\\p\{(\w{1,2})\}")
_SURROGATE_PAIR = re.compile(r"\\u(D[89AB][0-9A-F]{2})\\u(D[C-F][0-9A-F]{2})", re.IGNORECASE)


# Past the last code point: a pattern for any value. ASCII values, almost all, get a pattern whose
# \p{X} classes list only ASCII code points, which takes milliseconds to build instead of a second.
ANY_CODE_POINT = 0x110000
ASCII_ONLY = 0x80


@functools.cache
def compiled_pattern(pattern: str, below: int = ANY_CODE_POINT) -> re.Pattern[str] | str:
    """The pattern for Python's `re`, for values whose code points are all below `below`, or why it
    cannot be compiled (reported, never raised)."""
    translated = _SURROGATE_PAIR.sub(_code_point_of_pair, pattern)
    translated = _with_property_classes(translated, below)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning on Java-style nested sets
            return re.compile(translated)
    except re.error as error:
        return f"{pattern!r} cannot be checked in Python ({error})"


def _code_point_of_pair(match: re.Match[str]) -> str:
    high, low = int(match[1], 16), int(match[2], 16)
    return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08X}"


def _with_property_classes(pattern: str, below: int) -> str:
    """\\p{X} as the code point ranges (below `below`) of Unicode general category X, inside a class or as one."""
    out, in_class, position = [], False, 0
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            prop = _PROPERTY.match(pattern, position)
            ranges = _category_ranges(prop[1], below) if prop else ""
            if prop and ranges:  # else not a general category: left for `re` to refuse
                out.append(ranges if in_class else f"[{ranges}]")
                position = prop.end()
                continue
            out.append(pattern[position : position + 2])
            position += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        out.append(char)
        position += 1
    return "".join(out)


@functools.cache
def _category_ranges(category: str, below: int) -> str:
    """Character-class ranges of every code point below `below` whose general category starts with
    `category` (of every code point, if none below `below` has it: a class must not be empty)."""
    ranges, start, previous = [], None, None
    for code_point in range(below):
        if unicodedata.category(chr(code_point)).startswith(category):
            if start is None:
                start = code_point
            previous = code_point
        elif start is not None:
            ranges.append(f"\\U{start:08X}-\\U{previous:08X}")
            start = None
    if start is not None:
        ranges.append(f"\\U{start:08X}-\\U{previous:08X}")
    if not ranges and below < ANY_CODE_POINT:
        return _category_ranges(category, ANY_CODE_POINT)
    return "".join(ranges)


# --- the core's resources, as the provider registers them


# Inputs whose values are maps of the user's own keys (tags, labels): sent as written, never renamed.
MAP_INPUTS = {"tags", "labels", "final_backup_tags"}


@dataclass(frozen=True)
class PlannedResource:
    """A resource as the provider receives it: its type, name and camelCase inputs."""

    type: str
    name: str
    inputs: dict[str, Any]


def planned(resource: AwsResource, given: dict[str, Any] | None = None) -> PlannedResource:
    """`resource` as `pulumi preview` registers it: inputs in camelCase (the SDK's names), unset ones
    left out, and every value known only at `up` UNKNOWN: a Ref, but for one to a `given` value that is
    plain data already (a block's argument written in the program)."""
    inputs = {
        snake_to_camel(key): _as_sent(key, value, given or {})
        for key, value in resource.inputs.items()
        if value is not None
    }
    return PlannedResource(resource.type, resource.name, inputs)


def _as_sent(key: str, value: Any, given: dict[str, Any]) -> Any:
    if isinstance(value, Ref):
        known = given.get(value.attribute) if value.source == GIVEN and value.then is None else None
        return known if _is_plain(known) else UNKNOWN
    if isinstance(value, dict):
        if key in MAP_INPUTS:
            return {name: _as_sent("", item, given) for name, item in value.items()}
        return {snake_to_camel(name): _as_sent(name, item, given) for name, item in value.items()}
    if isinstance(value, list):
        return [_as_sent(key, item, given) for item in value]
    return value


def _is_plain(value: Any) -> bool:
    """Data as written (no Output, no awaitable): what a check can read before `up`."""
    if isinstance(value, list):
        return all(_is_plain(item) for item in value)
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def aws_refusals(
    resources: list[AwsResource],
    config: dict[str, Any],
    key_prefix: str = "",
    given: dict[str, Any] | None = None,
) -> list[KeyedProblem]:
    """What AWS would refuse in these resources' requests, each under the key of `config` (a stack
    config without its prefix, or a block's arguments) that holds the value when exactly one does,
    else under the resource that sends it. `given`: the values GIVEN Refs name, where known."""
    return refusals([planned(resource, given) for resource in resources], config, key_prefix)


def refusals(resources: Iterable[Any], config: dict[str, Any], key_prefix: str = "") -> list[KeyedProblem]:
    """aws_refusals of resources as registered (.type, .name, .inputs)."""
    return [
        KeyedProblem(
            _key_holding(problem.value, config, key_prefix) or problem.resource, f"AWS would refuse it: {problem}"
        )
        for resource in resources
        for problem in resource_problems(resource)
    ]


def _key_holding(value: Any, config: dict[str, Any], key_prefix: str) -> str | None:
    """The one config key (as a path, e.g. gpt-oss-infra:cluster.logRetentionDays) whose value is
    `value`, if exactly one is."""
    if value is None or isinstance(value, bool):
        return None
    found = [path for key, item in config.items() for path, leaf in leaves(f"{key_prefix}{key}", item) if leaf == value]
    return found[0] if len(found) == 1 else None


# --- checking one resource


class Registered(Protocol):
    """A resource as registered: a PlannedResource, or a registration of the plan's mock engine."""

    @property
    def type(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def inputs(self) -> dict[str, Any]: ...


def resource_problems(resource: Registered, mapping: Mapping | None = None) -> Iterator[RequestProblem]:
    """Every way AWS would refuse the requests this registered resource (.type, .name, .inputs)
    becomes; nothing for a type under the mapping's not_checked."""
    mapping = mapping or load_mapping()
    if resource.type in mapping.not_checked:
        return
    entry = mapping.resources.get(resource.type)
    if entry is None:
        yield RequestProblem(
            resource.name,
            "(all)",
            "(no call)",
            resource.type,
            "only types configs/aws-api/mapping.yaml maps or lists under not_checked",
        )
        return
    leaves = list(_leaves(resource.inputs, (), entry))
    for path, value in leaves:
        if not entry.maps(_pattern_of(path)) and not (_not_checked(value) and entry.maps_under(_pattern_of(path))):
            yield RequestProblem(
                resource.name,
                render_path(path),
                "(no member)",
                value,
                "only inputs configs/aws-api/mapping.yaml maps to a member or lists under provider_only",
            )
    sent = {_pattern_of(path) for path, _ in leaves}
    for operation in entry.operations:
        if operation.when is None or _is_sent(sent, operation.when):
            for request in _requests(operation, leaves, sent):
                yield from _request_problems(resource.name, operation, request)


def _leaves(value: Any, path: PathParts, entry: ResourceMapping) -> Iterator[tuple[PathParts, Any]]:
    """(input path, value) for every value sent as a whole: scalars, and maps or lists that an
    entry maps whole. Null, empty lists and empty maps are not sent (the provider omits them)."""
    if value is None or value == [] or value == {}:
        return
    if path and entry.maps(_pattern_of(path)):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key), entry)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index), entry)
    else:
        yield path, value


def _is_sent(sent: set[PathParts], input_path: PathParts) -> bool:
    """Whether the input at this path (a value, or a structure of them) is sent."""
    return any(pattern[: len(input_path)] == input_path for pattern in sent)


def _get(document: Any, path: PathParts) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(document, list) or part >= len(document):
                return None
        elif not isinstance(document, dict):
            return None
        document = document[part] if isinstance(part, int) else document.get(part)
    return document


@dataclass
class Request:
    """One call's request body, the Pulumi input each member came from, and the values that
    could not be put in the member's form."""

    body: dict[str, Any] = field(default_factory=dict)
    origins: dict[PathParts, PathParts] = field(default_factory=dict)
    problems: list[tuple[PathParts, PathParts, Any, str]] = field(default_factory=list)


# An input value and the list positions its member takes.
Placement = tuple[PathParts, Any, list[int]]


def _requests(operation: Operation, leaves: list[tuple[PathParts, Any]], sent: set[PathParts]) -> Iterator[Request]:
    """One request; for an `each` call, one per item of that list, with the other inputs in each."""
    if operation.each is None:
        yield _request(operation, [(path, value, _indices(path)) for path, value in leaves], sent)
        return
    depth, item_level = len(operation.each), operation.each.count(ITEM) - 1
    shared: list[Placement] = []
    per_item: dict[int, list[Placement]] = {}
    for path, value in leaves:
        indices = _indices(path)
        if _pattern_of(path[:depth]) == operation.each:
            item = indices.pop(item_level)  # a position of the list of calls, not of a member list
            per_item.setdefault(item, []).append((path, value, indices))
        else:
            shared.append((path, value, indices))
    for item in sorted(per_item):
        yield _request(operation, shared + per_item[item], sent)


def _request(operation: Operation, placements: list[Placement], sent: set[PathParts]) -> Request:
    """Each input at its member (the first target whose `when` holds), then the required members
    the provider fills when no input does."""
    request = Request()
    for path, value, indices in placements:
        for target in operation.members.get(_pattern_of(path), []):
            if target.when is None or _is_sent(sent, target.when):
                _place(request, target, path, value, indices)
                break
        else:
            if _not_checked(value):
                _place_not_known(request, operation, path, value, indices)
    for member, supply in operation.required.items():
        from_input = supply.input is not None and _is_sent(sent, supply.input)
        if member not in request.body and not from_input and supply.provider is not None:
            request.body[member] = supply.value
    return request


def _place(request: Request, target: Target, path: PathParts, value: Any, indices: list[int]) -> None:
    member = _fill(target.to, indices)
    if target.transform is not None and not _not_checked(value):
        try:
            value = TRANSFORMS[target.transform](value)
        except Unconvertible as error:
            request.problems.append((member, path, value, str(error)))
            return
        if value is OMIT:
            return
    if target.enum_of is not None and not _not_checked(value):
        service, shape_name = target.enum_of.split(":")
        enum = service_model(service).shape_for(shape_name).enum
        if value not in enum:
            request.problems.append((member, path, value, _enum_text(f"{service} {shape_name}", enum, value)))
    _set(request.body, member, value)
    request.origins[member] = path


def _place_not_known(request: Request, operation: Operation, path: PathParts, value: str, indices: list[int]) -> None:
    """A whole list or structure whose value is not known yet: every member its items would go
    to is present, up to the first list whose length is not known either."""
    pattern = _pattern_of(path)
    for source, targets in operation.members.items():
        if source[: len(pattern)] == pattern:
            for target in targets:
                member = _fill(target.to, indices)
                known = member[: member.index(ITEM)] if ITEM in member else member
                _set(request.body, known, value)
                request.origins[known] = path


def _set(body: dict[str, Any], member: PathParts, value: Any) -> None:
    document: Any = body  # the list or dict the walk is at: an int part is a list position
    for part, next_part in itertools.pairwise(member):
        empty: list[Any] | dict[str, Any] = [] if isinstance(next_part, int) else {}
        if isinstance(part, int):
            document.extend([None] * (part + 1 - len(document)))
            document[part] = document[part] if document[part] is not None else empty
            document = document[part]
        else:
            document = document.setdefault(part, empty)
    last = member[-1]
    if isinstance(last, int):
        document.extend([None] * (last + 1 - len(document)))
    document[last] = value


# --- checking one request


def _request_problems(resource: str, operation: Operation, request: Request) -> Iterator[RequestProblem]:
    def problem(member: PathParts, value: Any, allowed: str) -> RequestProblem:
        return RequestProblem(
            resource,
            _input_for(operation, request, member),
            f"{operation.call} {render_path(member) or '(request)'}",
            value,
            allowed,
        )

    for member, path, value, allowed in request.problems:
        yield RequestProblem(resource, render_path(path), f"{operation.call} {render_path(member)}", value, allowed)
    for member, value, allowed in _shape_problems(operation.model().input_shape, request.body, ()):
        yield problem(member, value, allowed)
    for rule in operation.rules:
        for member, value, allowed in _rule_problems(rule, request.body):
            yield problem(member, value, allowed)


def _input_for(operation: Operation, request: Request, member: PathParts) -> str:
    """The Pulumi input a member came from (or the input whose value holds it); for a container,
    the inputs under it; for a missing member, the input the mapping takes it from."""
    for length in range(len(member), 0, -1):  # the member, or the value it is part of
        if member[:length] in request.origins:
            return render_path(request.origins[member[:length]])
    under = [path for origin, path in request.origins.items() if origin[: len(member)] == member]
    if under:
        return render_path(_common_prefix(under)) or "(request)"
    supply = operation.required.get(member[0]) if len(member) == 1 and isinstance(member[0], str) else None
    if supply is not None and supply.input is not None:
        return render_path(supply.input)
    for source, targets in operation.members.items():
        for target in targets:
            if _pattern_of(target.to) == _pattern_of(member):
                # Where the target has ITEM, a member of its pattern has a list position.
                item_positions = [
                    position
                    for part, position in zip(target.to, member, strict=True)
                    if part == ITEM and isinstance(position, int)
                ]
                return render_path(_fill(source, item_positions))
    return "(no input maps to it)"


def _common_prefix(paths: list[PathParts]) -> PathParts:
    prefix = paths[0]
    for path in paths[1:]:
        length = 0
        while length < min(len(prefix), len(path)) and prefix[length] == path[length]:
            length += 1
        prefix = prefix[:length]
    return prefix


def _not_checked(value: Any) -> bool:
    return isinstance(value, str) and value in NOT_CHECKED


def _shape_problems(shape: Shape, value: Any, member: PathParts) -> Iterator[tuple[PathParts, Any, str]]:
    """(member, value, what the model allows) for each way `value` breaks `shape`."""
    if value is None or _not_checked(value):
        return
    kind = shape.type_name
    expected = _PYTHON_TYPES.get(kind)
    if expected is not None and (not isinstance(value, expected) or (isinstance(value, bool) and kind != "boolean")):
        yield member, value, f"type {kind} ({shape.name})"
        return
    limits = shape.metadata
    if kind == "structure":
        for name in shape.required_members:
            if name not in value:
                yield (*member, name), None, f"{name} set: {shape.name} requires {', '.join(shape.required_members)}"
        for name, item in value.items():
            if name not in shape.members:
                yield (*member, name), item, f"only the members of {shape.name}: {', '.join(shape.members)}"
            else:
                yield from _shape_problems(shape.members[name], item, (*member, name))
    elif kind in ("list", "map"):
        yield from _count_problems(shape, value, member)
        if kind == "list":
            for index, item in enumerate(value):
                yield from _shape_problems(shape.member, item, (*member, index))
        else:
            for key, item in value.items():
                yield from _shape_problems(shape.key, key, (*member, key))
                yield from _shape_problems(shape.value, item, (*member, key))
    elif kind == "string":
        yield from _string_problems(shape, value, member)
    elif kind in _NUMBERS:
        if ("min" in limits and value < limits["min"]) or ("max" in limits and value > limits["max"]):
            yield member, value, f"{shape.name} {_range_text(limits)}"
    elif kind == "timestamp" and not _is_timestamp(value):
        yield member, value, "a timestamp (ISO 8601, e.g. 2030-01-07T11:30:00Z)"


_NUMBERS = ("integer", "long", "float", "double")
_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {
    "structure": dict,
    "map": dict,
    "list": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "long": int,
    "float": (int, float),
    "double": (int, float),
    "timestamp": (str, int, float),  # ISO 8601 text or epoch seconds
    "blob": (str, bytes),
}


def _count_problems(
    shape: Shape, value: list[Any] | dict[str, Any], member: PathParts
) -> Iterator[tuple[PathParts, Any, str]]:
    limits = shape.metadata
    if ("min" in limits and len(value) < limits["min"]) or ("max" in limits and len(value) > limits["max"]):
        unit = "items" if shape.type_name == "list" else "entries"
        yield member, f"{len(value)} {unit}", f"{shape.name} {_range_text(limits)} {unit}"


def _string_problems(shape: Shape, value: str, member: PathParts) -> Iterator[tuple[PathParts, Any, str]]:
    limits = shape.metadata
    if shape.enum and value not in shape.enum:
        yield member, value, _enum_text(shape.name, shape.enum, value)
    if ("min" in limits and len(value) < limits["min"]) or ("max" in limits and len(value) > limits["max"]):
        yield member, value, f"{shape.name} of length {_range_text(limits)} (this one: {len(value)})"
    if "pattern" in limits:
        compiled = compiled_pattern(limits["pattern"], ASCII_ONLY if value.isascii() else ANY_CODE_POINT)
        if isinstance(compiled, str):
            yield member, value, f"{shape.name} matching {compiled}"
        # AWS validates the whole value (Java's String.matches), anchored or not: a log group name
        # with a space fails "[\.\-_/#A-Za-z0-9]+" though a search would find a match in it.
        elif not compiled.fullmatch(value):
            yield member, value, f"{shape.name} matching {limits['pattern']}"


def _range_text(limits: dict[str, Any]) -> str:
    if "min" in limits and "max" in limits:
        return f"from {limits['min']} to {limits['max']}"
    return f"at least {limits['min']}" if "min" in limits else f"at most {limits['max']}"


def _enum_text(name: str, enum: list[str], value: Any) -> str:
    if len(enum) <= 30:
        return f"one of {name}: {', '.join(enum)}"
    closest = difflib.get_close_matches(str(value), enum, n=3)
    return f"one of the {len(enum)} values of {name}" + (f" (closest: {', '.join(closest)})" if closest else "")


def _is_timestamp(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


# --- the documented rules


def _rule_problems(rule: Rule, body: dict[str, Any]) -> Iterator[tuple[PathParts, Any, str]]:
    for member in _expand(body, rule.member):
        value = _get(body, member)
        if _not_checked(value) or not _rule_applies(rule, body, _indices(member)):
            continue
        if not _obeys(rule, value):
            condition = " and ".join(
                f"{render_path(path)} is {' or '.join('unset' if v is None else str(v) for v in values)}"
                for path, values in rule.when.items()
            )
            yield member, value, f"{_rule_text(rule)}{f' when {condition}' if condition else ''} ('{rule.quote}')"


def _expand(body: dict[str, Any], pattern: PathParts) -> Iterator[PathParts]:
    """The concrete paths in `body` that match a pattern with ITEMs."""
    paths: list[PathParts] = [()]
    for part in pattern:
        if part == ITEM:
            paths = [(*path, index) for path in paths for index in range(len(_get(body, path) or []))]
        else:
            paths = [(*path, part) for path in paths]
    yield from (path for path in paths if _get(body, path) is not None)


def _rule_applies(rule: Rule, body: dict[str, Any], indices: list[int]) -> bool:
    for path, values in rule.when.items():
        actual = _get(body, _fill(path, indices))
        if _not_checked(actual) or actual not in values:
            return False
    return True


def _obeys(rule: Rule, value: Any) -> bool:
    if rule.pattern is not None:
        return not isinstance(value, str) or re.fullmatch(rule.pattern, value) is not None
    if rule.allowed is not None and value in rule.allowed:
        return True
    if not isinstance(value, int) or isinstance(value, bool):
        return rule.allowed is None  # a number's rule on a non-number: the type check reports it
    if (rule.min is not None and value < rule.min) or (rule.max is not None and value > rule.max):
        return False
    if rule.multiple_of is not None:
        return value % rule.multiple_of == 0
    return rule.allowed is None


def _rule_text(rule: Rule) -> str:
    if rule.pattern is not None:
        return f"values matching {rule.pattern}"
    choices = [*map(str, rule.allowed or []), *([f"multiples of {rule.multiple_of}"] if rule.multiple_of else [])]
    text = "one of " + ", ".join(choices) if choices else ""
    if rule.min is not None or rule.max is not None:
        limits = {key: limit for key, limit in (("min", rule.min), ("max", rule.max)) if limit is not None}
        text += (" " if text else "") + _range_text(limits)
    return text


# --- the mapping against the models


def mapping_errors(mapping: Mapping) -> list[str]:
    """Every way the mapping disagrees with botocore's models (a typo'd member, a required list
    that is not the API's, a quote the documentation does not contain)."""
    errors = []
    for type_, entry in mapping.resources.items():
        module, name = type_.split(":")[1].split("/")[0], type_.split(":")[2]
        if entry.registry != f"https://www.pulumi.com/registry/packages/aws/api-docs/{module}/{name.lower()}/":
            errors.append(f"{type_}: registry {entry.registry} is not the page of {type_}")
        for operation in entry.operations:
            errors += [f"{type_} {operation.call}: {error}" for error in _operation_errors(operation, entry)]
    return errors


def _operation_errors(operation: Operation, entry: ResourceMapping) -> Iterator[str]:
    try:
        request_shape = operation.model().input_shape
    except (UnknownServiceError, OperationNotFoundError) as error:
        # The models are the part of botocore's the mapping named when vendor/botocore/ was written.
        yield (
            f"no such operation in botocore's models as vendored ({type(error).__name__}): if botocore has it, "
            "python -m gpt_oss_infra vendor-json writes it into vendor/botocore/"
        )
        return
    reference = re.fullmatch(rf"https://docs\.aws\.amazon\.com/[\w/-]+/API_{operation.name}\.html", operation.reference)
    if reference is None:
        yield f"reference {operation.reference} is not the page of {operation.name}"
    if set(operation.required) != set(request_shape.required_members):
        yield f"required lists {sorted(operation.required)}, the API requires {request_shape.required_members}"
    for member, supply in operation.required.items():
        if supply.input is None and supply.provider is None:
            yield f"required {member}: neither an input nor the provider supplies it"
        if supply.input is not None and not any(
            source[: len(supply.input)] == supply.input and target.to[0] == member
            for source, targets in operation.members.items()
            for target in targets
        ):
            yield f"required {member} from {render_path(supply.input)}: no member entry maps it there"
    for source, targets in operation.members.items():
        per_call = operation.each is not None and source[: len(operation.each)] == operation.each
        source_items = source.count(ITEM) - per_call  # an `each` call's own item is no list level
        for target in targets:
            yield from _target_errors(request_shape, source, source_items, target, entry)
    for source in entry.provider_only:
        if source in operation.members:
            yield f"{render_path(source)} is both mapped and provider_only"
    for rule in operation.rules:
        yield from _rule_errors(operation, request_shape, rule)


def _target_errors(
    request_shape: Shape, source: PathParts, source_items: int, target: Target, entry: ResourceMapping
) -> Iterator[str]:
    where = f"{render_path(source)} -> {render_path(target.to)}"
    shape = shape_at(request_shape, target.to)
    if shape is None:
        yield f"{where}: no such member in {request_shape.name}"
    if target.to.count(ITEM) != source_items:
        yield f"{where}: the input has {source_items} list levels, the member {target.to.count(ITEM)}"
    if target.transform is not None and target.transform not in TRANSFORMS:
        yield f"{where}: unknown transform {target.transform} (known: {', '.join(TRANSFORMS)})"
    if target.transform == "key_value_list" and shape is not None and set(shape.member.members) != {"Key", "Value"}:
        yield f"{where}: key_value_list makes {{Key, Value}} items, {shape.name} holds {list(shape.member.members)}"
    if target.when is not None and not entry.maps(target.when):
        yield f"{where}: when {render_path(target.when)} is no mapped input"
    if target.enum_of is not None:
        service, shape_name = target.enum_of.split(":")
        if not service_model(service).shape_for(shape_name).enum:
            yield f"{where}: enum_of {target.enum_of} is no enum"


def _rule_errors(operation: Operation, request_shape: Shape, rule: Rule) -> Iterator[str]:
    where = f"rule on {render_path(rule.member)}"
    for path in (rule.member, *rule.when):
        if shape_at(request_shape, path) is None:
            yield f"{where}: no such member {render_path(path)}"
            return
    quote = " ".join(rule.quote.split())
    if quote not in documentation(operation, rule.member):
        yield f"{where}: its documentation does not say {quote!r}"
    numbers = [*(rule.allowed or []), *(n for n in (rule.multiple_of, rule.min, rule.max) if n is not None)]
    for number in numbers:
        if str(number) not in quote and (not isinstance(number, int) or f"{number:,}" not in quote):
            yield f"{where}: {number} is not in the quote"
