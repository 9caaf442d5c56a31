"""Every pod the program renders asks for CPU and memory (none is BestEffort, the first evicted under
memory pressure and starved on a busy node) and sets a memory limit, in every stack: the graphs'
frontends, workers and their init containers, the Jobs, the teardown guards and Envoy's proxies.
The charts' own pods (the Dynamo operator, Prometheus, Envoy Gateway's controller) are the charts'
values, placed by the scheduling check (core/checks/scheduling.py), not rendered here."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.tools.plan import manifests
from tests.support import example_entries, run_entries, stack_names

GRAPH = "DynamoGraphDeployment"
GPU_STACKS_WORKER = {"cpu": "128", "memory": "1600Gi"}  # an 8-GPU worker: 16 CPUs and 200 GiB per GPU


def containers(manifest: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each container of the pods a manifest makes: (where, container)."""
    kind, name = manifest["kind"], manifest["metadata"]["name"]
    if kind == GRAPH:
        for component in graph_components(manifest):
            for container in [*(component.pod.get("initContainers") or []), component.main]:
                yield f"{name}/{component.name}/{container.get('name', 'main')}", container
    elif kind == "EnvoyProxy":
        yield f"{name}/envoy", manifest["spec"]["provider"]["kubernetes"]["envoyDeployment"]["container"]
    elif kind in ("Job", "Deployment"):
        spec = manifest["spec"]["template"]["spec"]
        for container in [*(spec.get("initContainers") or []), *spec["containers"]]:
            yield f"{name}/{container['name']}", container


def without_requests(objects: list[dict[str, Any]]) -> list[str]:
    """The containers that ask for no CPU or no memory, or set no memory limit."""
    missing = []
    for manifest in objects:
        for where, container in containers(manifest):
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            if not {"cpu", "memory"} <= set(requests) or "memory" not in limits:
                missing.append(where)
    return missing


@pytest.mark.parametrize("stack", stack_names())
def test_every_pod_of_every_stack_asks_for_cpu_and_memory_and_limits_memory(stack):
    run = run_entries(example_entries(stack), stack=stack)  # the run of the stack file the other tests read
    assert run.error is None, run.error
    objects = manifests(run)
    checked = [where for manifest in objects for where, _ in containers(manifest)]
    assert any("/Frontend/" in where for where in checked) and any("/wait-for-model" in w for w in checked)
    assert without_requests(objects) == []


def test_a_gpu_worker_gets_its_gpus_share_of_cpu_and_memory():
    run = run_entries(example_entries("dev"), stack="dev")
    (graph,) = [m for m in manifests(run) if m["kind"] == GRAPH]
    by_name = {component.name: component for component in graph_components(graph)}
    assert by_name["TrtllmWorker"].gpus == 8
    resources = by_name["TrtllmWorker"].main["resources"]
    assert resources == {"requests": GPU_STACKS_WORKER, "limits": {"memory": "2000Gi"}}
    assert by_name["Frontend"].main["resources"] == {
        "requests": {"cpu": "1", "memory": "2Gi"},  # one worker pod behind it
        "limits": {"memory": "4Gi"},
    }


def test_the_check_finds_a_container_without_requests():
    run = run_entries(example_entries("dev"), stack="dev")
    objects = copy.deepcopy(manifests(run))
    (job,) = [m for m in objects if m["kind"] == "Job" and m["metadata"]["name"].startswith("model-download")]
    del job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"]
    assert without_requests(objects) == [f"{job['metadata']['name']}/download"]
