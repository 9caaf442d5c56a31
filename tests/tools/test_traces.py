"""The traces make simulate replays (tools/traces.py): the day's rate follows its hours, arrivals are as many as
the rate says, lengths stay within the recipe's, shared prefixes are shared and nothing else is, and the same
spec always gives the same rows (configs/simulated.yaml's fingerprints rely on it)."""

from __future__ import annotations

import pytest

from gpt_oss_infra.tools import traces

SHAPE = traces.TraceShape(input_tokens=2048, output_tokens=512, length_floor=0.5, block_tokens=512)


def test_the_day_rate_is_each_hours_share_at_its_midpoint_and_linear_between():
    rate = traces.hourly_rate([0.2, 1.0, 0.6], peak_per_s=10.0, hour_s=100.0)
    assert rate(50.0) == pytest.approx(2.0)  # hour 0's midpoint
    assert rate(150.0) == pytest.approx(10.0)  # hour 1's
    assert rate(100.0) == pytest.approx(6.0)  # halfway between
    assert rate(0.0) == pytest.approx(2.0) and rate(299.0) == pytest.approx(6.0)  # flat past the end midpoints


def test_arrivals_follow_the_rate_and_the_seed():
    steady = traces.arrivals(lambda _: 20.0, 20.0, 600.0, seed=1)
    assert 11_400 < len(steady) < 12_600  # 12,000 expected; Poisson's spread is about 110
    assert steady == sorted(steady) and steady[-1] < 600.0
    half = traces.arrivals(lambda t: 20.0 if t < 300 else 0.0, 20.0, 600.0, seed=1)
    assert all(time < 300 for time in half) and 5_600 < len(half) < 6_400
    assert traces.arrivals(lambda _: 20.0, 20.0, 600.0, seed=1) == steady
    assert traces.arrivals(lambda _: 20.0, 20.0, 600.0, seed=2) != steady


def test_lengths_stay_between_the_floor_and_the_recipes_and_hash_ids_cover_the_prompt():
    rows = traces.rows(traces.arrivals(lambda _: 5.0, 5.0, 200.0, seed=3), SHAPE, seed=3)
    assert len(rows) > 800
    assert all(1024 <= row["input_length"] <= 2048 and 256 <= row["output_length"] <= 512 for row in rows)
    assert all(len(row["hash_ids"]) == -(-row["input_length"] // 512) for row in rows)
    everyone = [block for row in rows for block in row["hash_ids"]]
    assert len(everyone) == len(set(everyone))  # no shared prefixes asked for: no block is shared


def test_shared_prefixes_are_shared_within_a_group_only():
    rows = traces.rows([float(t) for t in range(400)], SHAPE, seed=4, groups=4, prefix_share=0.75)
    by_group: dict[int, list[list[int]]] = {}
    for row in rows:
        blocks = row["hash_ids"]
        shared = int(len(blocks) * 0.75)
        assert shared >= 1
        group = blocks[0] // traces.GROUP_BLOCKS
        assert blocks[:shared] == [group * traces.GROUP_BLOCKS + index for index in range(shared)]
        by_group.setdefault(group, []).append(blocks[shared:])
    assert sorted(by_group) == [0, 1, 2, 3]
    own = [block for tails in by_group.values() for tail in tails for block in tail]
    assert len(own) == len(set(own)) and min(own) >= 4 * traces.GROUP_BLOCKS


def test_the_same_spec_gives_the_same_rows():
    """Pinned: a change to the generator changes this digest, and every fingerprint of configs/simulated.yaml
    must then be replayed again (make simulate)."""
    rate = traces.hourly_rate([0.3, 1.0], 4.0, 60.0)
    rows = traces.rows(traces.arrivals(rate, 4.0, 120.0, seed=7), SHAPE, seed=7, groups=2, prefix_share=0.5)
    assert len(rows) == 317
    assert traces.digest(rows) == "fc81a1566d226a948a84fefdc950587ae37add8fb7cbdd916cef6132414a407d"
