"""Serving validations that refuse a setup before GPU time is spent, and the benchmark Job."""

from __future__ import annotations

import dataclasses

import kubernetes_validate
import pytest

from core.errors import ConfigError
from core.inputs.catalog import Recipe
from core.stack import build_stack
from tests.conftest import run_entries
from tests.test_infra import example_entries


def refused(raw, catalog) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        build_stack(raw, catalog, with_hf_token=False)
    return caught.value


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
    after the two 6-GPU ones. (No seed recipe has a 6-GPU worker: one is made for this test.)"""
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
    assert stack.serving[0].graph["spec"]["services"]["TrtllmWorker"]["replicas"] == 4
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
    (warning,) = stack.warnings
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


def test_unknown_engine_key_in_overrides_names_the_closest_field(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["overrides"] = {"cuda_graph_confg": {"max_batch_size": 8}}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.overrides.cuda_graph_confg"
    assert "did you mean 'cuda_graph_config'" in problem.message


def test_disagg_overrides_are_per_role(dev_raw, catalog):
    dev_raw["nodePools"]["gpu"] = {"hardware": "b200", "nodes": 1}
    dev_raw["deployments"]["gpt-oss"] = {
        "recipe": "b200-disagg-1p4d",
        "nodePool": "gpu",
        "overrides": {"decode": {"max_batch_size": 512}, "prefil": {}},
    }
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.gpt-oss.overrides.prefil"
    del dev_raw["deployments"]["gpt-oss"]["overrides"]["prefil"]
    workers = build_stack(dev_raw, catalog, with_hf_token=False).deployments[0].workers
    assert {w.role: w.engine["max_batch_size"] for w in workers} == {"prefill": 64, "decode": 512}


def test_router_mode_reaches_the_frontend(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["routerMode"] = "kv"
    graph = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].graph
    args = graph["spec"]["services"]["Frontend"]["extraPodSpec"]["mainContainer"]["args"]
    assert args[:2] == ["--router-mode", "kv"]


@pytest.fixture(scope="module")
def disagg_run():
    run = run_entries(example_entries("b200-disagg"), stack="b200-disagg")
    assert run.error is None, run.error
    return run


def test_benchmark_job_runs_only_when_enabled_and_counts_real_gpus(disagg_run):
    jobs = [
        r
        for r in disagg_run.resources
        if r.type == "kubernetes:batch/v1:Job" and "bench" in r.inputs["metadata"]["name"]
    ]
    (job,) = jobs  # only disagg-1p4d enables it
    assert job.name == "disagg-1p4d-benchmark" and job.parent == "disagg-1p4d"
    assert "disagg-1p4d-graph" in job.options["dependsOn"]
    assert job.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
    env = {item["name"]: item["value"] for item in job.inputs["spec"]["template"]["spec"]["containers"][0]["env"]}
    # 256 per GPU x the 5 GPUs of 1P4D = 1,280 (seed 004's perf job multiplied by 6).
    assert env["CONCURRENCY"] == "1280"
    assert env["REQUEST_COUNT"] == "12800"
    assert (env["ISL"], env["OSL"]) == ("8192", "1024")
    assert env["ENDPOINT"] == "disagg-1p4d-frontend:8000"
    assert env["TOKENIZER"].endswith("/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a")
    assert env["ARTIFACT_DIR"].startswith("/opt/models/perf/")
    manifest = {"apiVersion": "batch/v1", "kind": "Job"} | {
        k: v for k, v in job.inputs.items() if k not in ("apiVersion", "kind")
    }
    assert kubernetes_validate.validate(manifest, "1.33.0", strict=True) == "1.33"


def test_benchmark_can_use_seed_002_long_context_shape(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["benchmark"] = {"enabled": True, "inputTokens": 32000, "outputTokens": 256}
    job = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].benchmark.job
    env = {item["name"]: item["value"] for item in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (env["ISL"], env["OSL"], env["CONCURRENCY"]) == ("32000", "256", str(2 * 8))
