"""The base of every component here."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

import pulumi

T = TypeVar("T")


def secret(value: pulumi.Output[T]) -> pulumi.Output[T]:
    """pulumi.Output.secret of an Output, typed for a checker: with the SDK's own signature
    (pulumi 3.272: `secret(val: Input[T_co]) -> Output[T_co]`) mypy infers Never for an Output argument."""
    made: pulumi.Output[T] = pulumi.Output.secret(cast(Any, value))
    return made


def provider_of(opts: pulumi.ResourceOptions | None, package: str) -> pulumi.ProviderResource | None:
    """The provider of `package` ("aws", "kubernetes") a component's children use, found as the SDK finds it
    (Resource._get_providers): `opts.providers`' (a dict by its keys, a list by each one's package), with
    `opts.provider` for its package where `providers` has none, else the one `opts.parent` passes down; None
    for the default provider."""
    if opts is None:
        return None
    providers = opts.providers
    given = dict(providers) if isinstance(providers, Mapping) else {p.package: p for p in providers or []}
    if opts.provider is not None:
        given.setdefault(opts.provider.package, opts.provider)
    if package in given:
        return given[package]
    return opts.parent.get_provider(f"{package}:index:Resource") if opts.parent is not None else None


# Each provider object's number, held no longer than the object (a run's state keyed by it never keeps it alive).
_PROVIDER_NUMBERS: weakref.WeakKeyDictionary[pulumi.ProviderResource, int] = weakref.WeakKeyDictionary()
_NUMBERS = itertools.count()


def provider_key(provider: pulumi.ProviderResource | None) -> int | None:
    """Which provider object it is; None for the default provider. By object, not by name: two providers of one
    name under different parents are two resources (their URNs differ), which a name cannot tell apart. The
    component provider gives each construct a new object for the program's provider, so there no two blocks
    share one."""
    if provider is None:
        return None
    if provider not in _PROVIDER_NUMBERS:
        _PROVIDER_NUMBERS[provider] = next(_NUMBERS)
    return _PROVIDER_NUMBERS[provider]


class Component(pulumi.ComponentResource):
    """A ComponentResource whose children wait for what the component waits for.

    A child is created after its parent's dependencies (it waits for the parent's URN, which waits
    for them), but the engine does not record them as the child's: a destroy could delete the
    add-ons before a node group inside a component that depends on them. `child_opts` records them.
    """

    def __init__(self, t: str, name: str, props: Any, opts: pulumi.ResourceOptions | None):
        super().__init__(t, name, props, opts)
        depends_on = opts.depends_on if opts else None
        self._inherited_depends_on: list[Any] = (
            list(depends_on) if isinstance(depends_on, list | tuple) else ([depends_on] if depends_on else [])
        )

    def child_opts(
        self, *, depends_on: Sequence[pulumi.Resource] | None = None, **extra: Any
    ) -> pulumi.ResourceOptions:
        waits_for: list[Any] = [*self._inherited_depends_on, *(depends_on or [])]
        return pulumi.ResourceOptions(parent=self, depends_on=waits_for or None, **extra)
