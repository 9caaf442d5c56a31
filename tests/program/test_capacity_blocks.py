"""Capacity Block node groups in the real program follow AWS's lifecycle: empty until the block starts,
scaled by scheduled actions Pulumi does not fight, drained before EC2 reclaims the instances."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pulumi
import pytest

from tests.support import by_name, example_entries, run_entries, run_in_account


def test_prod_block_group_starts_empty_and_scales_up_at_the_block_start():
    run = run_entries(example_entries("prod"), stack="prod")
    assert run.error is None, run.error
    resources = by_name(run)
    group = resources["gptoss-nodes-gpu"]
    assert group.inputs["scalingConfig"] == {"desiredSize": 0, "minSize": 0, "maxSize": 2}
    assert group.options["ignoreChanges"] == ["scalingConfig.desiredSize"]  # the schedules own it
    assert group.inputs["updateConfig"]["updateStrategy"] == "MINIMAL"
    assert group.inputs["nodeRepairConfig"] == {"enabled": False}
    schedules = [r for r in run.resources if r.type == "aws:autoscaling/schedule:Schedule"]
    # p6-b200 blocks are reclaimed 30 minutes before the end: EKS's own scale-down at 40 drains them.
    assert [s.name for s in schedules] == ["gptoss-nodes-gpu-block-start"]
    (start,) = schedules
    assert start.inputs == {
        "autoscalingGroupName": "eks-gptoss-nodes-gpu-asg",  # the node group's own Auto Scaling group
        "desiredCapacity": 2,
        "maxSize": -1,
        "minSize": -1,
        # Named after the block: a new block gets a new action.
        "scheduledActionName": "gpt-oss-infra-gpu-start-cr-0fedcba9876543210",
        "startTime": "2030-01-07T11:30:00Z",  # the block's start as EC2 reports it (here: the mock)
    }
    assert start.options["ignoreChanges"] == ["startTime"]  # later `up`s leave it alone
    # Nothing can serve before the block starts: the graph is created without waiting, and the
    # outputs say when it will be checked.
    graph = resources["gpt-oss-graph"]
    assert graph.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
    assert not [r for r in run.resources if r.name.startswith("gpt-oss-smoke-test")]
    assert "cr-0fedcba9876543210 starts (2030-01-07 11:30 UTC)" in run.outputs["servingChecks"]["gpt-oss"]
    pool = run.outputs["report"]["nodePools"]["gpu"]["capacityBlock"]
    assert pool == {
        "reservation": "cr-0fedcba9876543210",
        "state": "scheduled",
        "start": "2030-01-07T11:30:00Z",
        "end": "2030-01-21T11:30:00Z",
        "nodesAppear": "2030-01-07T11:30:00Z",
        "drainedAt": "2030-01-21T10:50:00Z",
    }


def test_ultraserver_block_drains_before_ec2_reclaims_it():
    """p6e-gb200 blocks are reclaimed 60 minutes before the end, before EKS's 40-minute scale-down."""
    run = run_entries(example_entries("gb200"), stack="gb200")
    assert run.error is None, run.error
    schedules = {r.name: r for r in run.resources if r.type == "aws:autoscaling/schedule:Schedule"}
    assert schedules["gptoss-nodes-gb200-block-start"].inputs["desiredCapacity"] == 9
    end = schedules["gptoss-nodes-gb200-block-end"]
    assert end.inputs["desiredCapacity"] == 0 and end.inputs["startTime"] == "2030-01-21T10:20:00Z"  # 70 min early
    assert "options" not in end.as_json() or "ignoreChanges" not in end.options


def _activate(account):
    """The block started yesterday and runs for a week."""
    for block in account.capacity_blocks.values():
        block |= {
            "state": "active",
            "startDate": (datetime.now(UTC) - timedelta(days=1)).isoformat(),
            "endDate": (datetime.now(UTC) + timedelta(days=6)).isoformat(),
        }


def test_an_active_block_gets_its_nodes_at_once_and_serving_is_awaited():
    before = datetime.now(UTC)
    run = run_in_account(example_entries("prod"), _activate, stack="prod")
    assert run.error is None, run.error
    resources = by_name(run)
    assert resources["gptoss-nodes-gpu"].inputs["scalingConfig"]["desiredSize"] == 2
    # The scale-up stays until the block drains: a group already at 0 (created before the block,
    # or drained from an earlier block) gets its nodes minutes after this `up` creates the action.
    (start,) = [r for r in run.resources if r.type == "aws:autoscaling/schedule:Schedule"]
    start_time = datetime.fromisoformat(start.inputs["startTime"])
    assert before + timedelta(minutes=4) < start_time < datetime.now(UTC) + timedelta(minutes=6)
    assert resources["gpt-oss-graph"].inputs["metadata"]["annotations"]["pulumi.com/waitFor"] == "condition=Ready"
    assert "gpt-oss-smoke-test" in resources
    assert run.outputs["servingChecks"]["gpt-oss"].startswith("answered a chat completion")
    assert run.outputs["report"]["nodePools"]["gpu"]["capacityBlock"]["nodesAppear"] == "now"
    # Updating a running block's group needs AWS's scale-to-0 step first: said on every such `up`.
    assert any("Capacity Block cr-0fedcba9876543210 is running: AWS asks to scale" in line for line in run.log)


def test_a_block_past_its_drain_waits_for_the_next_block():
    def drained(account):
        _activate(account)
        for block in account.capacity_blocks.values():
            block["endDate"] = (datetime.now(UTC) + timedelta(minutes=20)).isoformat()

    run = run_in_account(example_entries("prod"), drained, stack="prod")
    assert run.error is None, run.error
    assert not [r for r in run.resources if r.type == "aws:autoscaling/schedule:Schedule"]
    assert by_name(run)["gptoss-nodes-gpu"].inputs["scalingConfig"]["desiredSize"] == 0
    assert by_name(run)["gpt-oss-graph"].inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
    assert "drains its nodes at" in run.outputs["servingChecks"]["gpt-oss"]
    assert "set the pool's next block" in run.outputs["servingChecks"]["gpt-oss"]


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (lambda block: block.update(instanceType="p5.48xlarge"), "capacityReservationId", "reserves p5.48xlarge"),
        (lambda block: block.update(availabilityZone="us-east-2c"), "availabilityZone", "is in us-east-2c"),
        (lambda block: block.update(instanceCount=1), "nodes", "holds 1 instances, not 2"),
        (lambda block: block.update(state="expired"), "capacityReservationId", "is expired"),
    ],
)
def test_a_block_ec2_would_refuse_is_refused_before_anything_is_built(change, key, message):
    def edit(account):
        for block in account.capacity_blocks.values():
            change(block)

    run = run_in_account(example_entries("prod"), edit, stack="prod")
    assert isinstance(run.error, pulumi.RunError)
    assert f"gpt-oss-infra:nodePools.gpu.{key}: " in str(run.error) and message in str(run.error)
    assert run.resources == []


def test_an_unknown_reservation_is_named():
    run = run_in_account(example_entries("prod"), lambda account: account.capacity_blocks.clear(), stack="prod")
    assert isinstance(run.error, pulumi.RunError)
    assert "gpt-oss-infra:nodePools.gpu.capacityReservationId: cannot read Capacity Block cr-0fedcba9876543210" in (
        str(run.error)
    )
    assert run.resources == []
