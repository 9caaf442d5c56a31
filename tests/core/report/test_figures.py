"""core/report/figures.py: every figure of a deployment says whether it is published, modelled or
simulated, and from what; the modelled one only where the deployment is at the recipe's modelled point."""

from __future__ import annotations

import dataclasses

from gpt_oss_infra.core.inputs.catalog import PublishedThroughput
from gpt_oss_infra.core.report import figures
from gpt_oss_infra.core.stack import build_stack
from tests.support import MODELLED_BY


def deployment_of(raw, catalog, name="gpt-oss"):
    stack = build_stack(raw, catalog, with_hf_token=True)
    return next(d for d in stack.deployments if d.name == name)


def test_the_dev_deployment_gets_the_modelled_figures_of_its_recipe_at_its_gpus(dev_raw, catalog):
    deployment = deployment_of(dev_raw, catalog)  # h200-agg-low-latency on 8 GPUs
    stored = catalog.estimates.recipes["h200-agg-low-latency"][8]
    estimate = figures.throughput_estimate(catalog, deployment, 63.296)
    per_second = round(stored.figures.output_tokens_per_second_per_gpu * 8, 1)
    assert estimate["tokensPerSecond"] == per_second
    assert estimate["usdPerMillionTokens"] == round(63.296 / (per_second * 3600) * 1e6, 3)
    assert estimate["basis"] == (
        f"modelled: {MODELLED_BY}, h200_sxm trtllm {stored.database} database, at the recipe's point; "
        "not its inputs: max_seq_len unset (TensorRT-LLM's default): AISimulate takes isl + osl; "
        "moe_config.backend TRITON"
    )
    modelled = estimate["modelled"]
    assert (modelled["ttftMs"], modelled["tpotMs"]) == (stored.figures.ttft_ms, stored.figures.tpot_ms)
    assert estimate["published"].startswith("none at this point; nearest: [inferencex-gptoss-blog]")


def test_a_published_measurement_at_the_point_wins_and_the_modelled_one_stays_beside_it(dev_raw, catalog):
    measured = PublishedThroughput.model_validate(
        {"outputTokensPerSecond": 1000, "gpus": 8, "concurrency": 16, "inputTokens": 1024, "outputTokens": 1024,
         "source": "x"}
    )  # fmt: skip
    performance = catalog.performance.model_copy(
        update={"recipes": catalog.performance.recipes | {"h200-agg-low-latency": measured}}
    )
    with_figure = dataclasses.replace(catalog, performance=performance)
    estimate = figures.throughput_estimate(with_figure, deployment_of(dev_raw, with_figure), 63.296)
    assert (estimate["tokensPerSecond"], estimate["basis"], estimate["published"]) == (
        1000,
        "published: x",
        "published: x",
    )
    assert estimate["modelled"]["basis"].startswith("modelled: NVIDIA AISimulate")


def test_overrides_that_change_the_point_leave_it_unmodelled(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["overrides"] = {"kv_cache_config": {"free_gpu_memory_fraction": 0.5}}
    estimate = figures.throughput_estimate(catalog, deployment_of(dev_raw, catalog), 63.296)
    assert estimate["tokensPerSecond"] is None
    assert estimate["basis"] == "unknown: not modelled: this deployment's overrides change the recipe's modelled point"


def test_a_recipe_whose_stored_point_is_stale_says_so(dev_raw, catalog):
    recipe = catalog.recipes["h200-agg-low-latency"]
    traffic = recipe.traffic.model_copy(update={"input_tokens": 2048})
    stale = dataclasses.replace(
        catalog, recipes=catalog.recipes | {"h200-agg-low-latency": recipe.model_copy(update={"traffic": traffic})}
    )
    estimate = figures.throughput_estimate(stale, deployment_of(dev_raw, stale), 63.296)
    assert estimate["basis"] == (
        "unknown: not modelled: h200-agg-low-latency's point changed since configs/estimates.yaml was written "
        "(run make estimate)"
    )


def test_a_point_the_simulator_has_no_kernels_for_says_its_reason(catalog):
    # GB200's database has no MoE tensor-parallel kernels; B200's has them since AISimulate (docs/recipes.md).
    assert catalog.estimates.recipes["b200-disagg-1p4d"][5].figures is not None
    reason = catalog.estimates.recipes["gb200-disagg-1p4d"][5].not_modelled
    assert reason.startswith("PerfDataNotAvailableError: perf database error: MoE data missing")
    assert "moe_tp_size: 4, moe_ep_size: 1" in reason


def test_the_recipe_is_compared_with_the_best_configuration_at_its_gpus_and_goal(dev_raw, catalog):
    estimate = figures.throughput_estimate(catalog, deployment_of(dev_raw, catalog), 63.296)
    best = estimate["bestConfiguration"]
    search = catalog.estimates.searches["h200-agg-low-latency"]
    assert (best["goal"], best["targets"], best["gpus"]) == ("low-latency", "TTFT <= 1000 ms, TPOT <= 10 ms", 8)
    top = search.best[0]
    assert best["best"] == figures.describe(top, 8)
    assert top.ttft_ms <= 1000 and top.tpot_ms <= 10  # the search keeps only configurations that meet the targets
    fraction = round(estimate["modelled"]["tokensPerSecondPerGpu"] / top.tokens_per_second_per_gpu, 3)
    assert best["fractionOfBest"] == fraction
    assert best["flagged"] == (fraction < 0.9)


def test_a_recipe_that_meets_the_targets_above_every_searched_configuration_is_the_best(catalog):
    search = catalog.estimates.searches["gb200-agg-max-throughput"]
    top = search.best[0].tokens_per_second_per_gpu
    own = {"tokensPerSecondPerGpu": top * 1.2, "ttftMs": 100, "tpotMs": 20}
    compared = figures.against_best(catalog, "gb200-agg-max-throughput", 4, own)
    assert (compared["fractionOfBest"], compared["flagged"], compared["meetsTargets"]) == (1.0, False, True)
    assert compared["best"].startswith("this recipe: it meets the targets")
    missing = figures.against_best(catalog, "gb200-agg-max-throughput", 4, own | {"tpotMs": 500})
    assert missing["fractionOfBest"] == 1.2 and missing["meetsTargets"] is False  # more, but not at the targets


def test_a_deployment_at_another_gpu_count_than_the_search_gets_no_fraction(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["gpus"] = 4
    best = figures.throughput_estimate(catalog, deployment_of(dev_raw, catalog), 63.296)["bestConfiguration"]
    assert best["gpus"] == 8 and "fractionOfBest" not in best
