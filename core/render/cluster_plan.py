"""What a cluster target decides besides the stack itself, for the shell and the report.

Each cluster kind makes one (kind eks: eks_plan, from what the AWS account
reports; kind existing: existing_cluster_plan), before any resource is registered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, AddonVersion, Chart, KarpenterSettings, NodeFacts
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, EksClusterConfig, StackConfig
from gpt_oss_infra.core.render.aws import capacity
from gpt_oss_infra.core.render.aws.account import AccountFacts
from gpt_oss_infra.core.render.aws.capacity import BlockPlan
from gpt_oss_infra.core.render.aws.efa_interfaces import efa_network_interfaces
from gpt_oss_infra.core.render.aws.specs import (
    AddonSpec,
    ElasticPoolSpec,
    NodeGroupSpec,
    addons,
    api_access,
    cpu_pool,
    elastic_pool,
    gpu_node_group,
    pool_offering_problems,
    system_node_group,
    system_offering_problems,
)
from gpt_oss_infra.core.render.karpenter import KarpenterObjects, karpenter_objects
from gpt_oss_infra.core.resolve.recipes import NodePool


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


@dataclass(frozen=True)
class EksPlan:
    """The add-ons and node groups of a created cluster, decided from the config, the catalog and
    what the account reports."""

    addons: list[AddonSpec]
    groups: list[NodeGroupSpec]  # the system group first
    elastic: list[ElasticPoolSpec] = field(default_factory=list)  # pools Karpenter provisions
    karpenter: KarpenterObjects | None = None  # its release and the elastic pools' objects, with any


@dataclass(frozen=True)
class GpuGroupPlan:
    """One GPU pool's node group (or, for an elastic pool, its Karpenter NodePool), as EC2's facts allow it."""

    spec: NodeGroupSpec | ElasticPoolSpec
    block: BlockPlan | None  # a Capacity Block pool's schedule
    warnings: list[str]
    problems: list[Problem]  # each under its stack-file key (nodePools.<name>.<key>)


def gpu_group_plan(pool: NodePool, efa: bool, facts: AccountFacts) -> GpuGroupPlan:
    """The pool's node group: its EFA interfaces (`efa`) as EC2 gives them, and its Capacity Block's schedule."""
    warnings: list[str] = []
    problems = pool_offering_problems(pool, facts)
    ec2 = facts.instance_types[pool.instance_type]
    if ec2 != pool.instance.ec2:
        warnings.append(
            f"configs/hardware.yaml: {pool.instance_type}.ec2 differs from what EC2 reports "
            f"({ec2.model_dump(by_alias=True)}): update it so that offline plans match"
        )
    sold = pool.instance.sold_only_in
    if sold is not None:
        warnings.append(
            f"{KEY_PREFIX}nodePools.{pool.name}: {pool.instance_type}'s Capacity Blocks launch only in {sold.where} "
            f"({sold.published!r}, {sold.source}), and a pool here is placed in an Availability Zone of the stack's "
            "region, not a Local Zone: `pulumi up` refuses the pool once it reads its Capacity Block's zone, and this "
            "stack cannot yet deploy it"
        )
    interfaces: list[dict[str, Any]] = []
    if efa:
        interfaces, found = efa_network_interfaces(pool.instance_type, ec2, pool.instance.efa_interfaces)
        problems += found
    if pool.config.scaling is not None:
        if interfaces and not pool.config.availability_zone:
            problems.append(
                Problem(
                    f"{KEY_PREFIX}nodePools.{pool.name}.availabilityZone",
                    "required for an elastic pool with EFA: its nodes share one cluster placement group, which "
                    "lives in one zone, and Karpenter must launch every node there; one of those EC2 offers "
                    f"{pool.instance_type} in: {', '.join(sorted(facts.offered_zones[pool.instance_type]))}",
                )
            )
        return GpuGroupPlan(elastic_pool(pool, interfaces), None, warnings, problems)
    block = None
    if pool.config.capacity_type == "CAPACITY_BLOCK":
        reservation = pool.config.capacity_reservation_id
        assert reservation is not None  # required with CAPACITY_BLOCK (core.inputs.rules)
        block, found = capacity.block_plan(pool, facts.capacity_blocks[reservation], facts.now)
        problems += found
        if block is not None and block.nodes_now:
            warnings.append(
                f"nodePools.{pool.name}: Capacity Block {block.block.reservation_id} is running: AWS asks to scale "
                "its node group to 0 before an AMI or launch-template update (aws eks update-nodegroup-config "
                "--scaling-config desiredSize=0), and back after: the block has no spare instances"
            )
    return GpuGroupPlan(gpu_node_group(pool, interfaces, block), block, warnings, problems)


def eks_plan(
    config: StackConfig,
    pools: dict[str, NodePool],
    efa_pools: dict[str, bool],
    pinned_addons: dict[str, AddonVersion],
    facts: AccountFacts,
    charts: dict[str, Chart],
    karpenter: KarpenterSettings,
    node_facts: NodeFacts,
) -> ClusterPlan:
    """The cluster's add-ons and node groups, or ConfigError naming every key (or catalog entry)
    AWS would refuse."""
    cluster = config.cluster
    assert isinstance(cluster, EksClusterConfig), "eks_plan plans a cluster the program creates (cluster.kind eks)"
    addon_specs, warnings = addons(config, pinned_addons)
    groups, blocks, problems = [system_node_group(config)], {}, system_offering_problems(config, facts)
    elastic: list[ElasticPoolSpec] = []
    for pool in pools.values():
        group = gpu_group_plan(pool, efa_pools[pool.name], facts)
        problems += group.problems
        warnings += group.warnings
        if group.block is not None:
            blocks[pool.name] = group.block
        if isinstance(group.spec, ElasticPoolSpec):
            elastic.append(group.spec)
        else:
            groups.append(group.spec)
    for name, pool_config in config.node_pools.items():  # cpu pools: Karpenter's too, with no EC2 facts to read
        if pool_config.hardware == CPU_ONLY:
            size = node_facts.instance_types[pool_config.instance_type or ""]
            assert size.vcpus is not None, "a cpu pool's instance type has its vCPUs (core/inputs/rules.py)"
            elastic.append(cpu_pool(name, pool_config, size.vcpus))
    if problems:
        raise ConfigError(problems)
    return ClusterPlan(
        api_access=api_access(cluster),
        warnings=warnings,
        blocks=blocks,
        eks=EksPlan(
            addons=addon_specs,
            groups=groups,
            elastic=elastic,
            karpenter=karpenter_objects(cluster, elastic, charts, karpenter, config.environment),
        ),
    )
