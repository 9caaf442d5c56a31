"""Karpenter on a created cluster: the controller's chart values, and each elastic pool's EC2NodeClass and
NodePool (nodePools.<pool>.scaling), validated against Karpenter's own CRDs (vendor/crds/karpenter/).

What a node of an elastic pool is matches a managed node group's node of the same pool (core/render/aws/
specs.py gpu_node_group): the same labels and GPU taint, which the workers and the placement check select
by; the EKS-optimized AL2023 AMI (the NVIDIA variant, picked by the pinned alias); IMDSv2 only with a hop
limit of 1; an encrypted gp3 root volume of the pool's size; and where the pool has EFA, the same network
interfaces in one cluster placement group, in the pool's zone.

How nodes come and go (docs/autoscaling.md: Elastic GPU pools):
- limits: `nvidia.com/gpu` at maxNodes x the instance's GPUs, and `nodes` at maxNodes. The pool's GPU budget,
  which the Planners of its graphs are checked against (core/resolve/sizing.py places every role at its
  maximum on maxNodes nodes). Karpenter's limit checks are eventually consistent: a burst may overrun them
  by a node [karpenter-nodepools], so the budget is what the Planners may ask for, not a billing cap.
- consolidationPolicy WhenEmpty: a node is removed only once no worker is on it, never moved to pack
  others; its workers leave only when the Planner scales them away (and drain their requests first,
  core/resolve/drain.py), or when a `pulumi up` replaces the graph.
- karpenter.sh/do-not-disrupt on the workers' pods (core/render/manifests.py), with no
  terminationGracePeriod and expireAfter Never: drift (a new AMI pin) waits until a node's workers are
  gone, and no node expires under a serving worker [karpenter-disruption].
- budgets: one node at a time.
  [karpenter-nodepools]  https://karpenter.sh/v1.14/concepts/nodepools/
  [karpenter-disruption] https://karpenter.sh/v1.14/concepts/disruption/
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.inputs.catalog import Chart, KarpenterSettings
from gpt_oss_infra.core.inputs.config import EksClusterConfig
from gpt_oss_infra.core.render.aws.specs import ElasticPoolSpec
from gpt_oss_infra.core.render.gpu_software import ChartRelease
from gpt_oss_infra.core.render.labels import POOL_LABEL, common_labels, pool_node_labels, pool_node_taint

CHART = "karpenter"  # configs/charts.yaml
CRD_CHART = "karpenter-crd"  # its CRDs, which `helm upgrade` upgrades (the controller chart's crds/ it would not)
SERVICE_ACCOUNT = "karpenter"  # the chart's fullname for release `karpenter`: its Pod Identity association's
NODE_CLASS_API = "karpenter.k8s.aws/v1"
NODE_POOL_API = "karpenter.sh/v1"
DO_NOT_DISRUPT = {"karpenter.sh/do-not-disrupt": "true"}
# The node role's name, known once it exists: the shell puts it in (components/aws/karpenter.py).
NODE_ROLE = "${karpenterNodeRole}"
# The EFA peers' security group carries it, so that an EC2NodeClass selects it (core/render/aws/resources.py).
EFA_PEERS_TAG = "gpt-oss-infra/efa-peers"
# EKS tags the cluster security group it creates with it (and keeps the tag): every node carries that group.
CLUSTER_SECURITY_GROUP_TAG = "aws:eks:cluster-name"
_CAPACITY_TYPES = {"ON_DEMAND": "on-demand", "SPOT": "spot"}  # EKS's names -> Karpenter's


@dataclass(frozen=True)
class KarpenterObjects:
    """The CRDs' release, the controller's, and each elastic pool's EC2NodeClass and NodePool."""

    crds: ChartRelease
    release: ChartRelease
    node_classes: dict[str, dict[str, Any]]  # pool -> its EC2NodeClass
    node_pools: dict[str, dict[str, Any]]  # pool -> its NodePool

    def objects(self) -> list[dict[str, Any]]:
        return [*self.node_classes.values(), *self.node_pools.values()]


def interruption_queue_name(cluster_name: str) -> str:
    """The SQS queue of Spot, health and state-change events: named after the cluster, as Karpenter's own
    CloudFormation names it (a queue name is unique per account and region, as a cluster's is)."""
    return cluster_name


def placement_group_name(cluster_name: str, pool: str) -> str:
    """An EFA pool's cluster placement group, which the EC2NodeClass selects by name (Karpenter makes none)."""
    return f"{cluster_name}-{pool}"


def karpenter_objects(
    cluster: EksClusterConfig,
    pools: list[ElasticPoolSpec],
    charts: dict[str, Chart],
    settings: KarpenterSettings,
    environment: str,
) -> KarpenterObjects | None:
    """Karpenter for a created cluster's elastic pools; None without any."""
    if not pools:
        return None
    values = {
        "settings": {"clusterName": cluster.name, "interruptionQueue": interruption_queue_name(cluster.name)},
        "serviceAccount": {"name": SERVICE_ACCOUNT},
        "controller": {"resources": settings.controller_resources},
    }
    subnets = _subnet_terms(cluster)
    return KarpenterObjects(
        crds=ChartRelease(charts[CRD_CHART], {}),
        release=ChartRelease(charts[CHART], values, skips_crds=True),
        node_classes={spec.pool: node_class(spec, cluster.name, subnets, settings, environment) for spec in pools},
        node_pools={spec.pool: node_pool(spec, settings) for spec in pools},
    )


def _subnet_terms(cluster: EksClusterConfig) -> list[dict[str, Any]]:
    """The cluster's private subnets: the existing ones by id, or the created VPC's by the tags they carry."""
    existing = cluster.network.existing_private_subnets
    if existing is not None:
        return [{"id": subnet} for subnet in existing.values()]
    return [{"tags": {f"kubernetes.io/cluster/{cluster.name}": "shared", "kubernetes.io/role/internal-elb": "1"}}]


def node_class(
    spec: ElasticPoolSpec,
    cluster_name: str,
    subnets: list[dict[str, Any]],
    settings: KarpenterSettings,
    environment: str,
) -> dict[str, Any]:
    security_groups: list[dict[str, Any]] = [{"tags": {CLUSTER_SECURITY_GROUP_TAG: cluster_name}}]
    efa: dict[str, Any] = {}
    if spec.network_interfaces:  # every interface gets the node class's groups: the EFA peers' among them
        security_groups.append({"tags": {EFA_PEERS_TAG: cluster_name}})
        efa = {
            "networkInterfaces": [
                {
                    "networkCardIndex": interface["network_card_index"],
                    "deviceIndex": interface["device_index"],
                    "interfaceType": interface["interface_type"],
                }
                for interface in spec.network_interfaces
            ],
            "placementGroupSelector": {"name": placement_group_name(cluster_name, spec.pool)},
        }
    return {
        "apiVersion": NODE_CLASS_API,
        "kind": "EC2NodeClass",
        "metadata": {"name": spec.pool, "labels": common_labels("node-class")},
        "spec": {
            "role": NODE_ROLE,
            "amiSelectorTerms": [{"alias": settings.ami_alias}],
            "subnetSelectorTerms": subnets,
            "securityGroupSelectorTerms": security_groups,
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpTokens": "required",  # IMDSv2 only
                "httpPutResponseHopLimit": 1,  # pods cannot reach the node's credentials
                "httpProtocolIPv6": "disabled",
            },
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "rootVolume": True,
                    "ebs": {
                        "volumeSize": f"{spec.disk_size_gib}Gi",
                        "volumeType": "gp3",
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                }
            ],
            **efa,
            "tags": {POOL_LABEL: spec.pool, "gpt-oss-infra/environment": environment},
        },
    }


def node_pool(spec: ElasticPoolSpec, settings: KarpenterSettings) -> dict[str, Any]:
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [spec.instance_type]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [_CAPACITY_TYPES[spec.capacity_type]]},
    ]
    if spec.availability_zone:
        requirements.append(
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [spec.availability_zone]}
        )
    return {
        "apiVersion": NODE_POOL_API,
        "kind": "NodePool",
        "metadata": {"name": spec.pool, "labels": common_labels("node-pool")},
        "spec": {
            "template": {
                "metadata": {"labels": pool_node_labels(spec.hardware, spec.pool)},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": spec.pool},
                    "requirements": requirements,
                    "taints": [pool_node_taint(spec.hardware, spec.pool)],
                    "expireAfter": "Never",
                },
            },
            "limits": spec.limits,
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": settings.consolidate_after,
                "budgets": [{"nodes": "1"}],
            },
        },
    }
