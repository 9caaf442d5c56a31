"""core/resolve/sizing.py: workers must be placeable on their pool's nodes and fit their GPUs' memory."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from gpt_oss_infra.core.dynamo_graph import components_by_name
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import Recipe
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.resolve.sizing import budget_splits
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, refused


def test_placement_keeps_efa_prefill_and_decode_apart(catalog):
    """1 prefill + 1 decode (5 GPUs) fit one node by GPUs; with EFA they need two."""
    entries = copy.deepcopy(example_entries("b200-disagg"))
    entries["gpt-oss-infra:nodePools"]["b200"]["efa"] = True
    entries["gpt-oss-infra:nodePools"]["b200"]["nodes"] = 1
    del entries["gpt-oss-infra:deployments"]["disagg-4p4d"]
    entries["gpt-oss-infra:deployments"]["disagg-1p4d"]["replicas"] = 1
    # One node and EFA asked for: the deployment stays on the node, nothing crosses, no anti-affinity.
    stack = build_stack(namespace_config(copy.deepcopy(entries)), catalog, with_hf_token=False)
    assert all(worker.efa is None for worker in stack.serving[0].deployment.workers)
    # Two nodes, and the 4P4D deployment too: 13 GPUs on 16, but each deployment's prefill and
    # decode must be apart; first-fit decreasing finds room (4|4, 4|1).
    entries = copy.deepcopy(example_entries("b200-disagg"))
    stack = build_stack(namespace_config(entries), catalog, with_hf_token=False)
    assert stack.efa_pools == {"b200": True}
    # Three replicas of 1P4D on two nodes: 15 GPUs fit, but no node can hold a decode away from
    # every prefill of its deployment.
    del entries["gpt-oss-infra:deployments"]["disagg-4p4d"]
    entries["gpt-oss-infra:deployments"]["disagg-1p4d"]["replicas"] = 3

    with pytest.raises(ConfigError) as caught:
        build_stack(namespace_config(entries), catalog, with_hf_token=False)
    (problem,) = caught.value.problems
    assert problem.key == "gpt-oss-infra:deployments.disagg-1p4d.nodePool"
    assert "prefill and decode workers need different nodes (EFA)" in problem.message


def gb200_pool(nodes: int) -> dict:
    return {
        "hardware": "gb200",
        "nodes": nodes,
        "capacityType": "CAPACITY_BLOCK",
        "capacityReservationId": "cr-0123456789abcdef0",
        "availabilityZone": "us-east-2b",
    }


def test_disagg_that_cannot_be_packed_on_the_pool_is_refused(dev_raw, catalog):
    """GB200 nodes have 4 GPUs: a 4-GPU aggregated worker and the 1P4D's TP4 decode fill two nodes,
    and the TP1 prefill has nowhere to go."""
    dev_raw["nodePools"]["gpu"] = gb200_pool(2)
    dev_raw["deployments"] = {
        "agg": {"recipe": "gb200-agg-max-throughput", "nodePool": "gpu"},
        "disagg": {"recipe": "gb200-disagg-1p4d", "nodePool": "gpu"},
    }
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.disagg.nodePool"
    assert "cannot place a 1-GPU prefill worker" in problem.message  # 4 + 4 fill both nodes; the prefill GPU is left
    # 8 GPUs in all, 9 asked; three nodes place them.
    dev_raw["nodePools"]["gpu"]["nodes"] = 3
    assert build_stack(dev_raw, catalog, with_hf_token=False).deployments[1].total_gpus == 5


def test_packing_is_by_node_not_by_total(dev_raw, catalog):
    """Two 8-GPU nodes hold 16 GPUs, and 6 + 6 + 4 = 16, but no node has room for the 4-GPU worker
    after the two 6-GPU ones. (No shipped recipe has a 6-GPU worker: one is made for this test.)"""
    h200 = catalog.recipes["h200-agg-low-latency"].model_dump(by_alias=True)
    h200["workers"]["worker"]["gpus"] = {"allowed": [4, 6], "default": 6}
    six = Recipe.model_validate(h200)
    wide_catalog = dataclasses.replace(catalog, recipes=catalog.recipes | {"h200-six": six})
    dev_raw["nodePools"]["gpu"]["nodes"] = 2
    dev_raw["deployments"] = {
        "a": {"recipe": "h200-six", "nodePool": "gpu"},
        "b": {"recipe": "h200-six", "nodePool": "gpu"},
        "c": {"recipe": "h200-six", "nodePool": "gpu", "gpus": 4},
    }
    (problem,) = refused(dev_raw, wide_catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.c.nodePool"
    assert "cannot place a 4-GPU worker" in problem.message and "need 16 GPUs" in problem.message


def test_replicas_scale_workers_and_must_fit(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"]["nodes"] = 2
    dev_raw["deployments"]["gpt-oss"] |= {"gpus": 4, "replicas": 4}
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    assert components_by_name(stack.serving[0].graph)["TrtllmWorker"].replicas == 4
    assert stack.deployments[0].total_gpus == 16
    dev_raw["deployments"]["gpt-oss"]["replicas"] = 5
    assert refused(dev_raw, catalog).problems[0].key == "gpt-oss-infra:deployments.gpt-oss.nodePool"


def test_a_batch_size_whose_kv_cannot_fit_is_refused(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"] |= {"gpus": 1, "overrides": {"max_batch_size": 100000}}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.overrides.max_batch_size"
    assert "max_batch_size 100000" in problem.message and "the cache holds about" in problem.message


def test_a_recipe_batch_size_out_of_reach_is_only_a_warning(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["gpus"] = 1  # TRT-LLM's default batch 2048 on one H200
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    (warning,) = [w for w in stack.warnings if w.startswith("gpt-oss-infra:deployments.")]  # besides the release's
    assert warning.startswith("gpt-oss-infra:deployments.gpt-oss: TrtllmWorker: max_batch_size 2048")


def test_a_config_that_cannot_load_is_refused(dev_raw, catalog):
    """One H100 (80 GB) with almost no memory left for KV after 60.8 GiB of weights."""
    dev_raw["nodePools"]["gpu"] = {"hardware": "h100", "nodes": 1}
    dev_raw["deployments"]["gpt-oss"] = {
        "recipe": "h100-agg-long-context",
        "nodePool": "gpu",
        "overrides": {"kv_cache_config": {"free_gpu_memory_fraction": 0.0001}},
    }
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.gpus"
    assert "leave no KV cache" in problem.message


def test_the_planner_may_split_a_disaggregated_graphs_budget_any_way(catalog):
    """long-prompts (configs/examples/Pulumi.autoscaling.yaml): prefill 1..4 workers of 1 GPU, decode 1..2 of 4,
    a budget of 12 GPUs. The Planner bounds the total only: the full splits are both maxima, and eight prefill
    workers beside one decode worker."""
    built = build_stack(namespace_config(example_entries("autoscaling")), catalog, with_hf_token=False)
    (long_prompts,) = [s.deployment for s in built.serving if s.deployment.name == "long-prompts"]
    assert [sorted(split.values()) for split in budget_splits(long_prompts)] == [[2, 4], [1, 8]]
    (chat,) = [s.deployment for s in built.serving if s.deployment.name == "chat"]
    assert budget_splits(chat) == []  # one scaled role: its maximum is the budget
