"""A component's arguments as a caller gives them, checked before anything is registered: unknown and
missing arguments and secrets given in plaintext are refused by name, as a stack file's keys are.

A refusal is a pulumi.RunError in a Python program (the language host prints its message, no
traceback). In the component provider, which constructs the components for a program of another
language, it is the SDK's InputPropertiesError instead: that program's engine shows each problem
under the argument as its language spells it (clusterName), which a RunError cannot carry."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pulumi

from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.mappings import renamed_words, snake_to_camel
from gpt_oss_infra.core.schema import closest_name

_FOR_OTHER_LANGUAGES = False  # set by the component provider (provider/__main__.py)
# The components' arguments as the schema spells them (cluster_name -> clusterName), where they differ; set
# with _FOR_OTHER_LANGUAGES. A refusal's reason may name another argument ("required with capacity_type").
_SCHEMA_SPELLING: dict[str, str] = {}


def serve_other_languages(components: list[type[pulumi.ComponentResource]]) -> None:
    """Refusals from now on are InputPropertiesErrors keyed by the schema's property paths, and the
    arguments of `components` their reasons name are spelt as the schema spells them."""
    global _FOR_OTHER_LANGUAGES, _SCHEMA_SPELLING
    _FOR_OTHER_LANGUAGES = True
    _SCHEMA_SPELLING = schema_spelling(components)


def schema_spelling(components: list[type[pulumi.ComponentResource]]) -> dict[str, str]:
    """Each argument of the components' Args types (and of the TypedDicts they nest, an endpoint's) whose
    schema name differs: its Python name -> the schema's."""
    typed_dicts = [inspect.signature(component.__init__).parameters["args"].annotation for component in components]
    names: set[str] = set()
    while typed_dicts:
        typed_dict = typed_dicts.pop()
        for name, annotation in typed_dict.__annotations__.items():
            names.add(name)
            typed_dicts += [nested for nested in _nested(annotation) if typing.is_typeddict(nested)]
    return {name: snake_to_camel(name) for name in sorted(names) if snake_to_camel(name) != name}


def described_in_schema_spelling(
    schema: dict[str, Any], components: list[type[pulumi.ComponentResource]]
) -> dict[str, Any]:
    """The package schema with every description naming the arguments (and `opts.depends_on`) as the schema
    spells them: its descriptions become the doc comments of every language's generated SDK, where the
    Python names of the docstrings they come from would name nothing."""
    spelling = schema_spelling(components) | {"depends_on": "dependsOn"}

    def spelt(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: renamed_words(item, spelling, after_dots=True) if key == "description" else spelt(item)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [spelt(item) for item in value]
        return value

    described: dict[str, Any] = spelt(schema)
    return described


def _nested(annotation: Any) -> list[Any]:
    """An annotation and every type inside it (NotRequired[Endpoint | None] -> Endpoint among them)."""
    return [annotation, *(inner for argument in typing.get_args(annotation) for inner in _nested(argument))]


def in_schema_spelling(text: str) -> str:
    """`text` with each argument it names as a whole word (endpoint.certificate_arn too) spelt as the schema
    spells it, once serve_other_languages has set the spellings."""
    return renamed_words(text, _SCHEMA_SPELLING, after_dots=True)


def refusal(block: str, name: str, error: ConfigError) -> Exception:
    return keyed_refusal(f"invalid arguments of {block} {name!r}:\n{error}", error)


def keyed_refusal(message: str, error: ConfigError, key_to_path: Callable[[str], str] = str) -> Exception:
    """`message`, as the caller's language shows a refusal; `key_to_path`: each problem's key as an
    argument path in Python (cluster_name, endpoint.exposure), made the schema's (clusterName) here."""
    if not _FOR_OTHER_LANGUAGES:
        return pulumi.RunError(message)
    errors: list[pulumi.InputPropertyErrorDetails] = [
        {"property_path": _schema_path(key_to_path(problem.key)), "reason": in_schema_spelling(problem.message)}
        for problem in error.problems
    ]
    return pulumi.InputPropertiesError(in_schema_spelling(message), errors)


def _schema_path(path: str) -> str:
    """A Python argument path in the schema's camelCase: node_pool.x_y -> nodePool.xY (map keys, which
    hold no '_' here, stay as written)."""
    return ".".join(snake_to_camel(part) for part in path.split("."))


def refuse_bad_arguments(block: str, name: str, args: Mapping[str, Any], args_type: type, within: str = "") -> None:
    """An argument the block does not take is refused, not dropped (a misspelt one would leave its
    default silently), with did-you-mean where a close name exists; one its Args type requires (a key
    not NotRequired) is refused when absent or None, as another language's engine refuses it; one of
    another type than its annotation's (mistyped_arguments) is refused by name too."""
    if not isinstance(args, Mapping):
        where = within.removesuffix(".") or "args"
        problem = Problem(where, f"{_described(args_type)}, not {_kind_of(args)}")
        raise refusal(block, name, ConfigError([problem]))
    known = sorted(args_type.__annotations__)
    problems = mistyped_arguments(args, args_type, within)
    for key in args:
        if key not in known:
            close = closest_name(key, known)
            hint = f"did you mean {close!r}?" if close else f"it takes {', '.join(known)}"
            problems.append(Problem(f"{within}{key}", f"not an argument of {block}: {hint}"))
    required: frozenset[str] = getattr(args_type, "__required_keys__", frozenset())
    for key in sorted(required):
        if args.get(key) is None:
            problems.append(Problem(f"{within}{key}", f"required by {block}"))
    if problems:
        raise refusal(block, name, ConfigError(problems))


_SECRET_FROM_PYTHON = "e.g. pulumi.Config().require_secret(...) or pulumi.Output.secret(...)"
# The generated SDKs of other languages type a secret argument as a plain string: what to give instead, in any.
_SECRET_FROM_OTHER_LANGUAGES = (
    "e.g. a config value set with `pulumi config set --secret` and read as a secret, or a value the program marks "
    "secret"
)


def refuse_plaintext(block: str, name: str, args: Mapping[str, Any], secret_arguments: list[str]) -> None:
    """A secret given as a plain string sits in the program's source, and in every log of its value:
    refused; a Pulumi secret (pulumi.Config().require_secret(...), pulumi.Output.secret(...)) is taken."""
    problems = []
    for argument in secret_arguments:
        value = args.get(argument)
        plain = [value] if isinstance(value, str) else []
        if isinstance(value, Mapping):
            plain = [key for key, item in value.items() if isinstance(item, str)]
        if plain:
            where = f" (the value of {', '.join(map(repr, plain))})" if isinstance(value, Mapping) else ""
            how = _SECRET_FROM_OTHER_LANGUAGES if _FOR_OTHER_LANGUAGES else _SECRET_FROM_PYTHON
            problems.append(
                Problem(
                    argument,
                    f"a plain string{where}: pass a secret, {how}, so that it is never in the program's source or in "
                    "plaintext",
                )
            )
    if problems:
        raise refusal(block, name, ConfigError(problems))


def mistyped_arguments(args: Mapping[str, Any], args_type: type, within: str = "") -> list[Problem]:
    """Each argument whose value its Args type's annotation does not allow: a string where a list is meant
    (subnet_ids would be read letter by letter), a string where a bool is ("false" is true to Python), an
    Output where a plain value decides what is made before anything is registered, an empty string."""
    problems = []
    for key, value in args.items():
        annotation = args_type.__annotations__.get(key)
        if value is not None and annotation is not None:  # unknown and missing ones are refused by name
            problems += _value_problems(f"{within}{key}", value, annotation)
    return problems


def _value_problems(key: str, value: Any, annotation: Any, entry: bool = False) -> list[Problem]:
    """A value against its annotation; a mapping's entries each under their own key (node_selector.zone). An
    argument may not be empty; an entry may (a label's value "", a recipe's decisions [])."""
    mapping = next((member for member in _members(annotation) if typing.get_origin(member) is dict), None)
    if mapping is not None and isinstance(value, Mapping) and all(isinstance(name, str) for name in value):
        return [
            problem
            for name, item in value.items()
            for problem in _value_problems(f"{key}.{name}", item, typing.get_args(mapping)[1], entry=True)
        ]
    if not _fits(value, annotation):
        return [Problem(key, f"{_described(annotation)}, not {_kind_of(value)}")]
    if not entry and (value == "" or (isinstance(value, list | tuple) and not value)):
        return [Problem(key, f"empty: give {_described(annotation)}")]
    return []


def _members(annotation: Any) -> list[Any]:
    """The types an annotation allows: NotRequired[X | None] -> [X, NoneType]."""
    origin = typing.get_origin(annotation)
    if origin in (typing.NotRequired, typing.Required):
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [member for argument in typing.get_args(annotation) for member in _members(argument)]
    return [annotation]


def _is_output(annotation: Any) -> bool:
    """pulumi.Output[T], which pulumi.Input spells as a forward reference."""
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__.startswith("Output")
    return annotation is pulumi.Output or typing.get_origin(annotation) is pulumi.Output


def _fits(value: Any, annotation: Any) -> bool:
    return any(_fits_one(value, member) for member in _members(annotation))


def _fits_one(value: Any, annotation: Any) -> bool:
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any:
        return True
    if annotation is type(None):
        return value is None
    if _is_output(annotation):
        return isinstance(value, pulumi.Output)
    if origin is Awaitable:
        return inspect.isawaitable(value) and not isinstance(value, pulumi.Output)
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:  # another language's numbers arrive as floats (2.0)
        whole_float = isinstance(value, float) and value.is_integer()
        return not isinstance(value, bool) and (isinstance(value, int) or whole_float)
    if annotation is str:
        return isinstance(value, str)
    if typing.is_typeddict(annotation):
        return isinstance(value, Mapping)  # its keys and values: refuse_bad_arguments with `within`
    if origin is list:
        return isinstance(value, list | tuple) and all(_fits(item, arguments[0]) for item in value)
    if origin is dict:
        return isinstance(value, Mapping) and all(
            _fits(key, arguments[0]) and _fits(item, arguments[1]) for key, item in value.items()
        )
    raise TypeError(f"an argument annotation mistyped_arguments does not know: {annotation!r}")


def _described(annotation: Any) -> str:
    """What an annotation allows, in words: 'a list of strings (Outputs allowed)'."""
    plain = _plain_members(annotation)
    words = " or ".join(_described_one(member) for member in plain) or "an Output"
    return f"{words} (Outputs allowed)" if plain and _allows_outputs(annotation) else words


def _plain_members(annotation: Any) -> list[Any]:
    """The types an annotation allows as a plain value: neither None nor an Output or another awaitable."""
    return [member for member in _members(annotation) if member is not type(None) and not _deferred(member)]


def _deferred(annotation: Any) -> bool:
    """An Output or another awaitable: a value known only while the program runs."""
    return _is_output(annotation) or typing.get_origin(annotation) is Awaitable


def _allows_outputs(annotation: Any) -> bool:
    """Whether an Output may stand for the value or for any part of it."""
    return _deferred(annotation) or any(_allows_outputs(inner) for inner in typing.get_args(annotation))


def _described_one(annotation: Any) -> str:
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if typing.is_typeddict(annotation):
        return f"a mapping of {annotation.__name__}'s keys ({', '.join(annotation.__annotations__)})"
    if origin is list:
        return f"a list of {_plural(arguments[0])}"
    if origin is dict:
        return f"a mapping of {_plural(arguments[0])} to {_plural(arguments[1])}"
    return {str: "a string", bool: "true or false", int: "a whole number", Any: "any value"}[annotation]


def _plural(annotation: Any) -> str:
    names = {str: "strings", bool: "booleans", int: "whole numbers", Any: "values"}
    return " or ".join(names.get(member, _described_one(member)) for member in _plain_members(annotation))


def _kind_of(value: Any) -> str:
    """A value's kind as a caller would name it."""
    if isinstance(value, pulumi.Output):
        return "an Output (this argument decides what is made before anything is registered: a plain value)"
    if isinstance(value, pulumi.Resource):
        return f"a {type(value).__name__} resource"
    if isinstance(value, bool):
        return f"{value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return "None" if value is None else f"a {type(value).__name__}"
