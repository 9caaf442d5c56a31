"""What one plan does to another's resources, by URN, as Pulumi's engine matches them.

A resource is identified by its URN: the stack, the project, the types of its parents and its own
type, and its name. A URN that is in both plans is kept (updated in place at most). A new URN whose
aliases include an old one takes that resource over: also kept. Every other new URN is a create, and
every other old URN a delete, or only a removal from the state where the old resource was
retainOnDelete. Offline, from two runs on the mock engine (tools/pulumi_engine.py): what a `pulumi up`
from one to the other would create and delete, before any cluster sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpt_oss_infra.tools.pulumi_engine import AliasSpec, Registration

PROJECT = "gpt-oss-infra"


def urns(resources: list[Registration], stack: str) -> dict[str, str]:
    """Each resource's URN, by name (urn:pulumi:<stack>::<project>::<parent types$...$type>::<name>)."""
    by_name = {resource.name: resource for resource in resources}

    def types(resource: Registration, own_type: str) -> str:
        parent = by_name.get(resource.parent) if resource.parent else None
        return own_type if parent is None else f"{types(parent, parent.type)}${own_type}"

    return {r.name: f"urn:pulumi:{stack}::{PROJECT}::{types(r, r.type)}::{r.name}" for r in resources}


@dataclass(frozen=True)
class Transition:
    kept: list[tuple[str, str]]  # (URN before, URN after): the same resource, updated in place at most
    created: list[str]
    deleted: list[str]  # deleted from the cluster or the cloud
    forgotten: list[str]  # retainOnDelete: dropped from the state, left where they are
    problems: list[str] = field(default_factory=list)  # what the engine refuses: an old URN claimed twice


def transition(before: list[Registration], after: list[Registration], stack: str) -> Transition:
    old = urns(before, stack)
    retained = {old[r.name] for r in before if r.options.get("retainOnDelete")}
    return transition_from(list(old.values()), retained, after, stack)


def transition_from(old_urns: list[str], retained: set[str], after: list[Registration], stack: str) -> Transition:
    """What a `pulumi up` of `after` does to a stack whose state holds `old_urns` (`retained`: those
    that are retainOnDelete). Each resource, in registration order, takes over the first of its URN and
    its aliases' URNs the state holds, as pulumi/pulumi's step generator matches them
    (pkg/resource/deploy/step_generator.go: generateAliases, collapseAliasToUrn, inheritedChildAlias):
    an alias's parent given by resource is that parent's old URN where the parent itself was taken over
    through an alias; a child of such a parent also tries its own and its aliases' URNs under the
    parent's old one; two resources claiming one old URN, or one claiming through an alias the URN another has
    as its own, is an error of `up` (GetDuplicateResourceAliasError)."""
    known = set(old_urns)
    now: dict[str, str] = {}  # name -> URN in this run
    taken_over: dict[str, str] = {}  # name -> the old URN it took over through an alias
    claimed_by: dict[str, str] = {}  # old URN -> the URN that took it over through an alias
    kept, created, problems = [], [], []
    for resource in after:
        parent = now.get(resource.parent) if resource.parent else None
        urn = _urn(stack, _qualified(parent, resource.type), resource.name)
        now[resource.name] = urn
        candidates: list[str] = []
        collapsed = [_collapse(spec, resource, parent, now, taken_over, stack) for spec in resource.alias_specs]
        candidates += collapsed
        if resource.parent in taken_over:  # its parent moved: under the parent's old URN too
            old_parent, parent_name = taken_over[resource.parent], resource.parent
            for alias in [urn, *collapsed]:
                name = alias.rsplit("::", 1)[1]
                if name.startswith(parent_name):
                    name = old_parent.rsplit("::", 1)[1] + name[len(parent_name) :]
                type_ = _chain(alias).rsplit("$", 1)[-1]
                candidates.append(_urn(stack, f"{_chain(old_parent)}${type_}", name))
        if urn in claimed_by:
            problems.append(f"{urn}: already claimed as an alias by {claimed_by[urn]}")
        previous = next((candidate for candidate in [urn, *candidates] if candidate in known), None)
        if previous is None:
            created.append(urn)
            continue
        if previous != urn:
            if previous in claimed_by:
                problems.append(f"{previous}: an alias of both {claimed_by[previous]} and {urn}")
            if previous in now.values():  # a resource of this run has it as its own URN (registered before)
                problems.append(f"{previous}: the URN of a resource of this run, and an alias of {urn}")
            claimed_by[previous] = urn
            taken_over[resource.name] = previous
        kept.append((previous, urn))
    matched = {old for old, _ in kept}
    gone = [urn for urn in old_urns if urn not in matched]
    return Transition(
        kept=kept,
        created=created,
        deleted=[urn for urn in gone if urn not in retained],
        forgotten=[urn for urn in gone if urn in retained],
        problems=problems,
    )


def _collapse(
    spec: AliasSpec,
    resource: Registration,
    parent: str | None,
    now: dict[str, str],
    taken_over: dict[str, str],
    stack: str,
) -> str:
    """An alias as the URN it names (collapseAliasToUrn): the resource's own name, type and parent where
    the alias gives none; a parent given by resource stands for its old URN where it was taken over."""
    if spec.urn:
        return spec.urn
    if spec.no_parent:
        alias_parent = None
    elif spec.parent:
        alias_parent = taken_over.get(spec.parent, now[spec.parent])
    else:
        alias_parent = parent
    return _urn(stack, _qualified(alias_parent, spec.type or resource.type), spec.name or resource.name)


def _urn(stack: str, chain: str, name: str) -> str:
    return f"urn:pulumi:{stack}::{PROJECT}::{chain}::{name}"


def _chain(urn: str) -> str:
    """A URN's type chain (parent types$...$type)."""
    return urn.split("::")[2]


def _qualified(parent: str | None, type_: str) -> str:
    return type_ if parent is None else f"{_chain(parent)}${type_}"
