"""make simulate's results (configs/simulated.yaml) are what it would replay today, its docs table is theirs, and
the plan summary quotes the entry of a deployment replayed for the same recipe, GPUs, pool and autoscaling.
No replay runs here: tests/tools/test_planner_replay.py runs the driver."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.inputs.simulated import Simulated
from gpt_oss_infra.core.report import stack_report
from gpt_oss_infra.core.report.simulated import simulated_report
from gpt_oss_infra.core.report.stack_report import _simulated_lines
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import simulate
from tests.support import example_entries, run_entries


@pytest.fixture(scope="module")
def stored(catalog: Catalog) -> Simulated:
    assert catalog.simulated.deployments, "configs/simulated.yaml has no replay: run make simulate"
    return catalog.simulated


def test_configs_simulated_is_what_make_simulate_replays_today(catalog, stored):
    assert simulate.stale_entries(catalog, stored) == []
    assert "autoscaling/chat" in stored.deployments and "autoscaling/long-prompts" in stored.deployments


def test_a_stale_missing_or_extra_entry_is_named(catalog, stored):
    entries = dict(stored.deployments)
    chat = entries.pop("autoscaling/chat")
    entries["autoscaling/gone"] = chat
    entries["autoscaling/long-prompts"] = entries["autoscaling/long-prompts"].model_copy(update={"fingerprint": "0"})
    broken = stored.model_copy(update={"deployments": entries})
    assert simulate.stale_entries(catalog, broken) == [
        "autoscaling/chat: not simulated (run make simulate)",
        "autoscaling/gone: not a deployment make simulate replays",
        "autoscaling/long-prompts: replayed from other inputs than today's (run make simulate)",
    ]


def test_every_shipped_deployment_is_replayed_or_says_why(stored):
    every = set()
    for stack in simulate.shipped_stacks():
        deployments = example_entries(stack).get("gpt-oss-infra:deployments") or {}
        every |= {f"{stack}/{name}" for name in deployments}
    assert set(stored.deployments) | set(stored.not_simulated) == every
    assert not set(stored.deployments) & set(stored.not_simulated)
    assert all(why for why in stored.not_simulated.values())
    # Whether scaling would make sense at all is said first: no timing tables would make these worth replaying.
    assert stored.not_simulated["dev/gpt-oss"].startswith("its node pool holds one of its workers")
    assert "runs in a Capacity Block" in stored.not_simulated["h200/gpt-oss"]


def test_the_docs_table_is_configs_simulated(stored):
    page = simulate.PAGE.read_text()
    table = page.split(simulate.PAGE_BEGIN)[1].split(simulate.PAGE_END)[0].strip()
    assert table == simulate.page_table(stored)
    assert table.count("\n| autoscaling/") == 2


def test_every_replay_served_its_traffic_and_the_oracle_is_the_floor(stored):
    """What the replays found, as properties every entry holds (their exact figures vary with the Planner)."""
    checked = 0
    for key, entry in stored.deployments.items():
        runs = entry.runs
        for name, run in runs.items():
            assert run.completed == run.requests == entry.requests[name.split("/")[0]], (key, name)
        static, oracle = runs["day/static"], runs["day/oracle"]
        assert static.within_sla >= 0.99 * static.requests, key  # the peak size meets the SLA by construction
        assert oracle.gpu_hours is not None and static.gpu_hours is not None
        assert oracle.gpu_hours <= static.gpu_hours and oracle.unmet_intervals == 0, key
        assert oracle.sizes is not None and len(oracle.sizes) == 24
        checked += 1
    assert checked == len(stored.deployments) >= 4


def _autoscaling_stack(catalog: Catalog, change: dict[str, Any] | None = None):
    raw = namespace_config(example_entries("autoscaling"))
    if change:
        raw = copy.deepcopy(raw) | change
    return build_stack(raw, catalog, with_hf_token=False, region="us-east-2")


def test_the_plan_quotes_the_entry_replayed_for_the_deployment(catalog, stored):
    chat = next(s for s in _autoscaling_stack(catalog).serving if s.deployment.name == "chat").deployment
    report = simulated_report(catalog, chat)
    assert report is not None
    entry = stored.deployments["autoscaling/chat"]
    assert report["scaling"] == "worker 1..4" and report["sla"] == entry.sla
    assert report["day"]["planner"]["gpuHours"] == entry.runs["day/planner"].gpu_hours
    lines = _simulated_lines(report)
    assert lines[0].startswith("- simulated day (simulated: Dynamo 1.6.1 offline replay")
    assert f"static at the peak size {entry.runs['day/static'].gpu_hours:,.0f} GPU-hours" in lines[0]


def test_an_autoscaled_deployment_whose_replay_misses_its_targets_is_warned_about(stored):
    """autoscaling/long-prompts: the Planner kept far fewer requests within the SLA than a fixed peak size; chat
    did not. The plan says its targets are aims, and warns where the replay shows they are not kept."""
    within = {
        name: {run: 100 * stored.deployments[f"autoscaling/{name}"].runs[f"day/{run}"].within_sla
               / stored.deployments[f"autoscaling/{name}"].runs[f"day/{run}"].requests for run in ("planner", "static")}
        for name in ("chat", "long-prompts")
    }  # fmt: skip
    assert within["long-prompts"]["planner"] < within["long-prompts"]["static"] - stack_report.SLA_SHORTFALL_POINTS
    assert within["chat"]["planner"] >= within["chat"]["static"] - stack_report.SLA_SHORTFALL_POINTS
    run = run_entries(example_entries("autoscaling"), stack="autoscaling")
    warned = [w for w in run.outputs["report"]["warnings"] if ".autoscaling: on the simulated day" in w]
    assert [w.split(":")[1].split(".")[1] for w in warned] == ["long-prompts"]
    assert f"the Planner kept {within['long-prompts']['planner']:.1f}% of requests within TTFT 1000 ms" in warned[0]


def test_a_deployment_replayed_for_nothing_like_it_gets_no_figures(catalog):
    """Another pool size is another deployment: the entry is not quoted for it."""
    pools = namespace_config(example_entries("autoscaling"))["nodePools"]
    bigger = {name: pool | {"scaling": pool["scaling"] | {"maxNodes": 5}} for name, pool in pools.items()}
    stack = _autoscaling_stack(catalog, {"nodePools": bigger})
    assert [simulated_report(catalog, serving.deployment) for serving in stack.serving] == [None, None]


def test_a_deployment_worth_scaling_but_without_timing_tables_says_which_profile_to_add(catalog):
    # b200-agg-low-latency at 1 GPU: profiles cover its 4- and 8-GPU workers only.
    chat = {"recipe": "b200-agg-low-latency", "nodePool": "b200", "gpus": 1}
    pools = namespace_config(example_entries("autoscaling"))["nodePools"]
    one_node = {name: pool | {"scaling": pool["scaling"] | {"minNodes": 1}} for name, pool in pools.items()}
    (serving,) = _autoscaling_stack(catalog, {"deployments": {"chat": chat}, "nodePools": one_node}).serving
    assert simulate._not_imitated(catalog, serving.deployment) == (
        "no timing tables for its workers: add a profile to configs/mocker-timing/profiles.yaml, make mocker-timing"
    )


@pytest.fixture
def written_here(tmp_path, monkeypatch):
    """make simulate's two files as copies under tmp_path, where its run writes them."""
    for name, path in (("RESULTS", simulate.RESULTS), ("PAGE", simulate.PAGE)):
        copy_of = tmp_path / path.name
        copy_of.write_text(path.read_text())
        monkeypatch.setattr(simulate, name, copy_of)
    return tmp_path


def test_make_simulate_keeps_the_entries_of_todays_inputs_without_replaying(written_here, monkeypatch, capsys):
    """No replay repeats another to the digit: an entry whose inputs, deployment and price are today's stays."""
    replayed = []
    monkeypatch.setattr(simulate, "replay", lambda request, what: replayed.append(what) or pytest.fail(what))
    before = (written_here / "simulated.yaml").read_text()
    simulate.main([])
    assert replayed == []
    assert (written_here / "simulated.yaml").read_text() == before
    assert (written_here / "autoscaling.md").read_text() == simulate.PAGE.read_text()
    assert "autoscaling/chat: kept, its stored replay is of today's inputs" in capsys.readouterr().err


def test_make_simulate_again_replays_them(written_here, monkeypatch):
    class Replayed(Exception):
        pass

    def replay(request, what):
        raise Replayed(what)

    monkeypatch.setattr(simulate, "replay", replay)
    with pytest.raises(Replayed, match="autoscaling/chat, the highest rate its peak size serves"):
        simulate.main(["--stack", "autoscaling", "--deployment", "chat", "--again"])
