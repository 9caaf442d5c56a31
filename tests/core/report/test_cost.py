"""What a stack costs as AWS bills it (core/resolve/cost.py, configs/prices.yaml) and what the plan
claims for throughput (configs/performance.yaml): whole pools, idle GPUs, per-region prices, unknown
rather than borrowed, and no figure scaled from another traffic point."""

from __future__ import annotations

import copy
import dataclasses
import re

import pytest

from gpt_oss_infra.core.inputs.catalog import PublishedThroughput
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan
from gpt_oss_infra.core.report.stack_report import render_summary, stack_report
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.plan import ROOT
from tests.support import example_entries, run_entries, stack_names


def report_of(name: str, catalog, region: str | None = "us-east-2", change=None, cat=None):
    raw = copy.deepcopy(namespace_config(example_entries(name)))
    if change:
        change(raw)
    stack = build_stack(raw, cat or catalog, with_hf_token=False, api_key_clients=["ci"])
    plan = ClusterPlan(api_access="", blocks={}, warnings=[])
    return stack_report(stack, cat or catalog, plan, region)


def lines_of(report) -> dict:
    return {line["item"]: line for line in report["cost"]["lines"]}


def test_a_pool_costs_all_its_nodes_and_says_how_many_gpus_sit_idle(catalog):
    """The h100 example serves 2 GPUs of a p5.48xlarge: On-Demand, the node bills $55.04, not 2/8 of it."""

    def on_demand(raw):
        raw["nodePools"]["h100"]["capacityType"] = "ON_DEMAND"

    pool = report_of("h100", catalog, change=on_demand)["nodePools"]["h100"]
    assert (pool["gpus"], pool["gpusUsed"], pool["gpusIdle"]) == (8, 2, 6)
    assert pool["usdPerHour"] == 55.04


def test_the_stack_total_adds_what_a_created_cluster_bills(catalog):
    report = report_of("dev", catalog)
    lines = lines_of(report)
    assert lines["GPU pool gpu: p5en.48xlarge"]["usdPerHour"] == 63.296
    assert lines["system nodes: m7i.2xlarge"]["usdPerHour"] == round(2 * 0.4032, 4)
    assert lines["NAT gateway (plus $0.045/GB processed)"]["usdPerHour"] == 0.045
    # dev's 1.34 is in standard support on the prices' date (until 2026-12-02): the standard rate.
    assert lines["EKS control plane, 1.34 in standard support"]["usdPerHour"] == 0.10
    gp3 = lines["EBS gp3 (node root volumes, Prometheus)"]
    # 2 system nodes x 100 GiB + 1 GPU node x 500 GiB of root volume; no Prometheus in dev.
    assert gp3["quantity"] == "700 GiB" and gp3["usdPerHour"] == round(700 * 0.08 / 730, 4)
    assert report["cost"]["unknown"] == [  # not estimated / us-east-2's EFS price unverified
        "CloudWatch Logs (control-plane logs)",
        "EFS Standard (model cache, on data stored; reads and writes per GB)",
    ]
    assert lines["public IPv4 address (the NAT's)"]["usdPerHour"] == 0.005
    assert lines["KMS key (secrets encryption)"]["usdPerHour"] == round(1 / 730, 4)
    known = sum(line["usdPerHour"] or 0 for line in report["cost"]["lines"])
    assert report["cost"]["knownUsdPerHour"] == round(known, 2)


def test_a_region_without_prices_is_unknown_never_another_regions(catalog):
    report = report_of("dev", catalog, region="eu-west-1")
    everywhere = {"public IPv4 address (the NAT's)", "KMS key (secrets encryption)"}  # one price for all regions
    assert all(line["usdPerHour"] is None for line in report["cost"]["lines"] if line["item"] not in everywhere)
    assert lines_of(report)["GPU pool gpu: p5en.48xlarge"]["basis"] == (
        "price unknown: no verified p5en.48xlarge On-Demand price for eu-west-1 in configs/prices.yaml"
    )
    no_region = report_of("dev", catalog, region=None)["cost"]
    assert no_region["knownUsdPerHour"] == round(0.005 + 1 / 730, 2)


def test_spot_and_capacity_block_pools_are_not_list_price_unless_a_price_is_given(catalog):
    def spot(raw):
        raw["nodePools"]["gpu"]["capacityType"] = "SPOT"

    line = lines_of(report_of("dev", catalog, change=spot))["GPU pool gpu: p5en.48xlarge"]
    assert line["usdPerHour"] is None
    assert line["basis"] == "Spot: not billed at list price; set gpt-oss-infra:nodePools.gpu.pricePerNodeHour"

    def priced(raw):
        spot(raw)
        raw["nodePools"]["gpu"]["pricePerNodeHour"] = 25.5

    line = lines_of(report_of("dev", catalog, change=priced))["GPU pool gpu: p5en.48xlarge"]
    assert (line["usdPerHour"], line["basis"]) == (25.5, "pricePerNodeHour (stack config)")
    block = report_of("gb200", catalog)["nodePools"]
    assert all(pool["usdPerHour"] is None for pool in block.values())


def test_a_published_figure_counts_only_at_the_deployments_point_else_the_modelled_one(catalog):
    report = report_of("dev", catalog)
    estimate = report["deployments"]["gpt-oss"]["estimate"]
    assert estimate["point"] == {"gpus": 8, "inputTokens": 1024, "outputTokens": 1024, "concurrency": 16}
    assert estimate["basis"].startswith("modelled: ")  # nothing published there (tests/core/report/test_figures.py)
    measured = PublishedThroughput.model_validate(
        {
            "outputTokensPerSecond": 1000,
            "gpus": 8,
            "concurrency": 16,
            "inputTokens": 1024,
            "outputTokens": 1024,
            "source": "x",
        }
    )
    recipes = catalog.performance.recipes | {"h200-agg-low-latency": measured}
    with_figure = dataclasses.replace(catalog, performance=catalog.performance.model_copy(update={"recipes": recipes}))
    estimate = report_of("dev", catalog, cat=with_figure)["deployments"]["gpt-oss"]["estimate"]
    assert estimate["tokensPerSecond"] == 1000
    assert estimate["usdPerMillionTokens"] == round(63.296 / (1000 * 3600) * 1e6, 3)  # the whole pool's cost

    def four_gpus(raw):
        raw["deployments"]["gpt-oss"]["gpus"] = 4

    elsewhere = report_of("dev", catalog, cat=with_figure, change=four_gpus)["deployments"]["gpt-oss"]["estimate"]
    assert elsewhere["basis"].startswith("modelled: ")  # measured on 8 GPUs: not scaled to 4
    assert elsewhere["tokensPerSecond"] == elsewhere["modelled"]["tokensPerSecond"] != 1000


def test_a_gpu_pool_no_deployment_uses_is_warned_about_with_its_cost(catalog):
    def idle(raw):
        raw["nodePools"]["spare"] = {"hardware": "h200", "nodes": 1}

    warnings = report_of("dev", catalog, change=idle)["warnings"]
    assert "gpt-oss-infra:nodePools.spare: its 8 GPUs serve no deployment, and still cost $63.30 per hour" in warnings


@pytest.mark.parametrize("stack", stack_names())
def test_every_summary_line_fits_100_columns(stack):
    run = run_entries(example_entries(stack), stack=stack)  # the run of the stack file the other tests read
    assert run.error is None, run.error
    summary = render_summary("gpt-oss-infra", stack, run.outputs["report"], [r.type for r in run.resources], [])
    assert [line for line in summary.splitlines() if len(line) > 100] == []


def test_the_quoted_dev_cost_is_what_the_dev_plan_prints(catalog):
    """README and the recipes page quote the dev stack's known cost: they must move when prices or defaults do."""
    known = report_of("dev", catalog)["cost"]["knownUsdPerHour"]
    page = (ROOT / "docs" / "recipes.md").read_text()
    assert float(re.search(r"the dev stack \(.*?\) plans at \$([\d.]+) per\s+hour known", page, re.S)[1]) == known
    readme = (ROOT / "README.md").read_text()
    assert float(re.search(r"- known: \$([\d.]+) per hour", readme)[1]) == known


def test_deployments_sharing_a_pool_share_its_cost_by_the_gpus_they_use(catalog):
    """The b200 example runs two deployments on one pool: their shares add up to the pool once."""

    def on_demand(raw):
        for pool in raw["nodePools"].values():
            pool["capacityType"] = "ON_DEMAND"
            pool.pop("capacityReservationId", None)
            pool.pop("availabilityZone", None)

    report = report_of("b200", catalog, change=on_demand)
    (pool,) = [name for name, p in report["nodePools"].items() if p["gpusUsed"]]
    sharing = [d for d in report["deployments"].values() if d["nodePool"] == pool]
    assert len(sharing) >= 2
    shares = [d["usdPerHour"] for d in sharing]
    assert round(sum(shares), 2) == round(report["nodePools"][pool]["usdPerHour"], 2)
    for deployment in sharing:
        gpus_used = report["nodePools"][pool]["gpusUsed"]
        assert deployment["usdPerHour"] == round(
            report["nodePools"][pool]["usdPerHour"] * deployment["gpus"] / gpus_used, 4
        )


def test_a_region_without_prices_is_warned_about(catalog):
    warnings = report_of("dev", catalog, region="eu-west-1")["warnings"]
    assert any(w.startswith("aws:region eu-west-1: configs/prices.yaml has no prices for it") for w in warnings)
    assert not any(w.startswith("aws:region") for w in report_of("dev", catalog)["warnings"])


def test_a_version_past_its_standard_support_is_priced_at_the_extended_rate(catalog):
    """1.33 left standard support on 2026-07-29, before the prices' date (readOn)."""

    def on_1_33(raw):
        raw["cluster"]["kubernetesVersion"] = "1.33"

    lines = lines_of(report_of("dev", catalog, change=on_1_33))
    assert lines["EKS control plane, 1.33 in extended support"]["usdPerHour"] == 0.60


def test_every_kubernetes_version_with_pinned_add_ons_has_its_support_dates(catalog):
    """A version missing from eksStandardSupportEnds would be priced at the standard rate for ever."""
    assert set(catalog.addon_versions) <= set(catalog.prices.eks_standard_support_ends)


def test_an_elastic_pool_is_priced_at_its_fewest_and_most_nodes_and_over_the_simulated_day(catalog):
    report = report_of("autoscaling", catalog)
    node = catalog.prices.regions["us-east-2"].ec2["p6-b200.48xlarge"]
    scaling = report["nodePools"]["b200"]["scaling"]
    assert (scaling["nodesAtFewest"], scaling["maxNodes"], scaling["gpuBudget"]) == (2, 4, 32)
    assert scaling["usdPerHourAtFewest"] == pytest.approx(2 * node)
    assert scaling["usdPerHourAtMost"] == pytest.approx(4 * node) == report["nodePools"]["b200"]["usdPerHour"]
    line = report["cost"]["lines"][0]
    assert line["quantity"] == "4 node(s)" and "at its most" in line["item"]  # the total counts the worst case
    day = scaling["simulatedDay"]
    gpu_hours = sum(
        catalog.simulated.deployments[f"autoscaling/{name}"].runs["day/planner"].gpu_hours
        for name in ("chat", "long-prompts")
    )
    assert day["gpuHoursPerDay"] == pytest.approx(gpu_hours, abs=0.1)
    assert day["usdPerHour"] == pytest.approx(max(gpu_hours * node / 8 / 24, 2 * node), abs=0.01)
    assert 2 * node <= day["usdPerHour"] <= 4 * node
    assert scaling["coldStartMinutes"] == [15, 45]
