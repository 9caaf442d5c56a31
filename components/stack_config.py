"""Read the stack's Pulumi config and hand plain values to the functional core."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import Any, TypeVar

import pulumi

from components.pulumi_internals import all_config, stored_encrypted
from core.errors import ConfigError, Problem
from core.inputs.config import KEY_PREFIX, NAMESPACE, SECRET_KEYS, namespace_config

T = TypeVar("T")


def raw_namespace_config() -> dict[str, Any]:
    """Every `gpt-oss-infra:` key but the secrets, with object values JSON-decoded.

    The whole set is read (not key by key) so that a misspelt top-level key is refused too, and a
    key under a misspelt namespace (gpt-oss-infa:deployments), which Pulumi would otherwise just
    ignore, deploying the rest without it.
    """
    config = all_config()
    misspelt = [
        Problem(full_key, f"unknown namespace {full_key.split(':')[0]!r}: did you mean {NAMESPACE!r}?")
        for full_key in config
        if _looks_like_ours(full_key.split(":")[0])
    ]
    if misspelt:
        raise ConfigError(misspelt)
    return {key: _decode(value) for key, value in namespace_config(config).items()}


def _looks_like_ours(namespace: str) -> bool:
    """A config namespace a typo away from ours, in any case, or a shortening of it (gpt-oss); the
    providers' own (aws, kubernetes) are not."""
    candidate = namespace.lower()
    if namespace == NAMESPACE:
        return False
    shortened = len(candidate) >= 5 and NAMESPACE.startswith(candidate)
    return shortened or difflib.SequenceMatcher(None, candidate, NAMESPACE).ratio() >= 0.8


def refused(decide: Callable[[], T]) -> T:
    """`decide()`, or the run stopped with every problem it found, before anything is registered;
    the message names the stack file the keys are in."""
    try:
        return decide()
    except ConfigError as error:
        raise pulumi.RunError(f"invalid stack config in Pulumi.{pulumi.get_stack()}.yaml:\n{error}") from None


def secret_config(key: str) -> pulumi.Output[str] | None:
    """A secret key (hfToken, ngcApiKey) as a Pulumi secret; one stored in plaintext is wrapped
    all the same and warned about. Its value is never logged."""
    return _secret(key, pulumi.Config().get_secret)


def secret_map_config(key: str) -> pulumi.Output[dict[str, str]] | None:
    """A secret map (apiKeys: client name -> key, set with `--secret --path`), likewise."""
    return _secret(key, pulumi.Config().get_secret_object)


def _secret(key: str, read: Callable[[str], pulumi.Output | None]) -> pulumi.Output | None:
    assert key in SECRET_KEYS
    value = read(key)
    if value is not None and not stored_encrypted(f"{KEY_PREFIX}{key}"):
        pulumi.log.warn(
            f"{KEY_PREFIX}{key} is stored in plaintext in the stack file; it is handled as a "
            f"secret, but store it encrypted: pulumi config set --secret {KEY_PREFIX}{key}"
        )
    return value


def _decode(value: Any) -> Any:
    """Pulumi passes structured values as JSON text; scalars stay as written (a string that only
    starts like JSON, e.g. "[dev", too: the core then refuses it with its key, not a traceback)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
