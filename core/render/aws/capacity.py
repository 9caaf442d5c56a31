"""Capacity Block node groups, following AWS's documented lifecycle.

[eks-cb] "Create a managed node group with Capacity Blocks for ML":
- a node group created before its block is active starts at desired size 0, and is scaled up when
  the block starts, e.g. by a scheduled action on its Auto Scaling group at the block's start;
- EKS itself scales the group to 0 forty minutes before the block ends ("Amazon EKS Node Group
  Capacity Scaledown Before Reservation End"), because EC2 starts terminating the instances 30
  minutes before the end.
[ec2-cb] UltraServer blocks (P6e-GB200) are reclaimed 60 minutes before the end, before EKS's
own scale-down: those groups get a scale-down of their own, drain margin included.
From then on the scheduled actions own the group's desired size, so Pulumi ignores it
(`ignoreChanges: scalingConfig.desiredSize`) instead of fighting them on the next `up`.

The scale-up action stays in the program from before the block starts until its nodes are
drained, so it is never deleted before it fires, and it is named after the reservation, so a new
block gets a new one. Auto Scaling refuses a start time in the past, so the action starts at the
block's start or, when that has passed (or is about to) by the time the action is created, a few
minutes after its creation (`start_time_at`, evaluated when it is created); later `up`s leave
its start time alone (`ignoreChanges: startTime`). A group created inside the block, or whose
block started while no action was in place, gets its nodes from that action within minutes.

  [eks-cb] https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html
  [ec2-cb] https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.config import KEY_PREFIX
from gpt_oss_infra.core.render.aws.account import CapacityBlock
from gpt_oss_infra.core.resolve.recipes import NodePool

EKS_SCALEDOWN_BEFORE_END = timedelta(minutes=40)  # [eks-cb]
# EKS's 40 minutes are EC2's 30-minute reclaim plus 10 to drain: the same margin before an earlier reclaim.
DRAIN_MARGIN = timedelta(minutes=10)
# Auto Scaling refuses a scheduled action whose start time is past; one this close would be.
SCHEDULE_LEAD = timedelta(minutes=5)


@dataclass(frozen=True)
class ScheduledScaling:
    """An Auto Scaling scheduled action on a node group's group: set its desired size at `at`."""

    name: str  # the action's name in Auto Scaling, unique per group
    at: datetime
    desired: int
    # Start at `at`, or a few minutes after the action is created when `at` has passed by then;
    # its start time is then left alone (the scale-up at a block's start).
    catch_up: bool = False

    def start_time_at(self, now: datetime) -> str:
        """The start time to create the action with at `now`, as YYYY-MM-DDThh:mm:ssZ (the only form
        Auto Scaling takes)."""
        at = max(self.at, now + SCHEDULE_LEAD) if self.catch_up else self.at
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class BlockPlan:
    block: CapacityBlock
    desired_at_creation: int  # Pulumi sets it once; the scheduled actions own it afterwards
    schedules: list[ScheduledScaling]
    nodes_now: bool  # the block is active: its nodes run (and serve) now
    drained_at: datetime  # when the group goes to 0 before the block ends (EKS's or ours)


def block_plan(pool: NodePool, block: CapacityBlock, now: datetime) -> tuple[BlockPlan | None, list[Problem]]:
    """The pool's scaling over its block's window, or the problems that would make AWS refuse it."""
    key = f"{KEY_PREFIX}nodePools.{pool.name}"
    config = pool.config
    problems = []
    if block.instance_type != pool.instance_type:
        problems.append(
            Problem(
                f"{key}.capacityReservationId",
                f"{block.reservation_id} reserves {block.instance_type}, not the pool's {pool.instance_type}",
            )
        )
    if block.availability_zone != config.availability_zone:
        problems.append(
            Problem(
                f"{key}.availabilityZone",
                f"{block.reservation_id} is in {block.availability_zone}, not {config.availability_zone}",
            )
        )
    if block.instance_count < config.most_nodes:
        problems.append(
            Problem(
                f"{key}.nodes",
                f"{block.reservation_id} holds {block.instance_count} instances, not {config.most_nodes}",
            )
        )
    if block.ended and config.most_nodes > 0:
        problems.append(
            Problem(
                f"{key}.capacityReservationId",
                f"{block.reservation_id} is {block.state} (ended {_utc(block.end)}): buy a new block and set "
                "its id, or set nodes: 0",
            )
        )
    if problems:
        return None, problems

    reclaim = timedelta(minutes=pool.instance.capacity_block_reclaim_minutes)
    ours_drain = reclaim + DRAIN_MARGIN > EKS_SCALEDOWN_BEFORE_END  # EKS's own scale-down would come too late
    drained_at = block.end - (reclaim + DRAIN_MARGIN if ours_drain else EKS_SCALEDOWN_BEFORE_END)
    before_drain = not block.ended and now + SCHEDULE_LEAD < drained_at
    schedules = []
    if before_drain:
        schedules.append(
            ScheduledScaling(f"{pool.name}-start-{block.reservation_id}", block.start, config.most_nodes, catch_up=True)
        )
        if ours_drain:
            schedules.append(ScheduledScaling(f"{pool.name}-end-{block.reservation_id}", drained_at, 0))
    nodes_now = not block.upcoming and before_drain
    return (
        BlockPlan(
            block=block,
            # Created before its block starts, the group stays empty until the scale-up; created
            # inside it, it asks for its nodes at once (the scale-up repeats the same size).
            desired_at_creation=config.most_nodes if nodes_now else 0,
            schedules=schedules,
            nodes_now=nodes_now,
            drained_at=drained_at,
        ),
        [],
    )


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")
