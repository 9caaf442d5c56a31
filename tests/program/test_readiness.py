"""Readiness order of a real `pulumi up`, read from the dependency graph the program registers."""

from __future__ import annotations

import pytest

from tests.support import example_entries, run_entries, stack_names
from tools.dependencies import transitive_waits

# Every stack whose cluster the program creates (the GPU node groups are ours to order).
AWS_STACKS = [name for name in stack_names() if example_entries(name)["gpt-oss-infra:cluster"]["kind"] == "eks"]
GRAPH_TYPE = "kubernetes:nvidia.com/v1alpha1:DynamoGraphDeployment"
GPU_JOB_COMPONENTS = {"benchmark", "smoke-test"}  # Jobs that talk to the GPU workers


@pytest.fixture(scope="module", params=AWS_STACKS)
def stack_run(request):
    run = run_entries(example_entries(request.param), stack=request.param)
    assert run.error is None, run.error
    return request.param, run


def gpu_node_groups(run) -> set[str]:
    return {
        r.name
        for r in run.resources
        if r.type == "aws:eks/nodeGroup:NodeGroup" and r.inputs["labels"].get("nvidia.com/gpu.present") == "true"
    }


def is_gpu_workload(resource) -> bool:
    if resource.type == GRAPH_TYPE:
        return True
    labels = resource.inputs.get("metadata", {}).get("labels", {})
    return (
        resource.type == "kubernetes:batch/v1:Job" and labels.get("app.kubernetes.io/component") in GPU_JOB_COMPONENTS
    )


def test_only_gpu_workloads_wait_for_gpu_nodes(stack_run):
    stack, run = stack_run
    waits = transitive_waits(run.resources)
    gpu_groups = gpu_node_groups(run)
    assert gpu_groups, stack
    checked = []
    for resource in run.resources:
        if is_gpu_workload(resource) or any(resource.name.startswith(f"{group}-") for group in gpu_groups):
            continue  # GPU workloads, and each GPU node group's own parts (its scaling schedule)
        assert not waits[resource.name] & gpu_groups, (stack, resource.name, sorted(waits[resource.name] & gpu_groups))
        checked.append(resource.name)
    # The add-ons that need nodes, the platform and the weight download were among those checked.
    assert {"gptoss-node-addons-coredns", "dynamo-platform-release", "model-cache-download"} <= set(checked)
    for name in ("gptoss-node-addons-coredns", "dynamo-platform-release", "model-cache-download"):
        assert "gptoss-nodes-system" in waits[name], name


def test_every_graph_waits_for_its_own_pool_nodes(stack_run):
    stack, run = stack_run
    waits = transitive_waits(run.resources)
    graphs = [r for r in run.resources if r.type == GRAPH_TYPE]
    assert graphs
    pools = example_entries(stack)["gpt-oss-infra:deployments"]
    for graph in graphs:
        pool = pools[graph.inputs["metadata"]["name"]]["nodePool"]
        assert f"gptoss-nodes-{pool}" in waits[graph.name], graph.name
