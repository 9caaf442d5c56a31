"""The launch-template layout of a node's EFA interfaces, from its network cards as EC2 reports them."""

from __future__ import annotations

from typing import Any

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import Ec2InstanceFacts


def efa_network_interfaces(
    instance_type: str, ec2: Ec2InstanceFacts, wanted: int
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Launch-template interfaces for `wanted` EFA devices, from the instance type's network cards
    as EC2 reports them [ec2-efa-layout]: the primary ENA interface on card 0, and one EFA-only
    interface on each of `wanted` of the fastest cards, spread evenly over them. Card 0 holds the
    primary and takes an EFA-only interface (device index 1) only when every card is needed: on
    p6e-gb200 it must stay ENA only. On p5, p5en and p6-b200 that is every card; on p6e-gb200 it
    is cards 1, 5, 9 and 13, AWS's 4 x 400 Gbps example.
      [ec2-efa-layout] https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html
    """
    fastest = max(ec2.network_card_peak_gbps)
    candidates = [card for card, gbps in enumerate(ec2.network_card_peak_gbps) if gbps == fastest]
    if 0 in candidates and wanted < len(candidates):
        candidates.remove(0)
    usable = min(len(candidates), ec2.efa_maximum_interfaces)
    if wanted > usable:
        return [], [
            Problem(
                f"configs/hardware.yaml: {instance_type}.efaInterfaces",
                f"{wanted} EFA devices per node, but EC2 gives {instance_type} {usable} "
                f"({len(candidates)} network cards at {fastest:g} Gbps, at most {ec2.efa_maximum_interfaces} EFA)",
            )
        ]
    chosen = [candidates[i * len(candidates) // wanted] for i in range(wanted)]
    interfaces = [{"network_card_index": 0, "device_index": 0, "interface_type": "interface"}]
    interfaces += [
        {"network_card_index": card, "device_index": 1 if card == 0 else 0, "interface_type": "efa-only"}
        for card in chosen
    ]
    return interfaces, []
