"""The public GpuNodePool block: an EKS managed node group of one catalog hardware type, on a cluster
of the program's, checked against EC2 before anything is registered. GptOssStack makes each GPU pool
of a cluster it creates with this block too (`GpuNodePool.of_stack`).
This module is analyzed for the component schema: no postponed annotations here."""

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.arguments import refusal, refuse_bad_arguments
from gpt_oss_infra.components.aws.build import Built, register
from gpt_oss_infra.components.aws.lookups import pool_facts
from gpt_oss_infra.components.base import Component, provider_of
from gpt_oss_infra.components.block_decisions import pools_of_this_program, refused
from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.checks.aws_contract import aws_refusals
from gpt_oss_infra.core.errors import ConfigError, Problem, refuse
from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.core.render.aws.account import AccountFacts
from gpt_oss_infra.core.render.aws.resources import AwsResource, gpu_node_pool
from gpt_oss_infra.core.render.aws.specs import NodeGroupSpec
from gpt_oss_infra.core.render.labels import POOL_LABEL

_NO_REGION = "required: the region EC2 is asked in (give region, or pulumi config set aws:region <region>)"


class GpuNodePoolArgs(TypedDict):
    cluster_name: pulumi.Input[str]
    """The name of the EKS cluster the nodes join (`cluster.name`); where EFA needs them, its VPC and
    cluster security group are read from EKS."""
    subnet_ids: pulumi.Input[list[pulumi.Input[str]]]
    """The cluster's private subnets the nodes may use. The node group gets those in zones where EC2
    offers the instance type (in `availability_zone` alone where the pool pins one), and an EFA pool
    without a reservation the first of them (its cluster placement group lives in one zone)."""
    hardware: str
    """A hardware type of the catalog (configs/hardware.yaml): h100, h200, b200 or gb200."""
    nodes: int
    """How many nodes (0 keeps an empty group ready to scale)."""
    capacity_type: NotRequired[str | None]
    """ON_DEMAND (the default), SPOT or CAPACITY_BLOCK (with capacity_reservation_id)."""
    capacity_reservation_id: NotRequired[str | None]
    """The Capacity Block or On-Demand Capacity Reservation the nodes run in (cr-...)."""
    instance_type: NotRequired[str | None]
    """One of the hardware's instance types; default: its first."""
    availability_zone: NotRequired[str | None]
    """The zone the nodes must be in (a reservation's); default: any of the subnets' where EC2 offers
    the instance type."""
    efa: NotRequired[bool | None]
    """EFA network interfaces on every node, for KV-cache transfers across nodes (default: off)."""
    disk_size_gib: NotRequired[int | None]
    """The root volume in GiB (default 500: runtime images are large)."""
    node_role_arn: NotRequired[pulumi.Input[str] | None]
    """The IAM role the nodes join with (your other node groups' role); default: one made here with the
    AWS-managed worker, ECR and VPC CNI policies (the CNI uses the node's role unless it has its own
    identity through IRSA or Pod Identity)."""
    environment: NotRequired[str | None]
    """Tagged on the node group for cost reports and policies (default: dev)."""
    region: NotRequired[str | None]
    """The region of the AWS provider the pool is made with (default: aws:region): the offline checks
    are for it. Pass that provider in `opts.providers`, and EC2 is asked through it too; a provider that
    builds in another region is refused."""


class GpuNodePool(Component):
    """An EKS managed node group of one catalog hardware type, on a cluster of the program's: the
    hardware's AMI and instance type, the GPU taint and the labels a GptOssDeployment selects by
    (`node_pool` = this pool's name), an IMDSv2-only launch template with an encrypted root volume, and
    where asked EFA interfaces, a cluster placement group and a Capacity Block's scaling schedule.
    The instance type, its offering in the region, EFA interfaces and a reservation are checked
    against EC2 before anything is registered."""

    node_group_name: pulumi.Output[str]
    """The managed node group's name in EKS."""
    node_labels: pulumi.Output[dict[str, str]]
    """The labels every node of the pool carries."""

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_bad_arguments("GpuNodePool", name, args, GpuNodePoolArgs)
        catalog = load_catalog()
        region = args.get("region") or pulumi.Config("aws").get("region")
        if not region:  # EC2 is asked about the instance type in the region the nodes are made in
            raise refusal("GpuNodePool", name, ConfigError([Problem("region", _NO_REGION)]))
        block = refused(
            "GpuNodePool", name, lambda: blocks.gpu_node_pool(name, blocks.whole(dict(args)), catalog, region)
        )
        # Before this component exists, EC2 is asked through the provider its children will use, which must
        # build in the region the pool was checked for.
        provider = pulumi.InvokeOptions(provider=provider_of(opts, "aws"))
        refused("GpuNodePool", name, lambda: refuse(_region_problems(region, args.get("region"), provider)))
        facts = refused("GpuNodePool", name, lambda: _asked_about(block, provider))
        planned = refused("GpuNodePool", name, lambda: blocks.gpu_node_group(block, facts))
        spec = planned.spec
        assert isinstance(spec, NodeGroupSpec), "a GpuNodePool is a managed node group: it takes no scaling"
        resources = gpu_node_pool(name, spec, block.environment, with_role=args.get("node_role_arn") is None)
        # What AWS would refuse of them, under the argument that holds the value.
        given: dict[str, Any] = {"cluster_name": args["cluster_name"], "node_role_arn": args.get("node_role_arn")}
        if problems := aws_refusals(resources, dict(args), given=given):
            raise refusal("GpuNodePool", name, ConfigError(problems))
        for warning in planned.warnings:
            pulumi.log.warn(warning)
        self._begin(name, opts)
        # What a GptOssDeployment of this program that names this pool (node_pool) is checked against.
        pools_of_this_program()[name] = blocks.PoolFacts(
            block.pool.config.hardware,
            block.pool.config.most_nodes,
            {POOL_LABEL: name},
            efa=bool(spec.network_interfaces),
        )
        on_this = pulumi.InvokeOutputOptions(parent=self)
        zones = [spec.availability_zone] if spec.availability_zone else sorted(facts.offered_zones[spec.instance_type])
        given["subnet_ids"] = usable_subnets(args["subnet_ids"], zones, spec.instance_type, on_this)
        if spec.network_interfaces:  # EFA: the cluster's network, as EKS has it
            network = aws.eks.get_cluster_output(name=args["cluster_name"], opts=on_this).vpc_config
            given |= {"vpc_id": network.vpc_id, "cluster_security_group_id": network.cluster_security_group_id}
        group = self._register(resources, {}, given)
        self.node_group_name = group.node_group_name
        self._publish(group)

    @classmethod
    def of_stack(
        cls,
        name: str,
        resources: list[AwsResource],
        built: Built,
        moved_from: pulumi.Resource,
        opts: pulumi.ResourceOptions,
    ) -> "GpuNodePool":
        """One GPU pool of GptOssStack's created cluster, as the stack config decided it (its checks are the
        stack's): `resources`, whose Refs may name the cluster's resources in `built` (its node role). Before
        0.4.1 they were children of the cluster's node groups component, `moved_from`: each keeps its URN."""
        pool = cls.__new__(cls)
        pool._begin(name, opts)
        group = pool._register(resources, built, {}, aliases=[pulumi.Alias(parent=moved_from)])
        pool.node_group_name = group.node_group_name
        pool._publish(group)
        return pool

    def _begin(self, name: str, opts: pulumi.ResourceOptions | None) -> None:
        """Registers the component itself (its children follow: the public path asks EC2 as this
        component before it registers them)."""
        super().__init__("gpt-oss-infra:index:GpuNodePool", name, None, opts)

    def _register(
        self,
        resources: list[AwsResource],
        built: Built,
        given: dict[str, Any],
        aliases: list[pulumi.Alias] | None = None,
    ) -> aws.eks.NodeGroup:
        """The pool's resources, its children; its node group."""
        register(self, resources, built, given, aliases)
        (group,) = [built[r.name] for r in resources if r.type == "aws:eks/nodeGroup:NodeGroup"]
        assert isinstance(group, aws.eks.NodeGroup)
        self.node_group = group  # what the pool's workloads wait for
        return group

    def _publish(self, group: aws.eks.NodeGroup) -> None:
        self.node_labels = group.labels.apply(lambda labels: dict(labels or {}))
        self.register_outputs({"nodeGroupName": self.node_group_name, "nodeLabels": self.node_labels})


def _asked_about(block: blocks.PoolBlock, provider: pulumi.InvokeOptions) -> AccountFacts:
    """What EC2 says of the pool's instance type (and its Capacity Block), or ConfigError keyed by argument."""
    try:
        return pool_facts([block.pool], [], provider)
    except ConfigError as error:
        raise ConfigError(blocks.pool_arguments(error.problems, block.pool.name)) from None


def _region_problems(region: str, given: str | None, provider: pulumi.InvokeOptions) -> list[Problem]:
    """The region the pool's AWS provider builds in, as that provider answers, against the one it was checked
    for (`given`, else aws:region): one pool is never checked for one region and made in another."""
    builds_in = aws.get_region(opts=provider).region
    if builds_in is None or builds_in == region:  # None: a provider not configured yet, at a preview
        return []
    checked_for = f"region is {region!r}" if given else f"aws:region is {region!r} (region not given)"
    made_by = "the AWS provider of opts (or its parent)" if provider.provider else "the default AWS provider"
    return [
        Problem(
            "region",
            f"{checked_for}, but {made_by} makes the pool in {builds_in!r}: give region={builds_in!r}, or make "
            f"the pool with a provider of {region!r}",
        )
    ]


def usable_subnets(
    subnet_ids: pulumi.Input[list[pulumi.Input[str]]],
    zones: list[str],
    instance_type: str,
    opts: pulumi.InvokeOutputOptions,
) -> pulumi.Output[list[str]]:
    """The given subnets in `zones`, in the order given (EC2 knows each subnet's zone); none is an error
    of `up`, since the subnets may be known only then."""
    given = pulumi.Output.from_input(subnet_ids)
    filters: list[Any] = [{"name": "subnet-id", "values": given}, {"name": "availability-zone", "values": zones}]
    found = aws.ec2.get_subnets_output(filters=filters, opts=opts).ids

    def in_zones(both: list[list[str]]) -> list[str]:
        wanted, in_zone = both
        usable = [subnet for subnet in wanted if subnet in in_zone]
        if not usable:
            raise ValueError(
                f"none of the subnets {', '.join(wanted)} is in a zone where the pool can run {instance_type} "
                f"({', '.join(zones)}): give subnet_ids in those zones"
            )
        return usable

    return pulumi.Output.all(given, found).apply(in_zones)
