"""AWS infrastructure as plain specs: subnets, node groups, add-ons and IAM policy documents.

Sources for the shapes below:
  [eks-efa]  https://docs.aws.amazon.com/eks/latest/userguide/device-management-efa.html
  [eks-cb]   https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html
  [eks-addons] https://docs.aws.amazon.com/eks/latest/userguide/workloads-add-ons-available-eks.html
  [ebs-csi]  https://docs.aws.amazon.com/eks/latest/userguide/ebs-csi.html (add-on, Pod Identity role,
             AWS-managed AmazonEBSCSIDriverPolicy)
  [ebs-csi-params] https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/parameters.md
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from core.config import StackConfig
from core.manifests import GPU_TAINT, HARDWARE_LABEL, POOL_LABEL, common_labels
from core.recipes import Pool

SYSTEM_POOL = "system"
SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"
CONTROL_PLANE_LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
SUBNET_PREFIX_LENGTH = 20  # 4,096 addresses per subnet: VPC CNI gives every pod a VPC address


@dataclass(frozen=True)
class NodeGroupSpec:
    pool: str
    instance_type: str
    ami_type: str
    capacity_type: str
    nodes: int
    labels: dict[str, str]
    taints: list[dict[str, str]]  # EKS form: key, value, effect NO_SCHEDULE
    disk_size_gib: int
    availability_zone: str | None  # a single AZ (reservation or EFA placement), else all
    capacity_reservation_id: str | None
    efa_interfaces: int  # 0: no EFA
    placement_group: bool  # a cluster placement group (EFA without a reservation)

    @property
    def instance_type_in_launch_template(self) -> bool:
        """Capacity Blocks require the instance type in the launch template [eks-cb]."""
        return self.capacity_type == "CAPACITY_BLOCK"

    @property
    def scaling(self) -> dict[str, int]:
        # EKS needs maxSize >= 1; a pool of 0 nodes keeps its node group ready to scale.
        return {"desired_size": self.nodes, "min_size": self.nodes, "max_size": max(self.nodes, 1)}


def system_node_group(config: StackConfig) -> NodeGroupSpec:
    system = config.cluster.system_nodes
    return NodeGroupSpec(
        pool=SYSTEM_POOL,
        instance_type=system.instance_type,
        ami_type=SYSTEM_AMI_TYPE,
        capacity_type="ON_DEMAND",
        nodes=system.nodes,
        labels={POOL_LABEL: SYSTEM_POOL},
        taints=[],
        disk_size_gib=system.disk_size_gib,
        availability_zone=None,
        capacity_reservation_id=None,
        efa_interfaces=0,
        placement_group=False,
    )


def node_group_tags(spec: NodeGroupSpec, environment: str) -> dict[str, str]:
    tags = {"gpt-oss-infra/environment": environment, POOL_LABEL: spec.pool}
    if spec.capacity_reservation_id:
        tags["gpt-oss-infra/capacity-reservation"] = spec.capacity_reservation_id
    return tags


def gpu_node_group(pool: Pool) -> NodeGroupSpec:
    config = pool.config
    instance = pool.instance
    efa = config.efa if config.efa is not None else instance.efa_interfaces > 0 and config.nodes > 1
    return NodeGroupSpec(
        pool=pool.name,
        instance_type=pool.instance_type,
        ami_type=pool.hardware.ami_type,
        capacity_type=config.capacity_type,
        nodes=config.nodes,
        labels={
            "nvidia.com/gpu.present": "true",
            HARDWARE_LABEL: config.hardware,
            POOL_LABEL: pool.name,
        },
        taints=[{"key": GPU_TAINT["key"], "value": "true", "effect": "NO_SCHEDULE"}],
        disk_size_gib=config.disk_size_gib,
        availability_zone=config.availability_zone,
        capacity_reservation_id=config.capacity_reservation_id,
        efa_interfaces=instance.efa_interfaces if efa else 0,
        # A reservation fixes placement; EFA traffic otherwise wants one cluster placement group.
        placement_group=efa and config.capacity_reservation_id is None,
    )


def efa_network_interfaces(count: int) -> list[dict[str, Any]]:
    """Launch-template interfaces [eks-efa]: the ENA primary and an EFA-only device on network
    card 0, then one EFA-only interface on each further card."""
    interfaces = [
        {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
        {"network_card_index": 0, "device_index": 1, "interface_type": "efa-only"},
    ]
    interfaces += [
        {"network_card_index": card, "device_index": 0, "interface_type": "efa-only"} for card in range(1, count)
    ]
    return interfaces


def availability_zone_order(config: StackConfig, available: list[str]) -> list[str]:
    """The VPC's AZs: those node pools pin first (their reservations live there), then others."""
    pinned = config.pinned_zones
    ordered = pinned + [zone for zone in available if zone not in pinned]
    return ordered[: config.cluster.network.availability_zones]


def subnet_cidrs(vpc_cidr: str, zones: int) -> list[tuple[str, str]]:
    """(private, public) CIDRs per AZ: private subnets first, public ones after them."""
    subnets = list(ipaddress.ip_network(vpc_cidr).subnets(new_prefix=SUBNET_PREFIX_LENGTH))
    if len(subnets) < 2 * zones:
        raise ValueError(f"{vpc_cidr} is too small for {2 * zones} /{SUBNET_PREFIX_LENGTH} subnets")
    return [(str(subnets[i]), str(subnets[zones + i])) for i in range(zones)]


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


def addons(config: StackConfig) -> list[AddonSpec]:
    """EKS managed add-ons, each add-on with AWS permissions on its own role [eks-addons]."""
    specs = [
        AddonSpec("vpc-cni", "aws-node", "AmazonEKS_CNI_Policy"),
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
        specs.append(AddonSpec("aws-fsx-csi-driver", "fsx-csi-controller-sa", "AmazonFSxFullAccess", needs_nodes=True))
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
