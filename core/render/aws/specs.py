"""AWS infrastructure as plain specs: subnets, node groups, add-ons and IAM policy documents.

Sources for the shapes below:
  [eks-efa]  https://docs.aws.amazon.com/eks/latest/userguide/device-management-efa.html
  [eks-cb]   https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html
  [eks-update] https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
             (the minimal strategy terminates old nodes before creating new ones, "so that total
             capacity never increases beyond your configured quantity"; for hardware such as GPUs)
  [eks-addons] https://docs.aws.amazon.com/eks/latest/userguide/workloads-add-ons-available-eks.html
  [eks-netpol] https://docs.aws.amazon.com/eks/latest/userguide/cni-network-policy-configure.html
               (configurationValues {"enableNetworkPolicy": "true"}, VPC CNI 1.14 or later)
  [ebs-csi]  https://docs.aws.amazon.com/eks/latest/userguide/ebs-csi.html (add-on, Pod Identity role,
             AWS-managed AmazonEBSCSIDriverPolicy)
  [ebs-csi-params] https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/parameters.md
"""

from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import dataclass, field
from typing import Any

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import AddonVersion
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, EksClusterConfig, NodePoolConfig, StackConfig
from gpt_oss_infra.core.render.aws.account import AccountFacts
from gpt_oss_infra.core.render.aws.capacity import BlockPlan, ScheduledScaling
from gpt_oss_infra.core.render.labels import (
    GPU_TAINT,
    POOL_LABEL,
    SYSTEM_POOL,
    common_labels,
    pool_node_labels,
)
from gpt_oss_infra.core.resolve.recipes import NodePool

SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"
CONTROL_PLANE_LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
SUBNET_PREFIX_LENGTH = 20  # 4,096 addresses per subnet: VPC CNI gives every pod a VPC address


@dataclass(frozen=True)
class NodeGroupSpec:
    pool: str
    instance_type: str
    ami_type: str
    capacity_type: str
    labels: dict[str, str]
    taints: list[dict[str, str]]  # EKS form: key, value, effect NO_SCHEDULE
    disk_size_gib: int
    availability_zone: str | None  # a single AZ (reservation or EFA placement), else all
    capacity_reservation_id: str | None
    scaling: dict[str, int]  # desired_size, min_size, max_size
    # Capacity Block groups: their scheduled actions own the desired size after creation.
    desired_size_scheduled: bool = False
    schedules: list[ScheduledScaling] = field(default_factory=list)
    network_interfaces: list[dict[str, Any]] = field(default_factory=list)  # EFA layout; [] = EKS default
    placement_group: bool = False  # a cluster placement group (EFA without a reservation)
    # MINIMAL: an AMI or template update replaces nodes without launching extra ones first (no GPU
    # surge that a fixed block or a quota would not have) [eks-update].
    update_strategy: str | None = None
    # Auto repair replaces an unhealthy node by terminating it and launching another, which a pool on
    # fixed capacity (a Capacity Block or reservation with no spare) cannot count on; off there.
    node_repair: bool = True

    @property
    def instance_type_in_launch_template(self) -> bool:
        """Capacity Blocks require the instance type in the launch template [eks-cb]."""
        return self.capacity_type == "CAPACITY_BLOCK"


@dataclass(frozen=True)
class ElasticPoolSpec:
    """A pool whose nodes Karpenter provisions (nodePools.<pool>.scaling): what its NodePool and EC2NodeClass
    say (core/render/karpenter.py) and the AWS resources they need (core/render/aws/karpenter.py)."""

    pool: str
    hardware: str  # a GPU hardware type, or cpu
    instance_type: str
    capacity_type: str  # ON_DEMAND or SPOT (a Capacity Block pool stays a managed node group)
    gpus_per_node: int  # 0: a cpu pool
    min_nodes: int
    max_nodes: int
    disk_size_gib: int
    availability_zone: str | None  # required with EFA: its cluster placement group lives in one zone
    network_interfaces: list[dict[str, Any]]  # EFA layout as a launch template's; [] = one ENA interface
    vcpus: int | None = None  # a cpu pool's node size (configs/nodes.yaml)

    @property
    def limits(self) -> dict[str, str]:
        """What Karpenter may start for the pool at most: its GPUs (a cpu pool: its vCPUs), in maxNodes nodes."""
        if self.gpus_per_node:
            return {"nvidia.com/gpu": str(self.max_nodes * self.gpus_per_node), "nodes": str(self.max_nodes)}
        assert self.vcpus is not None, "a cpu pool's instance type has its vCPUs (core/inputs/rules.py)"
        return {"cpu": str(self.max_nodes * self.vcpus), "nodes": str(self.max_nodes)}


def elastic_pool(pool: NodePool, network_interfaces: list[dict[str, Any]]) -> ElasticPoolSpec:
    """A GPU pool Karpenter provisions, its EFA interfaces as EC2 gives them."""
    gpus = pool.instance.gpus_per_node
    return _elastic(pool.name, pool.config, pool.instance_type, gpus, network_interfaces, None)


def cpu_pool(name: str, config: NodePoolConfig, vcpus: int) -> ElasticPoolSpec:
    """A cpu pool (always elastic) of the CPU instance type it names."""
    assert config.instance_type is not None, "a cpu pool's (core/inputs/rules.py)"
    return _elastic(name, config, config.instance_type, 0, [], vcpus)


def _elastic(
    name: str,
    config: NodePoolConfig,
    instance_type: str,
    gpus_per_node: int,
    network_interfaces: list[dict[str, Any]],
    vcpus: int | None,
) -> ElasticPoolSpec:
    scaling = config.scaling
    assert scaling is not None, "an elastic pool has its scaling bounds"
    return ElasticPoolSpec(
        pool=name,
        hardware=config.hardware,
        instance_type=instance_type,
        capacity_type=config.capacity_type,
        gpus_per_node=gpus_per_node,
        min_nodes=scaling.min_nodes,
        max_nodes=scaling.max_nodes,
        disk_size_gib=config.disk_size_gib,
        availability_zone=config.availability_zone,
        network_interfaces=network_interfaces,
        vcpus=vcpus,
    )


def system_node_group(config: StackConfig) -> NodeGroupSpec:
    system = _created(config).system_nodes
    return NodeGroupSpec(
        pool=SYSTEM_POOL,
        instance_type=system.instance_type,
        ami_type=SYSTEM_AMI_TYPE,
        capacity_type="ON_DEMAND",
        labels={POOL_LABEL: SYSTEM_POOL},
        taints=[],
        disk_size_gib=system.disk_size_gib,
        availability_zone=None,
        capacity_reservation_id=None,
        scaling={"desired_size": system.nodes, "min_size": system.nodes, "max_size": system.nodes},
    )


def _created(config: StackConfig) -> EksClusterConfig:
    """The cluster the program creates: system nodes, the VPC and offerings are only planned for one."""
    assert isinstance(config.cluster, EksClusterConfig), "only a cluster the program creates (cluster.kind eks)"
    return config.cluster


def node_group_tags(spec: NodeGroupSpec, environment: str) -> dict[str, str]:
    tags = {"gpt-oss-infra/environment": environment, POOL_LABEL: spec.pool}
    if spec.capacity_reservation_id:
        tags["gpt-oss-infra/capacity-reservation"] = spec.capacity_reservation_id
    return tags


def system_offering_problems(config: StackConfig, facts: AccountFacts) -> list[Problem]:
    """The system node group's instance type offered by EC2 in the region."""
    system_type = _created(config).system_nodes.instance_type
    if facts.offered_zones[system_type]:
        return []
    return [Problem(f"{KEY_PREFIX}cluster.systemNodes.instanceType", _offered_nowhere(system_type))]


def pool_offering_problems(pool: NodePool, facts: AccountFacts) -> list[Problem]:
    """The pool's instance type offered by EC2 in the region, and in the zone the pool pins."""
    key = f"{KEY_PREFIX}nodePools.{pool.name}"
    offered, zone = facts.offered_zones[pool.instance_type], pool.config.availability_zone
    if not offered:
        type_key = "instanceType" if pool.config.instance_type else "hardware"
        return [Problem(f"{key}.{type_key}", _offered_nowhere(pool.instance_type))]
    if zone and zone not in offered:
        where = ", ".join(sorted(offered))
        return [
            Problem(f"{key}.availabilityZone", f"EC2 does not offer {pool.instance_type} in {zone}; it does in {where}")
        ]
    return []


def _offered_nowhere(instance_type: str) -> str:
    return f"EC2 offers {instance_type} in none of this region's availability zones"


def gpu_node_group(pool: NodePool, network_interfaces: list[dict[str, Any]], block: BlockPlan | None) -> NodeGroupSpec:
    config = pool.config
    nodes = config.most_nodes
    if block is not None:  # min 0: the scheduled actions take it to `nodes` and back [eks-cb]
        scaling = {"desired_size": block.desired_at_creation, "min_size": 0, "max_size": max(nodes, 1)}
    else:  # EKS needs maxSize >= 1; a pool of 0 nodes keeps its node group ready to scale
        scaling = {"desired_size": nodes, "min_size": nodes, "max_size": max(nodes, 1)}
    return NodeGroupSpec(
        pool=pool.name,
        instance_type=pool.instance_type,
        ami_type=pool.hardware.ami_type,
        capacity_type=config.capacity_type,
        labels=pool_node_labels(config.hardware, pool.name),
        taints=[{"key": GPU_TAINT["key"], "value": "true", "effect": "NO_SCHEDULE"}],
        disk_size_gib=config.disk_size_gib,
        availability_zone=config.availability_zone,
        capacity_reservation_id=config.capacity_reservation_id,
        scaling=scaling,
        desired_size_scheduled=block is not None,
        schedules=block.schedules if block is not None else [],
        network_interfaces=network_interfaces,
        # A reservation fixes placement; EFA traffic otherwise wants one cluster placement group.
        placement_group=bool(network_interfaces) and config.capacity_reservation_id is None,
        update_strategy="MINIMAL",
        node_repair=config.capacity_reservation_id is None,
    )


def availability_zone_order(config: StackConfig, available: list[str]) -> list[str]:
    """The VPC's AZs: those node pools pin first (their reservations live there), then others."""
    pinned = config.pinned_zones
    ordered = pinned + [zone for zone in available if zone not in pinned]
    return ordered[: _created(config).network.availability_zones]


def subnet_cidrs(vpc_cidr: str, zones: int) -> list[tuple[str, str]]:
    """(private, public) CIDRs per AZ: private subnets first, public ones after them."""
    subnets = list(ipaddress.ip_network(vpc_cidr).subnets(new_prefix=SUBNET_PREFIX_LENGTH))
    if len(subnets) < 2 * zones:
        raise ValueError(f"{vpc_cidr} is too small for {2 * zones} /{SUBNET_PREFIX_LENGTH} subnets")
    return [(str(subnets[i]), str(subnets[zones + i])) for i in range(zones)]


def api_access(cluster: EksClusterConfig) -> str:
    """How `pulumi up` and kubectl reach the Kubernetes API: said in the plan summary."""
    # In subnets of the caller's VPC no CIDR is admitted by default: the cluster security group admits its members.
    private = ", ".join(cluster.resolved_private_access_cidrs) or (
        "the cluster security group's members only, its nodes (cluster.privateAccessCidrs admits networks)"
    )
    if cluster.endpoint_public_access:
        return f"public endpoint from {', '.join(cluster.public_access_cidrs)}; private endpoint from {private}"
    return (
        f"private endpoint only, from {private}: run `pulumi up` and kubectl inside the VPC "
        "(docs/created-cluster.md: Deploying a private-endpoint cluster)"
    )


def gp3_storage_class(name: str) -> dict[str, Any]:
    """The block StorageClass of a created cluster: encrypted gp3 through the EBS CSI driver, bound
    where the pod lands (WaitForFirstConsumer keeps the volume in the pod's AZ) [ebs-csi-params].
    Marked default, since EKS 1.30+ marks none and other charts' PVCs would otherwise stay Pending."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": name,
            "labels": common_labels("block-storage"),
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "ebs.csi.aws.com",
        "parameters": {"type": "gp3", "encrypted": "true", "csi.storage.k8s.io/fstype": "ext4"},
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


@dataclass(frozen=True)
class AddonSpec:
    name: str
    service_account: str | None = None  # kube-system service account the add-on's role is for
    managed_policy: str | None = None  # AWS-managed policy ARN suffix (after arn:aws:iam::aws:policy/)
    needs_nodes: bool = False  # its pods must run for the add-on to become ACTIVE
    version: str | None = None  # the build pinned for the cluster's Kubernetes version
    configuration: dict[str, Any] | None = None  # its configurationValues (the add-on's own schema)


def addons(config: StackConfig, pinned: dict[str, AddonVersion]) -> tuple[list[AddonSpec], list[str]]:
    """EKS managed add-ons at their pinned builds (configs/eks-addons.yaml), each add-on with AWS
    permissions on its own role [eks-addons]; and a warning for each add-on without a pin."""
    specs = _addons(config)
    warnings = [
        f"configs/eks-addons.yaml: no {spec.name} build is pinned for Kubernetes {config.cluster.kubernetes_version}: "
        "EKS installs its default build at creation (aws eks describe-addon-versions lists them)"
        for spec in specs
        if pinned[spec.name].version is None
    ]
    return [dataclasses.replace(spec, version=pinned[spec.name].version) for spec in specs], warnings


def _addons(config: StackConfig) -> list[AddonSpec]:
    specs = [
        # With networkPolicies on, the VPC CNI's network policy agent enforces NetworkPolicies [eks-netpol].
        AddonSpec(
            "vpc-cni",
            "aws-node",
            VPC_CNI_POLICY,
            configuration={"enableNetworkPolicy": "true"} if config.network_policies_enabled else None,
        ),
        AddonSpec("kube-proxy"),
        AddonSpec("eks-pod-identity-agent"),
        AddonSpec("coredns", needs_nodes=True),
        # Block volumes (the platform's NATS JetStream store) on the gp3 StorageClass.
        AddonSpec(
            "aws-ebs-csi-driver",
            "ebs-csi-controller-sa",
            "service-role/AmazonEBSCSIDriverPolicy",
            needs_nodes=True,
        ),
    ]
    storage = config.model_cache.storage
    if storage == "efs":
        specs.append(
            AddonSpec(
                "aws-efs-csi-driver",
                "efs-csi-controller-sa",
                "service-role/AmazonEFSCSIDriverPolicy",
                needs_nodes=True,
            )
        )
    elif storage == "fsx-lustre":
        # No role: the file system is created by the program and mounted through a static PV, so the
        # driver calls no FSx API (a role would need AmazonFSxFullAccess, far wider than nothing).
        specs.append(AddonSpec("aws-fsx-csi-driver", needs_nodes=True))
    return specs


def service_trust_policy(service: str) -> dict[str, Any]:
    """Trust policy letting an AWS service (eks, ec2) assume a role."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
    }


def pod_identity_trust_policy() -> dict[str, Any]:
    """Trust policy for EKS Pod Identity roles (add-ons' service accounts)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
        ],
    }


NODE_MANAGED_POLICIES = ["AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryReadOnly"]
VPC_CNI_POLICY = "AmazonEKS_CNI_Policy"  # the VPC CNI's, on its own identity or on the node role
CLUSTER_MANAGED_POLICIES = ["AmazonEKSClusterPolicy"]


def kubeconfig(cluster_name: str, endpoint: str, certificate_authority: str, region: str) -> dict[str, Any]:
    """A kubeconfig that gets its token from `aws eks get-token` (the AWS CLI must be installed)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {"server": endpoint, "certificate-authority-data": certificate_authority},
            }
        ],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "users": [
            {
                "name": cluster_name,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region],
                    }
                },
            }
        ],
    }


def wildcard_actions(policy: dict[str, Any]) -> list[str]:
    """The actions of an IAM policy document that a wildcard widens (e.g. "s3:*", "ec2:Describe*")."""
    actions: list[str] = []
    for statement in policy["Statement"]:
        listed = statement.get("Action", [])
        actions += [listed] if isinstance(listed, str) else listed
    return [action for action in actions if "*" in action]
