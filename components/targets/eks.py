"""Cluster kind `eks`: an EKS cluster the program creates, with everything AWS it needs: network,
control plane, add-ons, node groups, the model cache's file system, and the gp3 StorageClass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.aws.eks_cluster import EksAddons, EksCluster, EksClusterArgs
from gpt_oss_infra.components.aws.load_balancer_controller import LoadBalancerController, LoadBalancerControllerArgs
from gpt_oss_infra.components.aws.lookups import account_facts
from gpt_oss_infra.components.aws.model_storage import ModelStorage, ModelStorageArgs
from gpt_oss_infra.components.aws.network import Network, NetworkArgs
from gpt_oss_infra.components.aws.node_groups import NodeGroups, NodeGroupsArgs
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import resource_args
from gpt_oss_infra.components.targets.target import ClusterAccess, ClusterTarget, FileSystemRef
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import StackConfig
from gpt_oss_infra.core.inputs.rules import REGION_KEY
from gpt_oss_infra.core.render.aws import specs as aws_specs
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan, eks_plan
from gpt_oss_infra.core.render.gpu_software import ChartRelease
from gpt_oss_infra.core.render.labels import HARDWARE_LABEL, POOL_LABEL
from gpt_oss_infra.core.render.stack_objects import Stack


def plan(stack: Stack, catalog: Catalog) -> ClusterPlan:
    """Add-ons and node groups, decided from what EC2 reports; ConfigError before any resource."""
    config = stack.config
    if not pulumi.Config("aws").get("region"):  # the cluster's region is the stack's, never a profile's default
        raise ConfigError(
            [Problem(REGION_KEY, "required for a cluster of kind eks: pulumi config set aws:region <region>")]
        )
    return eks_plan(
        config,
        stack.pools,
        stack.efa_pools,
        catalog.addon_versions[config.cluster.kubernetes_version],
        account_facts(stack),
    )


def build(stack: Stack, cluster_plan: ClusterPlan, opts: pulumi.ResourceOptions) -> ClusterTarget:
    region = pulumi.Config("aws").require("region")
    load_balancers = stack.gateways.load_balancers if stack.gateways else None
    cluster = AwsCluster(
        "gptoss",
        AwsClusterArgs(
            stack.config, cluster_plan, region, stack.block_storage_class, load_balancers, bool(stack.platform.crds)
        ),
        opts=opts,
    )
    return cluster.target


@dataclass(frozen=True)
class AwsClusterArgs:
    config: StackConfig
    plan: ClusterPlan  # add-ons and node groups (the system group first), decided by the core
    region: str
    block_storage_class: dict[str, Any]  # the gp3 StorageClass manifest (core.render.aws.specs.gp3_storage_class)
    load_balancers: ChartRelease | None = None  # the AWS Load Balancer Controller, when an endpoint needs NLBs
    applies_crds: bool = False  # the release has the program apply Dynamo's CRDs (up to 1.2.1)


class AwsCluster(Component):
    """The EKS target. `target`: the provider; `system_ready`, the system node group's add-ons (CoreDNS,
    CSI drivers) and the block StorageClass, which everything but GPU workloads waits for, and only
    these; the node group of each GPU pool, for the GPU workloads alone to wait for; the model
    cache's file system; the stack outputs of the cluster."""

    def __init__(self, name: str, args: AwsClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:AwsCluster", name, None, opts)
        config, cluster = args.config, args.config.cluster
        eks_plan = args.plan.eks
        pinned = config.pinned_zones
        existing = cluster.network.existing_private_subnets
        network = None
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
                    cluster_name=cluster.name,
                    vpc_cidr=cluster.network.vpc_cidr,
                    zones=available.names.apply(lambda names: aws_specs.availability_zone_order(config, names)),
                    zone_count=cluster.network.availability_zones,
                ),
                opts=self.child_opts(),
            )
            subnet_ids = network.private_subnet_ids
            # Pinned AZs come first in availability_zone_order: their subnets' indexes are known now.
            subnet_by_zone = {zone: subnet_ids[index] for index, zone in enumerate(pinned)}
        eks = EksCluster(
            f"{name}-eks",
            EksClusterArgs(config=cluster, region=args.region, subnet_ids=subnet_ids, applies_crds=args.applies_crds),
            opts=self.child_opts(),
        )
        base_addons = EksAddons(
            f"{name}-addons",
            eks.cluster,
            [spec for spec in eks_plan.addons if not spec.needs_nodes],
            opts=self.child_opts(),
        )
        system, *gpu_groups = eks_plan.groups
        nodes = NodeGroups(
            f"{name}-nodes",
            NodeGroupsArgs(
                cluster=eks.cluster,
                groups=eks_plan.groups,
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
            [spec for spec in eks_plan.addons if spec.needs_nodes],
            opts=self.child_opts(depends_on=[nodes.node_groups[system.pool]]),
        )
        storage_class = k8s.storage.v1.StorageClass(
            f"{name}-block-storage",
            **resource_args(args.block_storage_class),
            opts=self.child_opts(providers=[eks.provider], depends_on=[node_addons]),
        )
        file_system, storage_ready = self._model_storage(name, args, eks, subnet_ids)
        load_balancers_ready = []
        if args.load_balancers is not None:  # on the system nodes, with their add-ons
            controller = LoadBalancerController(
                f"{name}-load-balancers",
                LoadBalancerControllerArgs(
                    args.load_balancers, eks.cluster.name, args.region, eks.cluster.vpc_config.vpc_id
                ),
                opts=self.child_opts(providers=[eks.provider], depends_on=[node_addons]),
            )
            load_balancers_ready = [controller.release]
        private_subnet_ids = network.private_subnet_ids if network else subnet_ids
        self.target = ClusterTarget(
            provider=eks.provider,
            crds_provider=eks.crds_provider,
            access=ClusterAccess(eks.kubeconfig),
            system_ready=[node_addons, storage_class],
            gpu_ready={group.pool: nodes.node_groups[group.pool] for group in gpu_groups},
            file_system=file_system,
            storage_ready=storage_ready,
            load_balancers_ready=load_balancers_ready,
            exports={
                "clusterName": eks.cluster.name,
                "kubeconfig": eks.kubeconfig,
                "network": {"vpcId": eks.cluster.vpc_config.vpc_id, "privateSubnetIds": private_subnet_ids},
                "kubectlHint": (
                    f"aws eks update-kubeconfig --name {cluster.name} --region {args.region} "
                    f"&& kubectl get nodes -L {POOL_LABEL} -L {HARDWARE_LABEL}"
                ),
            },
        )
        self.register_outputs({"clusterName": eks.cluster.name, "kubeconfig": eks.kubeconfig})

    def _model_storage(
        self, name: str, args: AwsClusterArgs, eks: EksCluster, subnet_ids: list[pulumi.Input[str]]
    ) -> tuple[FileSystemRef | None, list[pulumi.Resource]]:
        """EFS or FSx for Lustre in the cluster's private subnets, unless the cache uses an existing class."""
        model_cache = args.config.model_cache
        if model_cache.storage == "existing":
            return None, []
        storage = ModelStorage(
            f"{name}-model-storage",
            ModelStorageArgs(
                config=model_cache,
                name=args.config.cluster.name,
                vpc_id=eks.cluster.vpc_config.vpc_id,
                subnet_ids=subnet_ids,
                node_security_group_id=eks.cluster.vpc_config.cluster_security_group_id,
            ),
            # It was `model-storage` at the stack's root: its file systems (protected) stay as they are.
            opts=self.child_opts(aliases=[pulumi.Alias(name="model-storage", parent=pulumi.ROOT_STACK_RESOURCE)]),
        )
        return FileSystemRef(storage.file_system_id, storage.dns_name, storage.mount_name), storage.ready
