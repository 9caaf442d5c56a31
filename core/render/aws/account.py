"""What the AWS account reports at deploy time, as plain values the core decides from.

The shell reads these with AWS data sources before any resource is registered
(components/aws/lookups.py): on a real `pulumi up` from EC2, in an offline plan from the mock
engine. Everything decided from them is decided in the core, like everything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpt_oss_infra.core.inputs.catalog import Ec2InstanceFacts

# EC2 Capacity Block reservation states [ec2-cb]: blocks not yet started, and blocks that can
# no longer run instances. Anything else is "active".
#   [ec2-cb] https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-using.html
UPCOMING_BLOCK_STATES = frozenset({"scheduled", "payment-pending", "pending", "assessing", "delayed"})
ENDED_BLOCK_STATES = frozenset({"expired", "cancelled", "failed", "payment-failed", "unsupported", "unavailable"})


@dataclass(frozen=True)
class CapacityBlock:
    """An EC2 Capacity Block reservation (aws.ec2.get_capacity_block_reservation)."""

    reservation_id: str
    instance_type: str
    availability_zone: str
    instance_count: int
    start: datetime
    end: datetime
    state: str

    @property
    def upcoming(self) -> bool:
        return self.state in UPCOMING_BLOCK_STATES

    @property
    def ended(self) -> bool:
        return self.state in ENDED_BLOCK_STATES


@dataclass(frozen=True)
class AccountFacts:
    instance_types: dict[str, Ec2InstanceFacts]  # every node pool's instance type
    # The region's zones where EC2 offers each node group's instance type (DescribeInstanceTypeOfferings)
    offered_zones: dict[str, frozenset[str]]
    capacity_blocks: dict[str, CapacityBlock]  # every CAPACITY_BLOCK pool's reservation, by id
    now: datetime  # when the program runs (UTC): a scheduled action can only start in the future
