"""The dependency graph of a planned stack: who waits for whom during `pulumi up`.

Built from what the program registered on the mock engine (tools.mock_engine.Registration):
explicit dependsOn, the resources an input's value comes from, and the provider. A dependency on
a component is a dependency on every resource under it, as Pulumi resolves it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from tools.mock_engine import Registration

COMPONENT_PREFIX = "gpt-oss-infra:"


def transitive_waits(resources: Iterable[Registration]) -> dict[str, frozenset[str]]:
    """For each resource, every resource it waits for, directly or through others."""
    by_name = {resource.name: resource for resource in resources}
    children: dict[str, list[str]] = {}
    for resource in by_name.values():
        if resource.parent:
            children.setdefault(resource.parent, []).append(resource.name)

    def expanded(name: str) -> set[str]:
        """A name, and for a component every resource under it."""
        names, pending = {name}, [name]
        while pending:
            current = pending.pop()
            if by_name.get(current) and by_name[current].type.startswith(COMPONENT_PREFIX):
                for child in children.get(current, []):
                    if child not in names:
                        names.add(child)
                        pending.append(child)
        return names

    @cache
    def waits(name: str) -> frozenset[str]:
        direct = set().union(*(expanded(dependency) for dependency in by_name[name].waits_for if dependency in by_name))
        return frozenset(direct.union(*(waits(dependency) for dependency in direct)))

    return {name: waits(name) for name in by_name}
