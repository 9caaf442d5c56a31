"""The dependency graph of a planned stack: who waits for whom during `pulumi up`.

Built from what the program registered on the mock engine (tools.pulumi_engine.Registration):
explicit dependsOn, the resources an input's value comes from, and the provider. A dependency on
a component is a dependency on every resource under it, as Pulumi resolves it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from gpt_oss_infra.core.dynamo_graph import GRAPH_TYPES
from gpt_oss_infra.tools.pulumi_engine import Registration

COMPONENT_PREFIX = "gpt-oss-infra:"


def direct_waits(resources: Iterable[Registration]) -> dict[str, frozenset[str]]:
    """For each resource, the resources it waits for itself (a component stands for all under it)."""
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

    return {
        name: frozenset(
            set().union(*(expanded(dependency) for dependency in resource.waits_for if dependency in by_name))
        )
        for name, resource in by_name.items()
    }


def transitive_waits(resources: Iterable[Registration]) -> dict[str, frozenset[str]]:
    """For each resource, every resource it waits for, directly or through others."""
    direct = direct_waits(resources)

    @cache
    def waits(name: str) -> frozenset[str]:
        return frozenset(direct[name].union(*(waits(dependency) for dependency in direct[name])))

    return {name: waits(name) for name in direct}


JOB_TYPE = "kubernetes:batch/v1:Job"
NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"
GPU_JOB_COMPONENTS = {"benchmark", "smoke-test"}  # Jobs that talk to the GPU workers
# What every graph must wait for: the operator's Helm release (which waits for the operator's pods
# to be Ready, after its crd-apply init container, where the operator applies the CRDs), and the Job
# that completes only with every weight in the cache; and its CRD, where the program applies it.
GRAPH_PREREQUISITES = ("dynamo-platform-release", "model-cache-download")
GRAPH_CRD = "dynamo-platform-crd-dynamographdeployments"


def readiness_problems(resources: list[Registration]) -> list[str]:
    """How the planned graph breaks the readiness order of a `pulumi up`, one line per problem:
    - nothing but GPU workloads (graphs, their smoke tests and benchmarks) waits on a GPU node
      group, so that a GPU pool still booting (or a Capacity Block not started) holds up nothing else;
    - every graph waits for GRAPH_PREREQUISITES, and for GRAPH_CRD where the program applies it;
    - every smoke test waits for its graph."""
    waits = transitive_waits(resources)
    gpu_groups = {
        r.name
        for r in resources
        if r.type == NODE_GROUP_TYPE and r.inputs["labels"].get("nvidia.com/gpu.present") == "true"
    }
    problems = []
    for resource in resources:
        if resource.type.startswith(COMPONENT_PREFIX):
            continue  # a component is its children, checked one by one
        component = resource.inputs.get("metadata", {}).get("labels", {}).get("app.kubernetes.io/component")
        gpu_workload = resource.type in GRAPH_TYPES or (resource.type == JOB_TYPE and component in GPU_JOB_COMPONENTS)
        own_part = any(resource.name.startswith(f"{group}-") for group in gpu_groups)  # e.g. its scaling schedule
        if not gpu_workload and not own_part and waits[resource.name] & gpu_groups:
            problems.append(
                f"{resource.name} waits for GPU nodes ({', '.join(sorted(waits[resource.name] & gpu_groups))})"
            )
        if resource.type in GRAPH_TYPES:
            prerequisites = [*GRAPH_PREREQUISITES, *([GRAPH_CRD] if GRAPH_CRD in waits else [])]
            missing = [name for name in prerequisites if name not in waits[resource.name]]
            if missing:
                problems.append(f"{resource.name} does not wait for {', '.join(missing)}")
        if resource.type == JOB_TYPE and component == "smoke-test":
            graph = f"{resource.inputs['metadata']['labels']['gpt-oss-infra/deployment']}-graph"
            if graph not in waits[resource.name]:
                problems.append(f"{resource.name} does not wait for {graph}")
    return problems
