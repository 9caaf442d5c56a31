"""The stack's config as the Pulumi engine hands it to a Python program, through the SDK's public API
(`pulumi.runtime.__all__`).

A key's value and whether it is secret: `pulumi.runtime.get_config` and `is_config_secret`, which see
config however the program runs (the CLI, an Automation API program in-process). Every key at once:
the CLI's language host puts them all in the PULUMI_CONFIG environment variable, and the names of
those stored encrypted in PULUMI_CONFIG_SECRET_KEYS (pulumi/pulumi
sdk/python/cmd/pulumi-language-python/main.go, `pulumiConfigVar`), which `get_config_env` and
`get_config_secret_keys_env` read: so that a misspelt key is refused instead of ignored (an
Automation API program run in-process hands no such list: there, only known keys are read).

An offline run (the mock engine of `make plan` and the tests, tools/pulumi_engine.py) hands the config
the same way, and says it is offline: there is no cluster or cloud to read then.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import pulumi.runtime

_OFFLINE: ContextVar[bool] = ContextVar("gpt_oss_infra_offline", default=False)


def all_config() -> dict[str, Any]:
    """Every config key of the stack the language host listed, with its value (a secret's too: never log it)."""
    return pulumi.runtime.get_config_env()


def config_value(full_key: str) -> Any:
    """One key's value, or None."""
    return pulumi.runtime.get_config(full_key)


def stored_encrypted(full_key: str) -> bool:
    """Whether the stack file holds this key encrypted (`pulumi config set --secret`)."""
    return pulumi.runtime.is_config_secret(full_key) or full_key in pulumi.runtime.get_config_secret_keys_env()


def offline() -> bool:
    """Whether this run is an offline one (the mock engine): nothing real to read."""
    return _OFFLINE.get()


def mark_offline() -> None:
    """For an offline engine's own context (contextvars): what runs in it reads no cluster or cloud."""
    _OFFLINE.set(True)


@contextlib.contextmanager
def running_offline() -> Iterator[None]:
    """What runs inside is offline; the context is as it was after."""
    token = _OFFLINE.set(True)
    try:
        yield
    finally:
        _OFFLINE.reset(token)
