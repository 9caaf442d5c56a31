"""Everything AWS for `cluster.create: true`: network, EKS, add-ons and node groups."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.base import Component
from components.eks import EksAddons, EksCluster, EksClusterArgs
from components.kube import resource_args
from components.network import Network, NetworkArgs
from components.node_groups import NodeGroups, NodeGroupsArgs
from core import infra
from core.config import StackConfig


@dataclass(frozen=True)
class AwsClusterArgs:
    config: StackConfig
    plan: infra.EksPlan  # add-ons and node groups (the system group first), decided by the core
    region: str
    block_storage_class: dict[str, Any]  # the gp3 StorageClass manifest (core.infra.gp3_storage_class)


class AwsCluster(Component):
    """Outputs for what runs on the cluster:
    - `system_ready`: the system node group's add-ons (CoreDNS, CSI drivers) and the block StorageClass:
      everything but GPU workloads waits for these, and only these;
    - `gpu_node_groups`: the node group of each GPU pool, for the GPU workloads alone to wait for.
    """

    def __init__(self, name: str, args: AwsClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:AwsCluster", name, None, opts)
        config = args.config
        pinned = config.pinned_zones
        existing = config.cluster.network.existing_private_subnets
        if existing is not None:
            subnet_by_zone = dict(existing)
            subnet_ids = [existing[zone] for zone in pinned] + [
                subnet for zone, subnet in existing.items() if zone not in pinned
            ]
        else:
            available = aws.get_availability_zones_output(
                state="available", opts=pulumi.InvokeOutputOptions(parent=self)
            )
            network = Network(
                f"{name}-network",
                NetworkArgs(
                    cluster_name=config.cluster.name,
                    vpc_cidr=config.cluster.network.vpc_cidr,
                    zones=available.names.apply(lambda names: infra.availability_zone_order(config, names)),
                    zone_count=config.cluster.network.availability_zones,
                ),
                opts=self.child_opts(),
            )
            subnet_ids = network.private_subnet_ids
            # Pinned AZs come first in availability_zone_order: their subnets' indexes are known now.
            subnet_by_zone = {zone: subnet_ids[index] for index, zone in enumerate(pinned)}
        eks = EksCluster(
            f"{name}-eks",
            EksClusterArgs(config=config.cluster, region=args.region, subnet_ids=subnet_ids),
            opts=self.child_opts(),
        )
        addons = args.plan.addons
        base_addons = EksAddons(
            f"{name}-addons",
            eks.cluster,
            [spec for spec in addons if not spec.needs_nodes],
            opts=self.child_opts(),
        )
        system, *gpu_groups = args.plan.groups
        nodes = NodeGroups(
            f"{name}-nodes",
            NodeGroupsArgs(
                cluster=eks.cluster,
                specs=args.plan.groups,
                subnet_ids=subnet_ids,
                subnet_by_zone=subnet_by_zone,
                environment=config.environment,
            ),
            opts=self.child_opts(depends_on=[base_addons]),
        )
        # CoreDNS and the CSI controllers only become ACTIVE once nodes can run them: the system
        # nodes, never the GPU ones (which may wait for a Capacity Block, or take long to boot).
        node_addons = EksAddons(
            f"{name}-node-addons",
            eks.cluster,
            [spec for spec in addons if spec.needs_nodes],
            opts=self.child_opts(depends_on=[nodes.node_groups[system.pool]]),
        )
        storage_class = k8s.storage.v1.StorageClass(
            f"{name}-block-storage",
            **resource_args(args.block_storage_class),
            opts=self.child_opts(providers=[eks.provider], depends_on=[node_addons]),
        )
        self.system_ready: list[pulumi.Resource] = [node_addons, storage_class]
        self.gpu_node_groups = {group.pool: nodes.node_groups[group.pool] for group in gpu_groups}
        self.provider = eks.provider
        self.vpc_id = eks.cluster.vpc_config.vpc_id
        self.private_subnet_ids = subnet_ids
        self.node_security_group_id = eks.cluster.vpc_config.cluster_security_group_id
        self.cluster_name = eks.cluster.name
        self.kubeconfig = eks.kubeconfig
        self.register_outputs({"clusterName": self.cluster_name, "kubeconfig": self.kubeconfig})
