"""core/render/aws/capacity.py: a Capacity Block's scheduled scaling never starts in the past."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest

from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.aws.capacity import block_plan
from gpt_oss_infra.core.stack import build_stack
from tests.support import BLOCK_END, BLOCK_START, block, example_entries


@pytest.fixture
def gb200_pool(catalog):
    stack = build_stack(namespace_config(copy.deepcopy(example_entries("gb200"))), catalog, with_hf_token=False)
    return stack.pools["gb200"]


def test_no_scheduled_action_starts_in_the_past(gb200_pool):
    # Inside the block, 30 minutes before our drain: the scale-up catches up, the drain is ahead.
    now = BLOCK_END - timedelta(minutes=100)
    plan, problems = block_plan(gb200_pool, block("active"), now=now)
    assert problems == [] and plan.desired_at_creation == 9 and plan.nodes_now
    start, end = plan.schedules
    assert start.start_time_at(now) == "2030-01-21T09:55:00Z"  # now + 5 minutes, not the block's past start
    assert end.start_time_at(now) == "2030-01-21T10:20:00Z"
    # After our drain time: nothing left to schedule, nothing serves (Auto Scaling refuses past starts).
    plan, _ = block_plan(gb200_pool, block("active"), now=BLOCK_END - timedelta(minutes=65))
    assert plan.schedules == [] and not plan.nodes_now and plan.desired_at_creation == 0
    # A block starting in two minutes: the scale-up stays in place, starting once it can.
    now = BLOCK_START - timedelta(minutes=2)
    plan, _ = block_plan(gb200_pool, block("scheduled"), now=now)
    assert [s.name for s in plan.schedules] == ["gb200-start-cr-0a1b2c3d4e5f60718", "gb200-end-cr-0a1b2c3d4e5f60718"]
    assert plan.schedules[0].start_time_at(now) == "2030-01-07T11:33:00Z"
    assert plan.desired_at_creation == 0 and not plan.nodes_now
