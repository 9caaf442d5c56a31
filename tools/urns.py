"""What one plan does to another's resources, by URN, as Pulumi's engine matches them.

A resource is identified by its URN: the stack, the project, the types of its parents and its own
type, and its name. A URN that is in both plans is kept (updated in place at most). A new URN whose
aliases include an old one takes that resource over: also kept. Every other new URN is a create, and
every other old URN a delete, or only a removal from the state where the old resource was
retainOnDelete. Offline, from two runs on the mock engine (tools/pulumi_engine.py): what a `pulumi up`
from one to the other would create and delete, before any cluster sees it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpt_oss_infra.tools.pulumi_engine import Registration

PROJECT = "gpt-oss-infra"


def urns(resources: list[Registration], stack: str) -> dict[str, str]:
    """Each resource's URN, by name (urn:pulumi:<stack>::<project>::<parent types$...$type>::<name>)."""
    by_name = {resource.name: resource for resource in resources}

    def types(resource: Registration, own_type: str) -> str:
        parent = by_name.get(resource.parent) if resource.parent else None
        return own_type if parent is None else f"{types(parent, parent.type)}${own_type}"

    return {r.name: f"urn:pulumi:{stack}::{PROJECT}::{types(r, r.type)}::{r.name}" for r in resources}


def alias_urns(resources: list[Registration], stack: str) -> dict[str, list[str]]:
    """Each resource's earlier URNs, as Pulumi's engine matches them: under its type aliases, under
    each move it declares (another name, parent or the stack's root), and under every earlier URN of
    its parent (a child inherits its parent's aliases)."""
    by_name = {resource.name: resource for resource in resources}

    @functools.cache
    def chains(name: str) -> tuple[str, ...]:
        """Every `parent types$...$type` the resource had or has, its current one first (a URN's
        chain holds types only: a move to another name changes no child's chain)."""
        resource = by_name[name]
        parents = [chain for parent in [resource.parent, *moved_parents(resource)] for chain in parent_chains(parent)]
        types = [resource.type, *resource.alias_types]
        return tuple(dict.fromkeys(_chain(parent, type_) for parent in parents for type_ in types))

    def moved_parents(resource: Registration) -> list[str | None]:
        """The parents its moves name (None: the stack's root)."""
        parents = {"(stack)": None, "(same parent)": resource.parent}
        return [parents.get(move["parent"], move["parent"]) for move in resource.options.get("aliases", [])]

    def parent_chains(parent: str | None) -> tuple[str, ...]:
        return chains(parent) if parent else ("",)

    def earlier(resource: Registration) -> list[str]:
        names = [resource.name, *(move["name"] for move in resource.options.get("aliases", []))]
        names = [name for name in dict.fromkeys(names) if name != "(same name)"]
        urns = [f"urn:pulumi:{stack}::{PROJECT}::{chain}::{name}" for name in names for chain in chains(resource.name)]
        return urns[1:]  # the first is its URN now

    return {resource.name: earlier(resource) for resource in resources}


def _chain(parent_chain: str, type_: str) -> str:
    return f"{parent_chain}${type_}" if parent_chain else type_


@dataclass(frozen=True)
class Transition:
    kept: list[tuple[str, str]]  # (URN before, URN after): the same resource, updated in place at most
    created: list[str]
    deleted: list[str]  # deleted from the cluster or the cloud
    forgotten: list[str]  # retainOnDelete: dropped from the state, left where they are


def transition(before: list[Registration], after: list[Registration], stack: str) -> Transition:
    old = urns(before, stack)
    retained = {old[r.name] for r in before if r.options.get("retainOnDelete")}
    return transition_from(list(old.values()), retained, after, stack)


def transition_from(old_urns: list[str], retained: set[str], after: list[Registration], stack: str) -> Transition:
    """What a `pulumi up` of `after` does to a stack whose state holds `old_urns` (`retained`: those
    that are retainOnDelete)."""
    known = set(old_urns)
    new = urns(after, stack)
    aliases = alias_urns(after, stack)
    kept, created, matched = [], [], set()
    for name, urn in new.items():
        previous = next((u for u in [urn, *aliases[name]] if u in known), None)
        if previous is None:
            created.append(urn)
        else:
            kept.append((previous, urn))
            matched.add(previous)
    gone = [urn for urn in old_urns if urn not in matched]
    return Transition(
        kept=kept,
        created=created,
        deleted=[urn for urn in gone if urn not in retained],
        forgotten=[urn for urn in gone if urn in retained],
    )
