"""Every AWS resource the program makes, as plain data: its Pulumi type, name and inputs (the keyword
arguments of its pulumi_aws class), with a `Ref` wherever a value is known only once another resource
exists. The shell registers exactly these (components/aws/build.py), and before it registers anything
the AWS contract check reads the same list (core/checks/aws_contract.py): one description, two readers.

Registration order is list order. Shapes and sources: core/render/aws/specs.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from gpt_oss_infra.core.inputs.config import EksClusterConfig, ModelCacheConfig, StackConfig
from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.render.aws import specs as aws_specs
from gpt_oss_infra.core.render.aws.capacity import ScheduledScaling
from gpt_oss_infra.core.render.cluster_plan import EksPlan
from gpt_oss_infra.core.render.gateway import LOAD_BALANCER_SERVICE_ACCOUNT
from gpt_oss_infra.core.render.gpu_software import ChartRelease
from gpt_oss_infra.core.render.karpenter import EFA_PEERS_TAG
from gpt_oss_infra.core.resolve.sizing import fsx_capacity_gib

# The source of a Ref to a value the program is given rather than one of these resources: a block's
# argument, an invoke's result, another component's output.
GIVEN = "given"

NFS_PORT = 2049
LUSTRE_PORTS = [(988, 988), (1018, 1023)]  # FSx for Lustre: LNet and its client ports [fsx-sg]
LUSTRE_VERSION = "2.15"  # FSx's recommended Lustre version; the one every PERSISTENT_2 option supports
CLUSTER_ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


@dataclass(frozen=True)
class Ref:
    """A value known only at `pulumi up`: `attribute` (a dotted path, e.g. vpc_config.vpc_id) of the
    resource named `source`, or the given value `attribute` when `source` is GIVEN; `then` maps it."""

    source: str
    attribute: str
    then: Callable[[Any], Any] | None = None

    def mapped(self, then: Callable[[Any], Any]) -> Ref:
        first = self.then
        return Ref(self.source, self.attribute, then if first is None else lambda value: then(first(value)))


@dataclass(frozen=True)
class AwsResource:
    type: str  # the Pulumi type token, e.g. aws:ec2/vpc:Vpc
    name: str
    inputs: dict[str, Any]  # the pulumi_aws class's keyword arguments; None leaves one unset
    depends_on: tuple[str, ...] = ()  # names of resources of the same list it waits for
    ignore_changes: tuple[str, ...] = ()
    retain_on_delete: bool = False


def given(name: str) -> Ref:
    return Ref(GIVEN, name)


def id_of(name: str) -> Ref:
    return Ref(name, "id")


# --- IAM


def role(name: str, trust_policy: dict[str, Any], managed_policies: list[str]) -> list[AwsResource]:
    """A role trusted as `trust_policy`, with each AWS-managed policy (its name after `policy/`)."""
    return [
        AwsResource("aws:iam/role:Role", name, {"assume_role_policy": json.dumps(trust_policy, sort_keys=True)}),
        *(
            AwsResource(
                "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
                f"{name}-{policy.rsplit('/', 1)[-1]}",
                {"role": Ref(name, "name"), "policy_arn": f"arn:aws:iam::aws:policy/{policy}"},
            )
            for policy in managed_policies
        ),
    ]


def pod_identity_role(name: str, policy_arn: Any) -> list[AwsResource]:
    """A role for one Kubernetes service account through EKS Pod Identity, with one policy."""
    trust = json.dumps(aws_specs.pod_identity_trust_policy(), sort_keys=True)
    return [
        AwsResource("aws:iam/role:Role", name, {"assume_role_policy": trust}),
        AwsResource(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            f"{name}-policy",
            {"role": Ref(name, "name"), "policy_arn": policy_arn},
        ),
    ]


def _attachments(resources: list[AwsResource]) -> tuple[str, ...]:
    """The names of the role policy attachments among `resources`."""
    return tuple(r.name for r in resources if r.type == "aws:iam/rolePolicyAttachment:RolePolicyAttachment")


def node_role(name: str, with_vpc_cni: bool = False) -> list[AwsResource]:
    """The role nodes join the cluster with: the AWS-managed worker and ECR policies, and the VPC CNI's
    where the CNI runs as the node (a created cluster gives the CNI its own Pod Identity role)."""
    policies = aws_specs.NODE_MANAGED_POLICIES + ([aws_specs.VPC_CNI_POLICY] if with_vpc_cni else [])
    return role(name, aws_specs.service_trust_policy("ec2.amazonaws.com"), policies)


# --- network


def network(name: str, cluster_name: str, vpc_cidr: str, zone_count: int) -> list[AwsResource]:
    """A VPC for EKS: private subnets across AZs for nodes, public subnets with one NAT for egress. The
    zones are given (`zones`, ordered: pinned AZs first, core.render.aws.specs.availability_zone_order)."""
    vpc = f"{name}-vpc"
    made = [
        AwsResource(
            "aws:ec2/vpc:Vpc",
            vpc,
            {
                "cidr_block": vpc_cidr,
                "enable_dns_hostnames": True,
                "enable_dns_support": True,
                "tags": {"Name": f"{cluster_name}-vpc"},
            },
        ),
        AwsResource(
            "aws:ec2/internetGateway:InternetGateway",
            f"{name}-igw",
            {"vpc_id": id_of(vpc), "tags": {"Name": f"{cluster_name}-igw"}},
        ),
        _route_table(f"{name}-public", vpc, {"gateway_id": id_of(f"{name}-igw")}),
    ]
    cidrs = aws_specs.subnet_cidrs(vpc_cidr, zone_count)
    for index, (_, public_cidr) in enumerate(cidrs):
        made += _subnet(f"{name}-public-{index}", vpc, cluster_name, public_cidr, index, f"{name}-public", public=True)
    # One NAT gateway: egress to image registries and Hugging Face at one NAT's cost.
    made += [
        AwsResource("aws:ec2/eip:Eip", f"{name}-nat-ip", {"domain": "vpc"}),
        AwsResource(
            "aws:ec2/natGateway:NatGateway",
            f"{name}-nat",
            {
                "allocation_id": id_of(f"{name}-nat-ip"),
                "subnet_id": id_of(f"{name}-public-0"),
                "tags": {"Name": f"{cluster_name}-nat"},
            },
            depends_on=(f"{name}-igw",),
        ),
        _route_table(f"{name}-private", vpc, {"nat_gateway_id": id_of(f"{name}-nat")}),
    ]
    for index, (private_cidr, _) in enumerate(cidrs):
        made += _subnet(
            f"{name}-private-{index}", vpc, cluster_name, private_cidr, index, f"{name}-private", public=False
        )
    return made


def private_egress(network_resources: list[AwsResource]) -> tuple[str, ...]:
    """The names of what a network's private subnets reach the internet through: the NAT gateway, the route
    table associations of the private subnets, and that of the public subnet the NAT is in (without it the
    NAT has no route to the internet gateway). None for subnets of the caller's."""
    nats = [resource for resource in network_resources if resource.type == "aws:ec2/natGateway:NatGateway"]
    nat_subnets = {nat.inputs["subnet_id"].source for nat in nats}

    def routes_egress(resource: AwsResource) -> bool:
        subnet = resource.inputs["subnet_id"].source
        return "-private-" in subnet or subnet in nat_subnets

    associations = "aws:ec2/routeTableAssociation:RouteTableAssociation"
    return tuple(
        resource.name
        for resource in network_resources
        if resource in nats or (resource.type == associations and routes_egress(resource))
    )


def private_subnets(name: str, zone_count: int) -> list[Ref]:
    """The ids of network(name, ...)'s private subnets, in zone order."""
    return [id_of(f"{name}-private-{index}") for index in range(zone_count)]


def _route_table(name: str, vpc: str, default_route: dict[str, Any]) -> AwsResource:
    return AwsResource(
        "aws:ec2/routeTable:RouteTable",
        name,
        {"vpc_id": id_of(vpc), "routes": [{"cidr_block": "0.0.0.0/0", **default_route}], "tags": {"Name": name}},
    )


def _subnet(
    name: str, vpc: str, cluster_name: str, cidr: str, zone_index: int, routes: str, public: bool
) -> list[AwsResource]:
    """A subnet in the zone_index-th AZ, tagged for EKS load balancers, with its route table."""
    role_tag = {"kubernetes.io/role/elb": "1"} if public else {"kubernetes.io/role/internal-elb": "1"}
    return [
        AwsResource(
            "aws:ec2/subnet:Subnet",
            name,
            {
                "vpc_id": id_of(vpc),
                "cidr_block": cidr,
                "availability_zone": Ref(GIVEN, "zones", itemgetter(zone_index)),
                "map_public_ip_on_launch": public or None,
                "tags": {"Name": name, f"kubernetes.io/cluster/{cluster_name}": "shared"} | role_tag,
            },
        ),
        AwsResource(
            "aws:ec2/routeTableAssociation:RouteTableAssociation",
            f"{name}-routes",
            {"subnet_id": id_of(name), "route_table_id": id_of(routes)},
        ),
    ]


# --- the EKS control plane


def eks_cluster(name: str, config: EksClusterConfig, subnet_ids: list[Any]) -> list[AwsResource]:
    """API authentication mode with access entries, private endpoint always on, envelope-encrypted
    secrets, control-plane logs kept `logRetentionDays`, and HTTPS from `privateAccessCidrs`."""
    cluster = f"{name}-cluster"
    made = [
        *role(f"{name}-role", aws_specs.service_trust_policy("eks.amazonaws.com"), aws_specs.CLUSTER_MANAGED_POLICIES),
        AwsResource(
            "aws:kms/key:Key",
            f"{name}-secrets",
            {
                "description": f"EKS secrets envelope encryption for {config.name}",
                "enable_key_rotation": True,
                "deletion_window_in_days": 30,
            },
        ),
        # EKS writes to this group by name; creating it first sets the retention.
        AwsResource(
            "aws:cloudwatch/logGroup:LogGroup",
            f"{name}-logs",
            {"name": f"/aws/eks/{config.name}/cluster", "retention_in_days": config.log_retention_days},
        ),
        AwsResource(
            "aws:eks/cluster:Cluster",
            cluster,
            {
                "name": config.name,
                "version": config.kubernetes_version,
                "role_arn": Ref(f"{name}-role", "arn"),
                "vpc_config": {
                    "subnet_ids": subnet_ids,
                    "endpoint_private_access": True,
                    "endpoint_public_access": config.endpoint_public_access,
                    "public_access_cidrs": config.public_access_cidrs if config.endpoint_public_access else None,
                },
                "access_config": {"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
                "encryption_config": {"provider": {"key_arn": Ref(f"{name}-secrets", "arn")}, "resources": ["secrets"]},
                "enabled_cluster_log_types": aws_specs.CONTROL_PLANE_LOG_TYPES,
            },
            depends_on=(f"{name}-logs",),
        ),
    ]
    # The private endpoint answers only what the cluster security group admits: its own members by
    # default. Deploy runners and operators inside the VPC (or over a VPN) need HTTPS [eks-endpoint].
    made += [
        AwsResource(
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            f"{name}-api-{index}",
            {
                "security_group_id": Ref(cluster, "vpc_config.cluster_security_group_id"),
                "cidr_ipv4": cidr,
                "ip_protocol": "tcp",
                "from_port": 443,
                "to_port": 443,
                "description": f"Kubernetes API (private endpoint) from {cidr}",
            },
        )
        for index, cidr in enumerate(config.resolved_private_access_cidrs)
    ]
    for index, principal in enumerate(config.admin_role_arns):
        entry = f"{name}-admin-{index}"
        made += [
            AwsResource(
                "aws:eks/accessEntry:AccessEntry",
                entry,
                {"cluster_name": Ref(cluster, "name"), "principal_arn": principal},
            ),
            AwsResource(
                "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
                f"{entry}-policy",
                {
                    "cluster_name": Ref(cluster, "name"),
                    "principal_arn": principal,
                    "policy_arn": CLUSTER_ADMIN_POLICY,
                    "access_scope": {"type": "cluster"},
                },
                depends_on=(entry,),
            ),
        ]
    return made


def eks_addons(name: str, cluster_name: Any, addons: list[aws_specs.AddonSpec]) -> list[AwsResource]:
    """EKS managed add-ons; those with AWS permissions get their own Pod Identity role."""
    made: list[AwsResource] = []
    for spec in addons:
        identities = None
        if spec.managed_policy:
            role_name = f"{name}-{spec.name}-role"
            made += role(role_name, aws_specs.pod_identity_trust_policy(), [spec.managed_policy])
            identities = [{"role_arn": Ref(role_name, "arn"), "service_account": spec.service_account}]
        made.append(
            AwsResource(
                "aws:eks/addon:Addon",
                f"{name}-{spec.name}",
                {
                    "cluster_name": cluster_name,
                    "addon_name": spec.name,
                    "addon_version": spec.version,
                    "configuration_values": json.dumps(spec.configuration, sort_keys=True)
                    if spec.configuration
                    else None,
                    "pod_identity_associations": identities,
                    "resolve_conflicts_on_create": "OVERWRITE",
                    "resolve_conflicts_on_update": "OVERWRITE",
                },
            )
        )
    return made


# --- node groups


@dataclass(frozen=True)
class NodeGroupPlacement:
    """Where a node group's nodes go, and as whom they join: values or Refs."""

    cluster_name: Any
    role_arn: Any
    subnet_ids: Any  # a list of subnet ids, or a Ref to one (the pool's zone's, when it pins one)
    interface_groups: list[Any] = field(default_factory=list)  # security groups of EFA interfaces
    # The node role's policy attachments made beside the group, by name: made before it and deleted after it,
    # else EKS cannot terminate its instances and release their network interfaces (the provider's docs).
    role_policies: tuple[str, ...] = ()
    # The cluster's Kubernetes version, which the group follows: EKS updates a control plane only once its
    # node groups are on its version, and the provider updates a group's version only when it is given one.
    kubernetes_version: Any = None
    # What gives the group's private subnets their egress (the NAT gateway and the subnets' route table
    # associations), by name: made before the group, whose nodes pull images and reach EKS through it, and
    # deleted after it, so that at `destroy` whatever runs on the nodes (the teardown guards, the controllers
    # they wait for) still reaches AWS's APIs. Nothing else depends on them: Pulumi would delete them first.
    egress: tuple[str, ...] = ()


def efa_security_group(name: str, vpc_id: Any, tags: dict[str, str] | None = None) -> AwsResource:
    """EFA peers talk to each other on all traffic (an EFA interface carries it and the cluster's group).
    `tags`: those an elastic pool's EC2NodeClass selects it by."""
    return AwsResource(
        "aws:ec2/securityGroup:SecurityGroup",
        f"{name}-efa",
        {
            "vpc_id": vpc_id,
            "description": "EFA: all traffic between members",
            "ingress": [{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True}],
            "egress": [{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True}],
            **({"tags": tags} if tags else {}),
        },
    )


def node_group(
    name: str, spec: aws_specs.NodeGroupSpec, placement: NodeGroupPlacement, environment: str
) -> list[AwsResource]:
    """One managed node group as `spec` says, with its launch template, its cluster placement group
    (EFA without a reservation) and its Capacity Block's scheduled actions."""
    made = []
    subnet_ids = placement.subnet_ids
    if spec.placement_group:  # a cluster placement group lives in one AZ
        made.append(AwsResource("aws:ec2/placementGroup:PlacementGroup", f"{name}-placement", {"strategy": "cluster"}))
        subnet_ids = subnet_ids.mapped(lambda subnets: subnets[:1]) if isinstance(subnet_ids, Ref) else subnet_ids[:1]
    template = f"{name}-template"
    placement_group = f"{name}-placement" if spec.placement_group else None
    made.append(_launch_template(template, spec, placement_group, placement))
    made.append(
        AwsResource(
            "aws:eks/nodeGroup:NodeGroup",
            name,
            {
                "cluster_name": placement.cluster_name,
                "node_role_arn": placement.role_arn,
                "subnet_ids": subnet_ids,
                "version": placement.kubernetes_version,
                "ami_type": spec.ami_type,
                "capacity_type": spec.capacity_type,
                "instance_types": None if spec.instance_type_in_launch_template else [spec.instance_type],
                "scaling_config": spec.scaling,
                "labels": spec.labels,
                "taints": spec.taints,
                # A pinned version, never $Latest/$Default: the group changes only when Pulumi says so.
                "launch_template": {"id": id_of(template), "version": Ref(template, "latest_version", str)},
                "node_repair_config": {"enabled": spec.node_repair},
                "tags": aws_specs.node_group_tags(spec, environment),
                "update_config": {"max_unavailable": 1, "update_strategy": spec.update_strategy},
            },
            depends_on=placement.role_policies + placement.egress,
            # Capacity Block groups: the scheduled actions below own the desired size.
            ignore_changes=("scalingConfig.desiredSize",) if spec.desired_size_scheduled else (),
        )
    )
    auto_scaling_group = Ref(name, "resources", lambda resources: resources[0].autoscaling_groups[0].name)
    for schedule in spec.schedules:
        made.append(
            AwsResource(
                "aws:autoscaling/schedule:Schedule",
                f"{name}-block-{'start' if schedule.catch_up else 'end'}",
                {
                    "scheduled_action_name": f"gpt-oss-infra-{schedule.name}",
                    "autoscaling_group_name": auto_scaling_group,
                    "start_time": auto_scaling_group.mapped(_start_time(schedule)),
                    "desired_capacity": schedule.desired,
                    "min_size": -1,  # -1: leave as is (the provider's default, 0, would change it)
                    "max_size": -1,
                },
                ignore_changes=("startTime",) if schedule.catch_up else (),
            )
        )
    return made


def _start_time(schedule: ScheduledScaling) -> Callable[[Any], str]:
    """A scheduled action's start time, decided when the action is created (after the group), never in the past."""
    return lambda _: schedule.start_time_at(datetime.now(UTC))


def _launch_template(
    name: str, spec: aws_specs.NodeGroupSpec, placement_group: str | None, placement: NodeGroupPlacement
) -> AwsResource:
    """IMDSv2 only, an encrypted gp3 root volume of the pool's size, and where the pool needs them the
    Capacity Block / reservation settings and the EFA interfaces."""
    interfaces = None
    if spec.network_interfaces:
        interfaces = [
            interface | {"security_groups": placement.interface_groups, "delete_on_termination": "true"}
            for interface in spec.network_interfaces
        ]
    reservation = None
    if spec.capacity_reservation_id:
        reservation = {"capacity_reservation_target": {"capacity_reservation_id": spec.capacity_reservation_id}}
    return AwsResource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        name,
        {
            "instance_type": spec.instance_type if spec.instance_type_in_launch_template else None,
            "instance_market_options": {"market_type": "capacity-block"}
            if spec.capacity_type == "CAPACITY_BLOCK"
            else None,
            "capacity_reservation_specification": reservation,
            "network_interfaces": interfaces,
            "placement": {"group_name": Ref(placement_group, "name")} if placement_group else None,
            "metadata_options": {
                "http_endpoint": "enabled",
                "http_tokens": "required",  # IMDSv2 only
                "http_put_response_hop_limit": 1,  # pods cannot reach the node's credentials
            },
            "block_device_mappings": [
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
            "tag_specifications": [{"resource_type": "instance", "tags": {"gpt-oss-infra/pool": spec.pool}}],
            "update_default_version": True,
        },
    )


@dataclass(frozen=True)
class ClusterNetwork:
    """An EKS cluster's name, Kubernetes version and network, as the node groups and file systems in it need
    them: values or Refs."""

    name: Any
    vpc_id: Any
    security_group_id: Any  # the cluster security group every node carries
    version: Any = None  # None: a cluster of the caller's, whose version the groups take from EKS at creation


def cluster_network(cluster: str) -> ClusterNetwork:
    """The network of the EKS cluster resource named `cluster`."""
    return ClusterNetwork(
        Ref(cluster, "name"),
        Ref(cluster, "vpc_config.vpc_id"),
        Ref(cluster, "vpc_config.cluster_security_group_id"),
        Ref(cluster, "version"),
    )


@dataclass(frozen=True)
class NodeGroups:
    """A created cluster's node groups: what its pools share (one node role, the EFA peers' security group
    where a pool has EFA) with the system group, and each GPU pool's own group, a GpuNodePool of the stack's."""

    shared: list[AwsResource]
    gpu_pools: dict[str, list[AwsResource]]  # pool -> its group, launch template, ..., in the plan's order

    def resources(self) -> list[AwsResource]:
        """Every one, in registration order."""
        return [*self.shared, *(resource for pool in self.gpu_pools.values() for resource in pool)]


def node_groups(
    name: str,
    groups: list[aws_specs.NodeGroupSpec],
    cluster: ClusterNetwork,
    subnet_ids: list[Any],
    subnet_by_zone: dict[str, Any],
    environment: str,
    elastic_efa_tags: dict[str, str] | None = None,
    egress: tuple[str, ...] = (),
) -> NodeGroups:
    """The system group (`groups`' first) and one group per GPU pool of a created cluster, with one node
    role, and the EFA security group where a pool has EFA (an elastic pool's too: `elastic_efa_tags`, the
    tags its EC2NodeClass selects the group by)."""
    shared = node_role(f"{name}-node-role")
    interface_groups: list[Any] = []
    if any(spec.network_interfaces for spec in groups) or elastic_efa_tags:
        shared.append(efa_security_group(name, cluster.vpc_id, elastic_efa_tags))
        interface_groups = [cluster.security_group_id, id_of(f"{name}-efa")]

    def group(spec: aws_specs.NodeGroupSpec) -> list[AwsResource]:
        subnets = [subnet_by_zone[spec.availability_zone]] if spec.availability_zone else subnet_ids
        role_arn = Ref(f"{name}-node-role", "arn")
        placement = NodeGroupPlacement(
            cluster.name, role_arn, subnets, interface_groups, _attachments(shared), cluster.version, egress
        )
        return node_group(f"{name}-{spec.pool}", spec, placement, environment)

    system, *gpu_pools = groups
    return NodeGroups(shared + group(system), {spec.pool: group(spec) for spec in gpu_pools})


# --- the model cache's file system


def model_storage(
    name: str, config: ModelCacheConfig, cluster_name: str, cluster: ClusterNetwork, subnet_ids: list[Any]
) -> list[AwsResource]:
    """EFS (elastic throughput, a mount target per private subnet) or FSx for Lustre (in the first
    subnet's zone), behind a security group the cluster's nodes reach it through [fsx-sg]. Kept at
    destroy (modelCache.keepOnDestroy), EFS is retained and FSx deleted after a final backup
    (components/aws/model_storage.py says why)."""
    efs = config.storage == "efs"
    keep = config.keep_on_destroy
    node_group_id = cluster.security_group_id
    clients = f"{name}-clients"
    ports = [(NFS_PORT, NFS_PORT)] if efs else LUSTRE_PORTS
    tags = {"Name": f"{cluster_name}-model-cache"}
    made = [
        AwsResource(
            "aws:ec2/securityGroup:SecurityGroup",
            clients,
            {
                "vpc_id": cluster.vpc_id,
                "description": f"model cache clients ({config.storage})",
                "ingress": [
                    {
                        "protocol": "tcp",
                        "from_port": low,
                        "to_port": high,
                        "security_groups": [node_group_id],
                        "self": not efs,  # Lustre servers talk to each other on the same ports
                    }
                    for low, high in ports
                ],
                "egress": [{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}],
                "tags": tags,
            },
        )
    ]
    if efs:
        file_system = f"{name}-efs"
        made.append(
            AwsResource(
                "aws:efs/fileSystem:FileSystem",
                file_system,
                {
                    "encrypted": True,
                    "performance_mode": "generalPurpose",
                    "throughput_mode": "elastic",  # bursts to GB/s for the 60 GiB load without provisioning
                    "tags": tags,
                },
                # Kept, it holds no network: its mount targets (and their interfaces) are deleted.
                retain_on_delete=keep,
            )
        )
        made += [
            AwsResource(
                "aws:efs/mountTarget:MountTarget",
                f"{name}-efs-{index}",
                {"file_system_id": id_of(file_system), "subnet_id": subnet, "security_groups": [id_of(clients)]},
            )
            for index, subnet in enumerate(subnet_ids)
        ]
        return made
    made.append(
        AwsResource(
            "aws:fsx/lustreFileSystem:LustreFileSystem",
            f"{name}-fsx",
            {
                "deployment_type": "PERSISTENT_2",
                "storage_capacity": fsx_capacity_gib(config.size),
                "per_unit_storage_throughput": config.fsx_throughput_per_tib,
                "subnet_ids": subnet_ids[0],  # Lustre lives in one AZ: the first (pinned) one
                "security_group_ids": [id_of(clients)],
                "data_compression_type": "LZ4",
                # No automatic backups: the cache holds a public checkpoint the download Job can fetch
                # again, and AWS's pages disagree on the default (0 or 30 days of billed backups).
                "automatic_backup_retention_days": 0,
                "file_system_type_version": LUSTRE_VERSION,
                "tags": tags,
                # Never retained: its network interfaces would hold its security group, subnet and VPC.
                "skip_final_backup": not keep,
                "final_backup_tags": {"Name": f"{cluster_name}-model-cache-final"} if keep else None,
            },
        )
    )
    # The clients' side of [fsx-sg]: nodes admit Lustre traffic from the file system.
    made += [
        AwsResource(
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            f"{name}-nodes-lustre-{low}",
            {
                "security_group_id": node_group_id,
                "referenced_security_group_id": id_of(clients),
                "ip_protocol": "tcp",
                "from_port": low,
                "to_port": high,
                "description": f"FSx for Lustre {low}-{high} from the model cache file system",
            },
        )
        for low, high in LUSTRE_PORTS
    ]
    return made


# --- the AWS Load Balancer Controller's identity


def load_balancer_controller(
    name: str, policy: dict[str, Any], version: str, cluster_name: Any, namespace: str, service_account: str
) -> list[AwsResource]:
    """The controller's own published IAM policy for its version, on a Pod Identity role for its service
    account [lbc-install]."""
    return [
        AwsResource(
            "aws:iam/policy:Policy",
            f"{name}-policy",
            {
                "policy": json.dumps(policy, sort_keys=True),
                "description": f"AWS Load Balancer Controller v{version} (its published policy)",
            },
        ),
        *pod_identity_role(f"{name}-role", Ref(f"{name}-policy", "arn")),
        AwsResource(
            "aws:eks/podIdentityAssociation:PodIdentityAssociation",
            f"{name}-identity",
            {
                "cluster_name": cluster_name,
                "namespace": namespace,
                "service_account": service_account,
                "role_arn": Ref(f"{name}-role", "arn"),
            },
        ),
    ]


def controller_policy(app_version: str) -> dict[str, Any]:
    """The AWS Load Balancer Controller's IAM policy for its version, as it publishes it
    (docs/install/iam_policy.json, vendored in vendor/aws-iam/)."""
    policy: dict[str, Any] = json.loads(
        (VENDOR_DIR / "aws-iam" / f"aws-load-balancer-controller-{app_version}.json").read_text()
    )
    return policy


# --- a created cluster, whole


@dataclass(frozen=True)
class CreatedCluster:
    """A created cluster's AWS resources in the parts the shell registers one after another, each a
    component of its own with its own dependencies (components/targets/eks.py)."""

    network: list[AwsResource]  # none in existing subnets
    control_plane: list[AwsResource]
    base_addons: list[AwsResource]  # the add-ons that need no nodes
    node_groups: NodeGroups
    node_addons: list[AwsResource]  # those whose pods must run (on the system nodes) to become ACTIVE
    model_storage: list[AwsResource]  # none with modelCache.storage existing
    load_balancer_controller: list[AwsResource]  # its identity, when an endpoint needs NLBs
    subnet_ids: list[Any]  # the private subnets, pinned zones' first

    def resources(self) -> list[AwsResource]:
        """Every one, in registration order."""
        return [
            *self.network,
            *self.control_plane,
            *self.base_addons,
            *self.node_groups.resources(),
            *self.node_addons,
            *self.model_storage,
            *self.load_balancer_controller,
        ]


def created_cluster(
    name: str,
    config: StackConfig,
    plan: EksPlan,
    load_balancers: ChartRelease | None,
) -> CreatedCluster:
    """What the cluster kind eks makes in AWS for `config`, as `plan` decided its add-ons and node groups;
    every resource named under `name`'s parts (<name>-network, <name>-eks, <name>-nodes, ...)."""
    cluster = config.cluster
    assert isinstance(cluster, EksClusterConfig), "created_cluster is the eks kind's"
    pinned = config.pinned_zones
    existing = cluster.network.existing_private_subnets
    made_network: list[AwsResource] = []
    if existing is not None:
        subnet_ids: list[Any] = [existing[zone] for zone in pinned]
        subnet_ids += [subnet for zone, subnet in existing.items() if zone not in pinned]
        subnet_by_zone: dict[str, Any] = dict(existing)
    else:
        zones = cluster.network.availability_zones
        made_network = network(f"{name}-network", cluster.name, cluster.network.vpc_cidr, zones)
        subnet_ids = private_subnets(f"{name}-network", zones)
        # Pinned AZs come first in availability_zone_order: their subnets' indexes are known now.
        subnet_by_zone = {zone: subnet_ids[index] for index, zone in enumerate(pinned)}
    control_plane = eks_cluster(f"{name}-eks", cluster, subnet_ids)
    eks = cluster_network(f"{name}-eks-cluster")
    lbc: list[AwsResource] = []
    if load_balancers is not None:
        chart = load_balancers.chart
        lbc = load_balancer_controller(
            f"{name}-load-balancers",
            controller_policy(f"v{chart.version}"),
            chart.version,
            eks.name,
            chart.namespace,
            LOAD_BALANCER_SERVICE_ACCOUNT,
        )
    storage = config.model_cache
    return CreatedCluster(
        network=made_network,
        control_plane=control_plane,
        base_addons=eks_addons(f"{name}-addons", eks.name, [a for a in plan.addons if not a.needs_nodes]),
        node_groups=node_groups(
            f"{name}-nodes",
            plan.groups,
            eks,
            subnet_ids,
            subnet_by_zone,
            config.environment,
            {EFA_PEERS_TAG: cluster.name} if any(spec.network_interfaces for spec in plan.elastic) else None,
            private_egress(made_network),
        ),
        node_addons=eks_addons(f"{name}-node-addons", eks.name, [a for a in plan.addons if a.needs_nodes]),
        model_storage=[]
        if storage.storage == "existing"
        else model_storage(f"{name}-model-storage", storage, cluster.name, eks, subnet_ids),
        load_balancer_controller=lbc,
        subnet_ids=subnet_ids,
    )


def gpu_node_pool(name: str, spec: aws_specs.NodeGroupSpec, environment: str, with_role: bool) -> list[AwsResource]:
    """A GpuNodePool block's resources, on a cluster of the caller's: where the pool has EFA, the EFA
    peers' security group (in the cluster's VPC, `given` vpc_id and cluster_security_group_id); with
    `with_role`, its own node role (else `given` node_role_arn); then its node group, in the `given`
    cluster_name and subnet_ids."""
    made: list[AwsResource] = []
    interface_groups: list[Any] = []
    if spec.network_interfaces:
        made.append(efa_security_group(name, given("vpc_id")))
        interface_groups = [given("cluster_security_group_id"), id_of(f"{name}-efa")]
    role_arn: Any = given("node_role_arn")
    if with_role:
        made += node_role(f"{name}-node-role", with_vpc_cni=True)
        role_arn = Ref(f"{name}-node-role", "arn")
    placement = NodeGroupPlacement(
        given("cluster_name"), role_arn, given("subnet_ids"), interface_groups, _attachments(made)
    )
    return made + node_group(f"{name}-nodes", spec, placement, environment)
