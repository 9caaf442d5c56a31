"""What every public block decides before it registers anything: its arguments through its own pipeline
(core/blocks.py), refusals keyed by argument, and what the program's other blocks made so far (a
GptOssDeployment's `node_pool` must name a GpuNodePool of the program; its endpoint's NLB must be one its
DynamoPlatform's teardown guard waits for)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar

import pulumi

from gpt_oss_infra.components.arguments import refusal
from gpt_oss_infra.components.base import Component, provider_key, provider_of
from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.render.ownership import owner_of
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment

T = TypeVar("T")
Decided = TypeVar("Decided")
# A cluster as the Kubernetes provider object blocks go through (base.provider_key); None: the default provider.
ClusterKey = int | None


class Block(Component, Generic[Decided]):
    """A public block that registers what was decided: from its own arguments (its `__init__`, which then
    calls `_register`), or by GptOssStack from the stack config (`of_stack`)."""

    @classmethod
    def of_stack(cls, name: str, decided: Decided, opts: pulumi.ResourceOptions) -> Self:
        """One of GptOssStack's blocks, as it decided it from the stack config (its checks are the stack's)."""
        block = cls.__new__(cls)
        block._register(name, decided, opts)
        return block

    def _register(self, name: str, decided: Decided, opts: pulumi.ResourceOptions | None) -> None:
        raise NotImplementedError(f"{type(self).__name__} registers what it decided")


@dataclass(frozen=True)
class PlatformFacts:
    """What a DynamoPlatform of this program tells a GptOssDeployment with an endpoint."""

    gateway: bool
    load_balancer_controller: bool  # its guard waits for the gateways' NLBs
    release: str  # the Dynamo release it installs, which a deployment's graph must be of
    cluster: ClusterKey  # the Kubernetes provider it goes through


@dataclass(frozen=True)
class CacheFacts:
    """What a ModelCache of this program tells a GptOssDeployment in its namespace."""

    name: str
    model_revision: str  # the snapshot it downloads, which the workers load
    hf_token: bool  # it made the hf-token Secret the workers read with uses_hf_token
    cluster: ClusterKey  # the Kubernetes provider it goes through


class _PerProgram(Generic[T]):
    """A value per program run, kept by the run's root resource (a new one each run) and dropped with it: a later
    run in the same process (Automation API, the tests) never sees an earlier run's, even where Python gives
    its root the id the earlier root had. A component provider serves one program, with no root resource."""

    def __init__(self, make: Callable[[], T]):
        self._make = make
        self._runs: weakref.WeakKeyDictionary[pulumi.Resource, T] = weakref.WeakKeyDictionary()
        self._served: T | None = None  # the component provider's program

    def get(self) -> T:
        root = pulumi.runtime.get_root_resource()
        if root is None:
            self._served = self._served if self._served is not None else self._make()
            return self._served
        if root not in self._runs:
            self._runs[root] = self._make()
        return self._runs[root]


# The GpuNodePools, DynamoPlatforms and ModelCaches (by namespace) made so far.
_POOLS: _PerProgram[dict[str, blocks.PoolFacts]] = _PerProgram(dict)
_PLATFORMS: _PerProgram[dict[str, PlatformFacts]] = _PerProgram(dict)
_CACHES: _PerProgram[dict[str, list[CacheFacts]]] = _PerProgram(dict)
# The GptOssDeployments on each GpuNodePool so far: a pool's next deployment is placed beside them, as the
# stack places every deployment of a pool together.
_PLACED: _PerProgram[dict[str, list[ResolvedDeployment]]] = _PerProgram(dict)
# The Kubernetes objects the blocks make, by (the provider they go through, kind, namespace, name): what made
# each one ("DynamoPlatform 'dynamo'").
_MADE: _PerProgram[dict[tuple[ClusterKey, str, str, str], str]] = _PerProgram(dict)


def pools_of_this_program() -> dict[str, blocks.PoolFacts]:
    return _POOLS.get()


def platforms_of_this_program() -> dict[str, PlatformFacts]:
    return _PLATFORMS.get()


def caches_of_this_program() -> dict[str, list[CacheFacts]]:
    return _CACHES.get()


def placed_on_pools_of_this_program() -> dict[str, list[ResolvedDeployment]]:
    return _PLACED.get()


def cluster_of(opts: pulumi.ResourceOptions | None) -> ClusterKey:
    """The Kubernetes provider a block's children use (base.provider_of), as base.provider_key tells it."""
    return provider_key(provider_of(opts, "kubernetes"))


def refuse_made_twice(
    block: str, name: str, opts: pulumi.ResourceOptions | None, objects: dict[str, list[dict[str, Any]]]
) -> None:
    """The block's Kubernetes `objects`, by the argument that names them, refused where another block of this
    program makes one of the same kind, namespace and name through the same provider: its create would fail
    after the first block's was made (two DynamoPlatforms in one namespace, two with `gateway`, two
    ModelCaches in one namespace). Else they are recorded for the blocks after it."""
    provider = cluster_of(opts)
    made = _MADE.get()
    mine = {
        (provider, obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]): argument
        for argument, listed in objects.items()
        for obj in listed
    }
    problems: dict[str, Problem] = {}
    for (_, kind, namespace, object_name), argument in mine.items():
        other = made.get((provider, kind, namespace, object_name))
        if other is not None and argument not in problems:
            where = f"{namespace}/{object_name}" if namespace else object_name
            problems[argument] = Problem(
                argument,
                f"{other} of this program makes {kind} {where} too, through the same Kubernetes provider: "
                f"the second would fail to create after the first was made; {_TWICE_FIX[argument]}",
            )
    if problems:
        raise refusal(block, name, ConfigError(list(problems.values())))
    made.update(dict.fromkeys(mine, f"{block} {name!r}"))


# What to do about an object another block makes, by the argument that names it (refuse_made_twice's `objects`).
_TWICE_FIX = {
    "gateway": "Envoy Gateway is installed once per cluster, by one DynamoPlatform: leave gateway off here",
    "namespace": "give this block a namespace of its own",
    "storage_class_name": "give this cache a StorageClass name of its own",
}


def this_program() -> str:
    """The owner (its Pulumi organization, project and stack) every object of this program is marked as made by."""
    return owner_of(pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack())


def refused(block: str, name: str, decide: Callable[[], T]) -> T:
    """`decide()`, or the run stopped with every problem, keyed by argument, before anything is registered."""
    try:
        return decide()
    except ConfigError as error:
        raise refusal(block, name, error) from None
