"""Read the stack's Pulumi config and hand plain values to the functional core."""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Callable
from typing import Any, TypeVar

import pulumi

from gpt_oss_infra.components.arguments import keyed_refusal
from gpt_oss_infra.components.pulumi_config import (
    all_config,
    config_value,
    stored_encrypted,
)
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.config import (
    KEY_PREFIX,
    NAMESPACE,
    SECRET_COMMANDS,
    SECRET_KEYS,
    namespace_config,
    stack_config_keys,
)
from gpt_oss_infra.core.mappings import camel_to_snake

T = TypeVar("T")


def raw_namespace_config() -> dict[str, Any]:
    """Every `gpt-oss-infra:` key but the secrets, with object values JSON-decoded.

    The stack config's own keys are read through `pulumi.Config`, which sees config however the
    program is run. The whole set the language host hands over is read too (components/pulumi_config.py;
    an Automation API program run in-process gets none), so that a misspelt top-level key is refused
    by the core, and a key under a misspelt namespace (gpt-oss-infa:deployments), which Pulumi would
    otherwise just ignore, deploying the rest without it.
    """
    every_key = all_config()
    misspelt = [
        Problem(full_key, f"unknown namespace {full_key.split(':')[0]!r}: did you mean {NAMESPACE!r}?")
        for full_key in every_key
        if _looks_like_ours(full_key.split(":")[0])
    ]
    if misspelt:
        raise ConfigError(misspelt)
    known = {key: value for key in stack_config_keys() if (value := config_value(f"{KEY_PREFIX}{key}")) is not None}
    return {key: decode(value) for key, value in (namespace_config(every_key) | known).items()}


def _looks_like_ours(namespace: str) -> bool:
    """A config namespace a typo away from ours, in any case, or a shortening of it (gpt-oss); the
    providers' own (aws, kubernetes) are not."""
    candidate = namespace.lower()
    if namespace == NAMESPACE:
        return False
    shortened = len(candidate) >= 5 and NAMESPACE.startswith(candidate)
    return shortened or difflib.SequenceMatcher(None, candidate, NAMESPACE).ratio() >= 0.8


class StackFileConfig(dict[str, Any]):
    """The stack config as the stack file holds it (stack_config_args): its refusals name that file."""


def refused(decide: Callable[[], T], given_to: str | None = None) -> T:
    """`decide()`, or the run stopped with every problem it found, before anything is registered; the
    message names the stack file the keys are in, or `given_to` (the component) where a program gave them."""
    try:
        return decide()
    except ConfigError as error:
        raise refusal(error, given_to) from None


def refusal(error: ConfigError, given_to: str | None = None) -> Exception:
    """The run stopped naming the stack file, or the component's config argument: each key as a path in
    it (config.<key>), as the program wrote it, in Python as in another language."""
    if not given_to:
        return pulumi.RunError(f"invalid stack config in Pulumi.{pulumi.get_stack()}.yaml:\n{error}")
    in_argument = ConfigError([_as_given_to_the_component(problem) for problem in error.problems])
    return keyed_refusal(f"invalid arguments of {given_to}:\n{in_argument}", in_argument)


# A stack file's secrets are GptOssStack's own arguments (hf_token), not keys of its `config`.
SECRET_ARGUMENTS = {key: camel_to_snake(key) for key in SECRET_KEYS}


def _as_given_to_the_component(problem: Problem) -> Problem:
    """A problem of a stack config key, as a program that gave GptOssStack the config sees it: the key as
    its argument path, and a stack file's secret command as the argument that takes the secret."""
    message = problem.message
    for key, command in SECRET_COMMANDS.items():
        message = message.replace(command, f"the {SECRET_ARGUMENTS[key]} argument (Pulumi secrets)")
    return dataclasses.replace(problem, key=_config_path(problem.key), message=message)


def _config_path(key: str) -> str:
    """A stack config key (gpt-oss-infra:deployments.gpt-oss.gpus) as a path in GptOssStack's arguments:
    under `config`, already in the schema's spelling (the config's own keys are camelCase), but for the
    secrets, which are arguments of their own (gpt-oss-infra:apiKeys.ci -> api_keys.ci)."""
    if not key.startswith(KEY_PREFIX):
        return key
    path = key.removeprefix(KEY_PREFIX)
    head, dot, rest = path.partition(".")
    return f"{SECRET_ARGUMENTS[head]}{dot}{rest}" if head in SECRET_ARGUMENTS else f"config.{path}"


def secret_config(key: str) -> pulumi.Output[str] | None:
    """A secret key (hfToken, ngcApiKey) as a Pulumi secret; one stored in plaintext is refused."""
    return _secret(key, pulumi.Config(NAMESPACE).get_secret)


def secret_map_config(key: str) -> pulumi.Output[dict[str, str]] | None:
    """A secret map (apiKeys: client name -> key) as a Pulumi secret; one stored in plaintext is refused."""
    return _secret(key, pulumi.Config(NAMESPACE).get_secret_object)


def api_key_clients() -> list[str]:
    """The client names of apiKeys: the map's keys, plain in the stack file (only each key's value
    is a secret), which the core names the API-key Secret's entries and the smoke test's key by."""
    key = f"{KEY_PREFIX}apiKeys"
    value = config_value(key)
    if value is None:
        return []
    clients = decode(value)
    if not isinstance(clients, dict) or not clients:
        problem = Problem(key, f"a map of client name -> API key: set each with {SECRET_COMMANDS['apiKeys']}")
        raise refusal(ConfigError([problem]))
    return sorted(clients)


def _secret(key: str, read: Callable[[str], pulumi.Output[Any] | None]) -> pulumi.Output[Any] | None:
    """Its value, never logged; refused, before anything is registered, when the stack file holds it
    in plaintext (committed with the file, shown by `pulumi config`)."""
    command = SECRET_COMMANDS[key]
    full_key = f"{KEY_PREFIX}{key}"
    if config_value(full_key) is not None and not stored_encrypted(full_key):
        problem = Problem(
            full_key, f"a secret stored in plaintext in the stack file: remove it and set it with {command}"
        )
        raise refusal(ConfigError([problem]))
    return read(key)


def decode(value: Any) -> Any:
    """Pulumi passes structured values as JSON text; scalars stay as written (a string that only
    starts like JSON, e.g. "[dev", too: the core then refuses it with its key, not a traceback)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
