"""Read what the core decides the node groups from, before any resource is registered.

Plain AWS data-source calls (invokes), answered by EC2 on `pulumi up` and `pulumi preview` and by
the mock engine in an offline plan. A reservation that cannot be read is a config problem, named
like every other before anything is built.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.base import provider_of
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import Ec2InstanceFacts
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, EksClusterConfig
from gpt_oss_infra.core.render.aws.account import AccountFacts, CapacityBlock
from gpt_oss_infra.core.render.stack_objects import Stack
from gpt_oss_infra.core.resolve.recipes import NodePool


def refuse_other_regions(opts: pulumi.ResourceOptions | None) -> None:
    """GptOssStack makes, checks and prices everything in the stack's `aws:region`, through the default
    AWS provider. An AWS provider of the caller's would make the cluster in its own region, which
    nothing here can read before resources exist: refused, so that one stack never mixes two regions."""
    if provider_of(opts, "aws") is not None:
        raise pulumi.RunError(
            "GptOssStack: opts (or its parent) gives an AWS provider; GptOssStack makes, checks and prices "
            "everything in the stack's aws:region with the default AWS provider, so that a plan never prices one "
            "region and builds in another: make the stack without that provider and set the region with pulumi "
            "config set aws:region <region> (or build with the GpuNodePool, DynamoPlatform, ModelCache and "
            "GptOssDeployment blocks)"
        )


def account_facts(stack: Stack, opts: pulumi.InvokeOptions | None = None) -> AccountFacts:
    """What EC2 says of the stack's instance types and reservations; `opts`: the provider to ask through."""
    cluster = stack.config.cluster
    assert isinstance(cluster, EksClusterConfig), "account facts are read for a cluster the program creates"
    return pool_facts(list(stack.pools.values()), [cluster.system_nodes.instance_type], opts)


def pool_facts(pools: list[NodePool], other_types: list[str], opts: pulumi.InvokeOptions | None = None) -> AccountFacts:
    """What EC2 says of the pools' instance types and reservations, and where `other_types` (the system
    nodes') are offered; `opts`: the provider to ask through."""
    instance_types = sorted({pool.instance_type for pool in pools})
    blocks: dict[str, CapacityBlock] = {}
    problems = []
    for pool in pools:
        reservation = pool.config.capacity_reservation_id
        if pool.config.capacity_type != "CAPACITY_BLOCK":
            continue
        assert reservation is not None, "the config's rules require a reservation with CAPACITY_BLOCK"
        try:
            blocks[reservation] = _capacity_block(reservation, opts)
        except Exception as error:  # the invoke's error names what EC2 said
            problems.append(
                Problem(
                    f"{KEY_PREFIX}nodePools.{pool.name}.capacityReservationId",
                    f"cannot read Capacity Block {reservation} from EC2: {error}",
                )
            )
    if problems:
        raise ConfigError(problems)
    return AccountFacts(
        instance_types={name: _instance_type(name, opts) for name in instance_types},
        offered_zones=_offered_zones(sorted({*instance_types, *other_types}), opts),
        capacity_blocks=blocks,
        now=datetime.now(UTC),
    )


def _instance_type(name: str, opts: pulumi.InvokeOptions | None) -> Ec2InstanceFacts:
    described = aws.ec2.get_instance_type(instance_type=name, opts=opts)
    cards = sorted(described.network_cards, key=lambda card: card.index)
    return Ec2InstanceFacts.model_validate(
        {
            "networkCardPeakGbps": [card.peak_bandwidth for card in cards],
            "efaMaximumInterfaces": described.efa_maximum_interfaces or 0,
        }
    )


def _offered_zones(instance_types: list[str], opts: pulumi.InvokeOptions | None) -> dict[str, frozenset[str]]:
    """The availability zones of the region where EC2 offers each instance type to this account."""
    found = aws.ec2.get_instance_type_offerings(
        filters=[{"name": "instance-type", "values": instance_types}],
        location_type="availability-zone",
        opts=opts,
    )
    offered = defaultdict(set)
    for instance_type, zone in zip(found.instance_types, found.locations, strict=True):
        offered[instance_type].add(zone)
    return {instance_type: frozenset(offered[instance_type]) for instance_type in instance_types}


def _capacity_block(reservation_id: str, opts: pulumi.InvokeOptions | None) -> CapacityBlock:
    block = aws.ec2.get_capacity_block_reservation(id=reservation_id, opts=opts)
    return CapacityBlock(
        reservation_id=reservation_id,
        instance_type=block.instance_type,
        availability_zone=block.availability_zone,
        instance_count=block.instance_count,
        start=datetime.fromisoformat(block.start_date),
        end=datetime.fromisoformat(block.end_date),
        state=block.state,
    )
