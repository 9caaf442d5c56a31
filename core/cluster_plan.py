"""What a cluster target decides besides the stack itself, for the shell and the report.

Each cluster kind makes one (kind eks: core.aws.specs.eks_plan, from what the AWS account
reports; kind existing: existing_cluster_plan), before any resource is registered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpt_oss_infra.core.aws.capacity import BlockPlan
    from gpt_oss_infra.core.aws.specs import EksPlan


@dataclass(frozen=True)
class ClusterPlan:
    api_access: str  # how `pulumi up` and kubectl reach the Kubernetes API: said in the summary
    warnings: list[str] = field(default_factory=list)
    blocks: dict[str, BlockPlan] = field(default_factory=dict)  # Capacity Block pools: when nodes come and go
    eks: EksPlan | None = None  # kind eks: the add-ons and node groups

    def waiting_pools(self) -> dict[str, str]:
        """Pools whose nodes cannot run now, and why: their graphs are not awaited yet."""
        waiting = {}
        for pool, plan in self.blocks.items():
            block = plan.block
            if plan.nodes_now:
                continue
            if block.upcoming:
                waiting[pool] = (
                    f"the pool's nodes arrive when Capacity Block {block.reservation_id} starts "
                    f"({block.start:%Y-%m-%d %H:%M} UTC); run `pulumi up` again after that"
                )
            else:
                waiting[pool] = (
                    f"Capacity Block {block.reservation_id} drains its nodes at {plan.drained_at:%Y-%m-%d %H:%M} UTC "
                    f"before it ends ({block.end:%Y-%m-%d %H:%M} UTC): set the pool's next block"
                )
        return waiting


def existing_cluster_plan() -> ClusterPlan:
    return ClusterPlan(
        api_access="through your kubeconfig (kubernetes:kubeconfig / kubernetes:context, else KUBECONFIG)"
    )
