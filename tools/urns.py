"""What one plan does to another's resources, by URN, as Pulumi's engine matches them.

A resource is identified by its URN: the stack, the project, the types of its parents and its own
type, and its name. A URN that is in both plans is kept (updated in place at most). A new URN whose
aliases include an old one takes that resource over: also kept. Every other new URN is a create, and
every other old URN a delete, or only a removal from the state where the old resource was
retainOnDelete. Offline, from two runs on the mock engine (tools/mock_engine.py): what a `pulumi up`
from one to the other would create and delete, before any cluster sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt_oss_infra.tools.mock_engine import Registration

PROJECT = "gpt-oss-infra"


def urns(resources: list[Registration], stack: str) -> dict[str, str]:
    """Each resource's URN, by name (urn:pulumi:<stack>::<project>::<parent types$...$type>::<name>)."""
    by_name = {resource.name: resource for resource in resources}

    def types(resource: Registration, own_type: str) -> str:
        parent = by_name.get(resource.parent) if resource.parent else None
        return own_type if parent is None else f"{types(parent, parent.type)}${own_type}"

    return {r.name: f"urn:pulumi:{stack}::{PROJECT}::{types(r, r.type)}::{r.name}" for r in resources}


def alias_urns(resources: list[Registration], stack: str) -> dict[str, list[str]]:
    """Each resource's URNs under its type aliases (same name and parents)."""
    own = urns(resources, stack)
    return {
        r.name: [own[r.name].replace(f"{r.type}::{r.name}", f"{alias}::{r.name}") for alias in r.alias_types]
        for r in resources
    }


@dataclass(frozen=True)
class Transition:
    kept: list[tuple[str, str]]  # (URN before, URN after): the same resource, updated in place at most
    created: list[str]
    deleted: list[str]  # deleted from the cluster or the cloud
    forgotten: list[str]  # retainOnDelete: dropped from the state, left where they are


def transition(before: list[Registration], after: list[Registration], stack: str) -> Transition:
    old = urns(before, stack)
    retained = {old[r.name] for r in before if r.options.get("retainOnDelete")}
    old_urns = set(old.values())
    new = urns(after, stack)
    aliases = alias_urns(after, stack)
    kept, created, matched = [], [], set()
    for name, urn in new.items():
        previous = next((u for u in [urn, *aliases[name]] if u in old_urns), None)
        if previous is None:
            created.append(urn)
        else:
            kept.append((previous, urn))
            matched.add(previous)
    gone = [urn for urn in old.values() if urn not in matched]
    return Transition(
        kept=kept,
        created=created,
        deleted=[urn for urn in gone if urn not in retained],
        forgotten=[urn for urn in gone if urn in retained],
    )
