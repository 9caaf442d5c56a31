"""Readiness order of a real `pulumi up`, as properties of the dependency graph the program
registers for every stack (tools/dependencies.readiness_problems; a dependency on a component
counts as one on everything under it)."""

from __future__ import annotations

import dataclasses

import pytest

from gpt_oss_infra.core.dynamo_graph import GRAPH_TYPES
from gpt_oss_infra.tools.dependencies import readiness_problems, transitive_waits
from tests.support import eks_stack_names, example_entries, run_entries, stack_entries, stack_names

# The stacks whose cluster the program creates: their node groups are its to order.
EKS_STACKS = eks_stack_names()


def _run(stack):
    run = run_entries(example_entries(stack), stack=stack)
    assert run.error is None, run.error
    return stack, run


@pytest.fixture(scope="module", params=stack_names())
def stack_run(request):
    return _run(request.param)


@pytest.fixture(scope="module", params=EKS_STACKS)
def eks_stack_run(request):
    return _run(request.param)


def test_every_stack_keeps_the_readiness_order(stack_run):
    stack, run = stack_run
    assert readiness_problems(run.resources) == [], stack
    graphs = [r for r in run.resources if r.type in GRAPH_TYPES]
    smoke_tests = [r for r in run.resources if r.name.endswith("-smoke-test") and r.type.endswith(":Job")]
    deferred = [r for r in graphs if "pulumi.com/skipAwait" in r.inputs["metadata"]["annotations"]]
    assert graphs and len(smoke_tests) == len(graphs) - len(deferred), stack  # the checks had work to do


def test_the_system_side_waits_for_system_nodes(eks_stack_run):
    stack, run = eks_stack_run
    waits = transitive_waits(run.resources)
    for name in ("gptoss-node-addons-coredns", "dynamo-platform-release", "model-cache-download"):
        assert "gptoss-nodes-system" in waits[name], (stack, name)


def test_every_graph_waits_for_its_own_pool_nodes(eks_stack_run):
    stack, run = eks_stack_run
    waits = transitive_waits(run.resources)
    entries = example_entries(stack)
    pools, elastic = entries["gpt-oss-infra:deployments"], entries.get("gpt-oss-infra:nodePools") or {}
    for graph in (r for r in run.resources if r.type in GRAPH_TYPES):
        pool = pools[graph.inputs["metadata"]["name"]].get("nodePool", "system")  # CPU workers: system nodes
        # An elastic pool's nodes come from its Karpenter NodePool, which waits for the controller.
        nodes = f"gptoss-karpenter-{pool}-node-pool" if "scaling" in elastic.get(pool, {}) else f"gptoss-nodes-{pool}"
        assert nodes in waits[graph.name], graph.name


def _rewired(run, names, dropped=frozenset(), added=frozenset()):
    """The run's registrations with `dropped` taken from, and `added` put in, the direct waits of
    the resources named (as if the program had registered them so)."""
    return [
        dataclasses.replace(r, waits_for=(r.waits_for - dropped) | added) if r.name in names else r
        for r in run.resources
    ]


def test_a_graph_that_does_not_wait_for_the_cache_is_caught(dev_run):
    """As if a GptOssDeployment did not depend on the model cache: none of its parts waits for the download."""
    serving = [r.name for r in dev_run.resources if r.name.startswith("gpt-oss")]
    broken = _rewired(dev_run, serving, dropped={"model-cache-download"})
    assert readiness_problems(broken) == ["gpt-oss-graph does not wait for model-cache-download"]


def test_a_smoke_test_that_does_not_wait_for_its_graph_is_caught(dev_run):
    broken = _rewired(dev_run, {"gpt-oss-smoke-test"}, dropped={"gpt-oss-graph"})
    assert readiness_problems(broken) == ["gpt-oss-smoke-test does not wait for gpt-oss-graph"]


def test_a_system_workload_that_waits_for_gpu_nodes_is_caught(dev_run):
    broken = _rewired(dev_run, {"model-cache-download"}, added={"gptoss-nodes-gpu"})
    problems = readiness_problems(broken)
    assert "model-cache-download waits for GPU nodes (gptoss-nodes-gpu)" in problems
    # ... and so does what waits for the download without being a GPU workload (the engine config).
    assert "gpt-oss-engine-config waits for GPU nodes (gptoss-nodes-gpu)" in problems


def test_an_upgrade_goes_crds_then_operator_then_graphs(dev_run):
    """The program's CRDs (1.2.1, staging) before the operator's release, and every graph after it; where
    the operator applies the CRDs (1.6.1, dev), the graph waits for its release, which Helm reports
    deployed only once the operator's pods are Ready, after their crd-apply init container."""
    staging = run_entries(stack_entries("staging"), stack="staging")
    waits = transitive_waits(staging.resources)
    crds = [r.name for r in staging.resources if r.type.endswith(":CustomResourceDefinition")]
    assert len(crds) == 7 and set(crds) <= waits["dynamo-platform-release"]
    assert {"dynamo-platform-release", "dynamo-platform-crd-dynamographdeployments"} <= waits["gpt-oss-graph"]
    assert not [r for r in dev_run.resources if r.type.endswith(":CustomResourceDefinition")]
    assert "dynamo-platform-release" in transitive_waits(dev_run.resources)["gpt-oss-graph"]


def test_a_graph_that_does_not_wait_for_the_operator_is_caught(dev_run):
    """As if a GptOssDeployment did not depend on the platform: none of its parts waits for anything of it."""
    serving = [r.name for r in dev_run.resources if r.name.startswith("gpt-oss")]
    platform = {r.name for r in dev_run.resources if r.name.startswith("dynamo-platform")}
    broken = _rewired(dev_run, serving, dropped=platform)
    assert readiness_problems(broken) == ["gpt-oss-graph does not wait for dynamo-platform-release"]
