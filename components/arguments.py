"""A component's arguments as a caller gives them, checked before anything is registered: unknown
arguments and secrets given in plaintext are refused by name, as a stack file's keys are."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import pulumi

from gpt_oss_infra.core.errors import ConfigError, Problem


def refusal(block: str, name: str, error: ConfigError) -> pulumi.RunError:
    return pulumi.RunError(f"invalid arguments of {block} {name!r}:\n{error}")


def refuse_unknown(block: str, name: str, args: Mapping[str, Any], args_type: type, within: str = "") -> None:
    """An argument the block does not take is refused, not dropped (a misspelt one would leave its
    default silently), with did-you-mean where a close name exists."""
    known = sorted(args_type.__annotations__)
    problems = []
    for key in args:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"it takes {', '.join(known)}"
            problems.append(Problem(f"{within}{key}", f"not an argument of {block}: {hint}"))
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
