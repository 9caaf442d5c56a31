"""A component's arguments as a caller gives them, checked before anything is registered: unknown and
missing arguments and secrets given in plaintext are refused by name, as a stack file's keys are.

A refusal is a pulumi.RunError in a Python program (the language host prints its message, no
traceback). In the component provider, which constructs the components for a program of another
language, it is the SDK's InputPropertiesError instead: that program's engine shows each problem
under the argument as its language spells it (clusterName), which a RunError cannot carry."""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

import pulumi

from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.mappings import renamed_words, snake_to_camel

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


def refuse_unknown_and_missing(
    block: str, name: str, args: Mapping[str, Any], args_type: type, within: str = ""
) -> None:
    """An argument the block does not take is refused, not dropped (a misspelt one would leave its
    default silently), with did-you-mean where a close name exists; one its Args type requires (a key
    not NotRequired) is refused when absent or None, as another language's engine refuses it."""
    known = sorted(args_type.__annotations__)
    problems = []
    for key in args:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"it takes {', '.join(known)}"
            problems.append(Problem(f"{within}{key}", f"not an argument of {block}: {hint}"))
    required: frozenset[str] = getattr(args_type, "__required_keys__", frozenset())
    for key in sorted(required):
        if args.get(key) is None:
            problems.append(Problem(f"{within}{key}", f"required by {block}"))
    if problems:
        raise refusal(block, name, ConfigError(problems))


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
            problems.append(
                Problem(
                    argument,
                    f"a plain string{where}: pass a secret, e.g. pulumi.Config().require_secret(...) or "
                    "pulumi.Output.secret(...), so that it is never in the program's source or in plaintext",
                )
            )
    if problems:
        raise refusal(block, name, ConfigError(problems))
