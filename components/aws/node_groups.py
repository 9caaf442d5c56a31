"""Managed node groups: the system (CPU) group and one GPU group per node pool.

Every group gets a launch template: IMDSv2 only, an encrypted gp3 root volume of the pool's size,
and where the pool needs them the Capacity Block / reservation settings and the EFA interfaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.aws.iam import role_with_managed_policies
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.core.render.aws import specs as aws_specs


@dataclass(frozen=True)
class NodeGroupsArgs:
    cluster: aws.eks.Cluster
    groups: list[aws_specs.NodeGroupSpec]  # the system group first
    subnet_ids: list[pulumi.Input[str]]  # private subnets, in availability_zone_order
    subnet_by_zone: dict[str, pulumi.Input[str]]  # the private subnet of each pinned AZ
    environment: str  # tagged on every group: policies and cost reports read it


class NodeGroups(Component):
    def __init__(self, name: str, args: NodeGroupsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:NodeGroups", name, None, opts)
        role = node_role(self, f"{name}-node-role")
        network = args.cluster.vpc_config
        interface_groups = (
            efa_interface_groups(self, name, network.cluster_security_group_id, network.vpc_id)
            if any(spec.network_interfaces for spec in args.groups)
            else []
        )
        self.node_groups = {
            spec.pool: add_node_group(
                self,
                f"{name}-{spec.pool}",
                spec,
                NodeGroupPlacement(args.cluster.name, role.arn, _subnets(spec, args), interface_groups),
                args.environment,
            )
            for spec in args.groups
        }
        self.register_outputs({"nodeGroups": list(self.node_groups)})


def _subnets(spec: aws_specs.NodeGroupSpec, args: NodeGroupsArgs) -> list[pulumi.Input[str]]:
    if spec.availability_zone:
        return [args.subnet_by_zone[spec.availability_zone]]
    return args.subnet_ids


@dataclass(frozen=True)
class NodeGroupPlacement:
    """Where a node group's nodes go, and as whom they join."""

    cluster_name: pulumi.Input[str]
    role_arn: pulumi.Input[str]
    subnet_ids: pulumi.Input[list[pulumi.Input[str]]]  # the pool's subnets (its zone's, when it pins one)
    interface_groups: list[pulumi.Input[str]]  # security groups of EFA interfaces (efa_interface_groups)


def node_role(owner: Component, name: str, with_vpc_cni: bool = False) -> aws.iam.Role:
    """The role nodes join the cluster with: the AWS-managed worker and ECR policies, and the VPC CNI's
    where the CNI runs as the node (a created cluster gives the CNI its own Pod Identity role)."""
    policies = aws_specs.NODE_MANAGED_POLICIES + ([aws_specs.VPC_CNI_POLICY] if with_vpc_cni else [])
    return role_with_managed_policies(name, aws_specs.service_trust_policy("ec2.amazonaws.com"), policies, owner)


def efa_interface_groups(
    owner: Component, name: str, cluster_security_group_id: pulumi.Input[str], vpc_id: pulumi.Input[str]
) -> list[pulumi.Input[str]]:
    """EFA interfaces replace the node group's default network setup: they carry the cluster
    security group explicitly, plus one that lets EFA peers talk to each other (all traffic)."""
    efa = aws.ec2.SecurityGroup(
        f"{name}-efa",
        vpc_id=vpc_id,
        description="EFA: all traffic between members",
        ingress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True}],
        egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True}],
        opts=owner.child_opts(),
    )
    return [cluster_security_group_id, efa.id]


def add_node_group(
    owner: Component, name: str, spec: aws_specs.NodeGroupSpec, placement: NodeGroupPlacement, environment: str
) -> aws.eks.NodeGroup:
    """One managed node group as `spec` says, with its launch template, its cluster placement group
    (EFA without a reservation) and its Capacity Block's scheduled actions, all children of `owner`."""
    placement_group = None
    subnet_ids = placement.subnet_ids
    if spec.placement_group:  # a cluster placement group lives in one AZ
        placement_group = aws.ec2.PlacementGroup(f"{name}-placement", strategy="cluster", opts=owner.child_opts())
        subnet_ids = (
            subnet_ids[:1]
            if isinstance(subnet_ids, list)
            else pulumi.Output.from_input(subnet_ids).apply(lambda subnets: subnets[:1])
        )
    template = _launch_template(owner, name, spec, placement_group, placement.interface_groups)
    group = aws.eks.NodeGroup(
        name,
        cluster_name=placement.cluster_name,
        node_role_arn=placement.role_arn,
        subnet_ids=subnet_ids,
        ami_type=spec.ami_type,
        capacity_type=spec.capacity_type,
        instance_types=None if spec.instance_type_in_launch_template else [spec.instance_type],
        scaling_config=spec.scaling,
        labels=spec.labels,
        taints=spec.taints,
        # A pinned version, never $Latest/$Default: the group changes only when Pulumi says so.
        launch_template={"id": template.id, "version": template.latest_version.apply(str)},
        node_repair_config={"enabled": spec.node_repair},
        tags=aws_specs.node_group_tags(spec, environment),
        update_config={"max_unavailable": 1, "update_strategy": spec.update_strategy},
        opts=owner.child_opts(
            # Capacity Block groups: the scheduled actions below own the desired size.
            ignore_changes=["scalingConfig.desiredSize"] if spec.desired_size_scheduled else None
        ),
    )
    auto_scaling_group = group.resources.apply(lambda resources: resources[0].autoscaling_groups[0].name)
    for schedule in spec.schedules:
        aws.autoscaling.Schedule(
            f"{name}-block-{'start' if schedule.catch_up else 'end'}",
            scheduled_action_name=f"gpt-oss-infra-{schedule.name}",
            autoscaling_group_name=auto_scaling_group,
            # Decided when the action is created (after the group), never in the past.
            start_time=auto_scaling_group.apply(lambda _, schedule=schedule: schedule.start_time_at(datetime.now(UTC))),
            desired_capacity=schedule.desired,
            min_size=-1,  # -1: leave as is (the provider's default, 0, would change it)
            max_size=-1,
            opts=owner.child_opts(ignore_changes=["startTime"] if schedule.catch_up else None),
        )
    return group


def _launch_template(
    owner: Component,
    name: str,
    spec: aws_specs.NodeGroupSpec,
    placement: aws.ec2.PlacementGroup | None,
    interface_groups: list[pulumi.Input[str]],
) -> aws.ec2.LaunchTemplate:
    interfaces = None
    if spec.network_interfaces:
        interfaces = [
            interface | {"security_groups": interface_groups, "delete_on_termination": "true"}
            for interface in spec.network_interfaces
        ]
    reservation = None
    if spec.capacity_reservation_id:
        reservation = {"capacity_reservation_target": {"capacity_reservation_id": spec.capacity_reservation_id}}
    return aws.ec2.LaunchTemplate(
        f"{name}-template",
        instance_type=spec.instance_type if spec.instance_type_in_launch_template else None,
        instance_market_options={"market_type": "capacity-block"} if spec.capacity_type == "CAPACITY_BLOCK" else None,
        capacity_reservation_specification=reservation,
        network_interfaces=interfaces,
        placement={"group_name": placement.name} if placement else None,
        metadata_options={
            "http_endpoint": "enabled",
            "http_tokens": "required",  # IMDSv2 only
            "http_put_response_hop_limit": 1,  # pods cannot reach the node's credentials
        },
        block_device_mappings=[
            {
                "device_name": "/dev/xvda",
                "ebs": {
                    "volume_size": spec.disk_size_gib,
                    "volume_type": "gp3",
                    "encrypted": "true",
                    "delete_on_termination": "true",
                },
            }
        ],
        tag_specifications=[{"resource_type": "instance", "tags": {"gpt-oss-infra/pool": spec.pool}}],
        update_default_version=True,
        opts=owner.child_opts(),
    )
