"""Every use of the Pulumi Python SDK's private API, in one place.

tests/components/test_pulumi_internals.py pins these to the SDK version in requirements.txt and
fails loudly when an upgrade changes them. Nothing else in the repository imports SDK internals.

- The program (components/stack_config.py) reads the whole set of stack config keys, so that a
  misspelt top-level key is refused; the public `pulumi.Config` only answers for keys it is asked.
- Before a real engine registers anything, the program plans itself on the mock engine
  (components/stack_config.py): it needs to know which engine it runs on and which keys are secret.
- The mock engine (tools/mock_engine.py) runs a program to completion synchronously, records
  resources in the order the program constructs them, and subclasses the mock monitor to keep
  every registration request.
- The tests hand a public component its inputs as the SDK's provider host does for a program in
  another Pulumi language (as_a_provider_receives).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pulumi.resource
from pulumi.runtime import config as runtime_config
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

T = TypeVar("T")

PINNED_SDK = "3.272.0"  # the pulumi version these were read from (requirements.txt)
SECRET = "[secret]"  # what an offline plan shows instead of a secret's value

MockMonitor = mocks.MockMonitor  # the monitor set_mocks installs; subclassed to record requests


def all_config() -> dict[str, Any]:
    """Every stack config key with its value, the environment's first and then the engine's."""
    return runtime_config.get_config_env() | runtime_config.CONFIG.get()


def stored_encrypted(full_key: str) -> bool:
    """Whether the stack file holds this key encrypted (`pulumi config set --secret`)."""
    return runtime_config.is_config_secret(full_key) or full_key in runtime_config.get_config_secret_keys_env()


def secret_config_keys() -> list[str]:
    """The stack config keys whose values are secrets."""
    return sorted({key for key in all_config() if stored_encrypted(key)})


def on_mock_engine() -> bool:
    """Whether the program runs on Pulumi's mock engine (an offline plan, a unit test)."""
    return isinstance(settings.get_monitor(), MockMonitor)


def wait_for(awaitable: Awaitable[T]) -> T:
    """The awaitable's result, outside an event loop (after a program has run)."""
    return _sync_await(awaitable)


def run_program_function(program: Callable[[], None]) -> None:
    """Run a Pulumi program function as the engine would, until every registration is done."""
    _sync_await(run_pulumi_func(program))


@contextlib.contextmanager
def construction_order() -> Iterator[dict[tuple[str, str], int]]:
    """While open, every resource the program constructs gets its (type, name) -> position here.

    The mock monitor sees requests when their inputs resolve, an order asyncio does not fix
    between runs; the order in which the program constructs resources is fixed."""
    register = pulumi.resource.register_resource
    order: dict[tuple[str, str], int] = {}

    def recording_register(res, ty, name, *args, **kwargs):
        order.setdefault((ty, name), len(order))
        return register(res, ty, name, *args, **kwargs)

    pulumi.resource.register_resource = recording_register
    try:
        yield order
    finally:
        pulumi.resource.register_resource = register


async def as_a_provider_receives(inputs: dict[str, Any]) -> dict[str, Any]:
    """Component inputs as the SDK's provider host hands them to a component constructed for another
    Pulumi language: serialized as the engine sends them, then deserialized by the host (a map with a
    secret in it arrives as one secret Output, numbers as floats)."""
    from pulumi.provider.server import ProviderServicer
    from pulumi.runtime import rpc

    wire = await rpc.serialize_properties(inputs, {})
    return await ProviderServicer._construct_inputs(wire, {})
