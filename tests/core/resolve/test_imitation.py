"""The trial recipes imitate real ones (core/resolve/imitation.py): their mocker limits are the real
workers', and their timing tables (configs/mocker-timing/) were modelled for those workers, up to
their limits, by NVIDIA AISimulate."""

from __future__ import annotations

import dataclasses

import pytest

from gpt_oss_infra.core.resolve.imitation import imitated_worker
from gpt_oss_infra.core.yaml_files import read_yaml
from gpt_oss_infra.tools.mocker_timing import TIMING_DIR, limit_problems
from tests.support import MODELLED_BY

PROFILES = read_yaml(TIMING_DIR / "profiles.yaml")


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_trial_recipes_carry_the_imitated_workers_limits(catalog, name):
    """A profile times a trial recipe (whose limits must be the imitated worker's), or a shipped deployment's
    workers in make simulate (which takes the limits from the imitated worker itself)."""
    users = [
        r
        for r in catalog.recipes.values()
        if any(w.engine.get("planner_profile_data") == name for w in r.workers.values())
    ]
    spec = PROFILES[name]
    simulated = [
        entry
        for entry in catalog.simulated.deployments.values()
        if entry.match.recipe == spec["recipe"]
        and all(entry.match.gpus.get(spec[side]["role"]) == spec[side]["gpus"] for side in ("prefill", "decode"))
    ]
    assert users or simulated, f"no recipe is timed by {name}, and make simulate replays no deployment with it"
    assert limit_problems(catalog, name, PROFILES[name]) == []


def test_a_limit_that_differs_from_the_imitated_worker_is_named_with_the_value_to_write(catalog):
    recipe = catalog.recipes["trial-mocker-agg"]
    worker = recipe.workers["worker"].model_copy(
        update={"engine": recipe.workers["worker"].engine | {"max_num_seqs": 8}}
    )
    edited = recipe.model_copy(update={"workers": {"worker": worker}})
    broken = dataclasses.replace(catalog, recipes=catalog.recipes | {"trial-mocker-agg": edited})
    assert limit_problems(broken, "h200-agg-low-latency-1gpu", PROFILES["h200-agg-low-latency-1gpu"]) == [
        "configs/recipes/trial-mocker-agg.yaml workers.worker.engine.max_num_seqs: 8, but h200-agg-low-latency's "
        "worker worker at 1 GPU(s) has 2048"
    ]


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_tables_reach_the_imitated_workers_limits(catalog, name):
    spec, tables = PROFILES[name], read_yaml(TIMING_DIR / f"{name}.yaml")
    prefill = imitated_worker(catalog, spec["recipe"], spec["prefill"]["role"], spec["prefill"]["gpus"])
    decode = imitated_worker(catalog, spec["recipe"], spec["decode"]["role"], spec["decode"]["gpus"])
    assert tables["recipe"] == spec["recipe"] and tables["modelledBy"]["tool"] == MODELLED_BY
    assert tables["prefill"]["islTokens"][-1] == prefill.max_seq_len
    assert tables["decode"]["maxKvTokens"] == tables["decode"]["activeKvTokens"][-1] == decode.kv_token_capacity
    assert tables["decode"]["contextTokens"][-1] == decode.max_seq_len
    grid = tables["decode"]["itlMs"]
    assert len(grid) == len(tables["decode"]["activeKvTokens"])
    assert {len(row) for row in grid} == {len(tables["decode"]["contextTokens"])}
    assert all(ms > 0 for row in grid for ms in row) and all(ms > 0 for ms in tables["prefill"]["ttftMs"])
    for axis in (tables["prefill"]["islTokens"], tables["decode"]["activeKvTokens"], tables["decode"]["contextTokens"]):
        assert axis == sorted(set(axis))  # the mocker searches them: strictly increasing


def test_the_h200_table_agrees_with_aiconfigurators_own_estimate(catalog):
    """`aiconfigurator cli estimate ... --system h200_sxm --tp 1 --batch-size 16 --isl 1024 --osl 1024` gave
    TTFT 138 ms and TPOT 12.9 ms (run 2026-11-25): the table's cells around 16 sequences of 1-2K tokens
    (16K-32K active tokens) hold that TPOT, and a 1024-token prefill is the single-request part of that TTFT."""
    tables = read_yaml(TIMING_DIR / "h200-agg-low-latency-1gpu.yaml")
    decode, prefill = tables["decode"], tables["prefill"]
    at = {
        kv: dict(zip(decode["contextTokens"], row, strict=True))
        for kv, row in zip(decode["activeKvTokens"], decode["itlMs"], strict=True)
    }
    assert 11.0 < at[16384][1024] < 14.5 and 11.0 < at[32768][2048] < 14.5
    assert 40 < dict(zip(prefill["islTokens"], prefill["ttftMs"], strict=True))[1024] < 138
