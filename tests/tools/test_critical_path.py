"""tools/critical_path.py: the plan summary's critical path to serving, from the registered
dependency graph and the durations AWS and NVIDIA publish (configs/durations.yaml)."""

from __future__ import annotations

import yaml

from gpt_oss_infra.tools.critical_path import critical_path, load_phases, render
from tests.support import example_entries, successful_run


def steps(run):
    return [(step.phase.phase, step.resource) for step in critical_path(run.resources, load_phases())]


def test_the_dev_stack_path_runs_from_the_cluster_to_the_smoke_test(dev_run):
    assert steps(dev_run) == [
        ("EKS cluster", "gptoss-eks-cluster"),
        ("EKS add-on", "gptoss-addons-vpc-cni"),
        ("managed node group (nodes Ready)", "gptoss-nodes-system"),
        ("EKS add-on", "gptoss-node-addons-coredns"),
        ("model download (gpt-oss-120b weights into the cache)", "model-cache-download"),
        ("graph Ready (image pull, weight load)", "gpt-oss-graph"),
        ("smoke test", "gpt-oss-smoke-test"),
    ]
    lines = render(critical_path(dev_run.resources, load_phases()))
    assert "1. EKS cluster, `gptoss-eks-cluster`: 15 min (typically takes about 15 minutes)" in lines
    assert "At least 30 minutes by published figures, plus 5 phase(s) with none published." in lines


def test_a_graph_waiting_for_a_capacity_block_ends_the_path():
    """prod's pool is a Capacity Block that has not started: its graph is not awaited, no smoke test."""
    prod = successful_run(example_entries("prod"), stack="prod")
    assert steps(prod)[-1] == ("graph Ready (image pull, weight load)", "gpt-oss-graph")


def test_on_an_elastic_pool_the_graph_waits_for_its_node_to_launch():
    """The autoscaling example's graphs run on Karpenter's pool: the node a graph's pods wait for is a phase."""
    autoscaling = steps(successful_run(example_entries("autoscaling"), stack="autoscaling"))
    node = "an elastic pool's node (launch to registered, once the graph's pods wait for it)"
    assert (node, "gptoss-karpenter-b200-node-pool") in autoscaling
    assert [phase for phase, _ in autoscaling].index(node) + 1 == [phase for phase, _ in autoscaling].index(
        "graph Ready (image pull, weight load)"
    )


def test_the_durations_are_read_by_libyaml(monkeypatch):
    """Every plan reads configs/durations.yaml: with LibYAML's parser, as the catalog is read (PyYAML's own
    took about 10 ms of every plan). The pure-Python loader is taken away to prove it."""
    expected = load_phases()
    monkeypatch.setattr(yaml, "SafeLoader", None)  # yaml.safe_load would fail now
    assert load_phases() == expected
    assert any(phase.minutes == 15 for phase in expected)
