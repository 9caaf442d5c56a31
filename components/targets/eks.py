"""Cluster kind `eks`: an EKS cluster the program creates, with everything AWS it needs: network,
control plane, add-ons, node groups, the model cache's file system, and the gp3 StorageClass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.aws.build import AwsResources, Built, resolved
from gpt_oss_infra.components.aws.eks_cluster import EksCluster
from gpt_oss_infra.components.aws.karpenter import Karpenter
from gpt_oss_infra.components.aws.load_balancer_controller import LoadBalancerController
from gpt_oss_infra.components.aws.lookups import account_facts
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.gpu_node_pool import GpuNodePool
from gpt_oss_infra.components.kubernetes import resource_args
from gpt_oss_infra.components.targets.target import ClusterAccess, ClusterTarget, FileSystemRef
from gpt_oss_infra.core.checks.stack_checks import schema_problems
from gpt_oss_infra.core.errors import ConfigError, Problem, refuse
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import StackConfig
from gpt_oss_infra.core.inputs.rules import REGION_KEY
from gpt_oss_infra.core.render.aws import specs as aws_specs
from gpt_oss_infra.core.render.aws.karpenter import karpenter_resources
from gpt_oss_infra.core.render.aws.resources import AwsResource, cluster_network, created_cluster
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan, EksPlan, eks_plan
from gpt_oss_infra.core.render.gpu_software import ChartRelease, chart_problems
from gpt_oss_infra.core.render.labels import HARDWARE_LABEL, POOL_LABEL
from gpt_oss_infra.core.render.stack_objects import Stack


def plan(stack: Stack, catalog: Catalog) -> ClusterPlan:
    """Add-ons and node groups, decided from what EC2 reports; ConfigError before any resource."""
    config = stack.config
    if not pulumi.Config("aws").get("region"):  # the cluster's region is the stack's, never a profile's default
        raise ConfigError(
            [Problem(REGION_KEY, "required for a cluster of kind eks: pulumi config set aws:region <region>")]
        )
    cluster_plan = eks_plan(
        config,
        stack.pools,
        stack.efa_pools,
        catalog.addon_versions[config.cluster.kubernetes_version],
        account_facts(stack),
        catalog.charts,
        catalog.karpenter,
        catalog.nodes,
    )
    assert cluster_plan.eks is not None, "the eks kind's plan has its add-ons and node groups"
    karpenter = cluster_plan.eks.karpenter
    if karpenter is not None:  # against Karpenter's own CRDs and chart values, as the stack's objects are
        dynamo = catalog.dynamo_versions[config.release.dynamo]
        refuse(
            schema_problems(karpenter.objects(), config.cluster.kubernetes_version, dynamo)
            + chart_problems([karpenter.crds, karpenter.release], set())
        )
    return cluster_plan


# The cluster component's name, which every AWS resource's name starts with.
NAME = "gptoss"


def aws_resources(stack: Stack, cluster_plan: ClusterPlan) -> list[AwsResource]:
    assert cluster_plan.eks is not None, "the eks kind's plan has its add-ons and node groups"
    made = created_cluster(NAME, stack.config, cluster_plan.eks, _load_balancers(stack))
    region = pulumi.Config("aws").require("region")
    return made.resources() + _karpenter_resources(NAME, stack.config, cluster_plan.eks, region)


def _karpenter_resources(name: str, config: StackConfig, plan: EksPlan, region: str) -> list[AwsResource]:
    """Karpenter's AWS side, where the cluster has elastic pools."""
    if plan.karpenter is None:
        return []
    cluster = cluster_network(f"{name}-eks-cluster")
    return karpenter_resources(f"{name}-karpenter", config.cluster.name, region, cluster, plan.elastic)


def _load_balancers(stack: Stack) -> ChartRelease | None:
    """The AWS Load Balancer Controller, when an endpoint needs NLBs."""
    return stack.gateways.load_balancers if stack.gateways else None


def build(stack: Stack, cluster_plan: ClusterPlan, opts: pulumi.ResourceOptions) -> ClusterTarget:
    region = pulumi.Config("aws").require("region")
    load_balancers = _load_balancers(stack)
    assert stack.block_storage_class is not None, "a created cluster gets its gp3 StorageClass"
    cluster = AwsCluster(
        NAME,
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
    """The EKS target: the AWS resources core/render/aws/resources.py's created_cluster describes, in its
    parts. `target`: the provider; `system_ready`, the system node group's add-ons (CoreDNS, CSI drivers)
    and the block StorageClass, which everything but GPU workloads waits for, and only these; the node
    group of each GPU pool, for the GPU workloads alone to wait for; the model cache's file system; the
    stack outputs of the cluster."""

    def __init__(self, name: str, args: AwsClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:AwsCluster", name, None, opts)
        config, cluster = args.config, args.config.cluster
        eks_plan = args.plan.eks
        assert eks_plan is not None, "the eks kind's plan has its add-ons and node groups"
        made = created_cluster(name, config, eks_plan, args.load_balancers)
        built: Built = {}
        if made.network:
            available = aws.get_availability_zones_output(
                state="available", opts=pulumi.InvokeOutputOptions(parent=self)
            )
            zones = available.names.apply(lambda names: aws_specs.availability_zone_order(config, names))
            AwsResources("Network", f"{name}-network", made.network, built, {"zones": zones}, self.child_opts())
        eks = EksCluster(
            f"{name}-eks", made.control_plane, built, cluster.name, args.region, args.applies_crds, self.child_opts()
        )
        base_addons = AwsResources("EksAddons", f"{name}-addons", made.base_addons, built, opts=self.child_opts())
        nodes = AwsResources(
            "NodeGroups",
            f"{name}-nodes",
            made.node_groups.shared,
            built,
            opts=self.child_opts(depends_on=[base_addons]),
        )
        gpu_pools = {
            pool: GpuNodePool.of_stack(
                f"{name}-pool-{pool}",
                resources,
                built,
                moved_from=nodes,
                opts=self.child_opts(depends_on=[base_addons]),
            )
            for pool, resources in made.node_groups.gpu_pools.items()
        }
        system = eks_plan.groups[0]
        # CoreDNS and the CSI controllers only become ACTIVE once nodes can run them: the system
        # nodes, never the GPU ones (which may wait for a Capacity Block, or take long to boot).
        node_addons = AwsResources(
            "EksAddons",
            f"{name}-node-addons",
            made.node_addons,
            built,
            opts=self.child_opts(depends_on=[nodes.made[f"{name}-nodes-{system.pool}"]]),
        )
        storage_class = k8s.storage.v1.StorageClass(
            f"{name}-block-storage",
            **resource_args(args.block_storage_class),
            opts=self.child_opts(providers=[eks.provider], depends_on=[node_addons]),
        )
        file_system, storage_ready = (
            model_storage(
                f"{name}-model-storage",
                made.model_storage,
                built,
                # It was `model-storage` at the stack's root: its file systems (protected) stay as they are.
                self.child_opts(aliases=[pulumi.Alias(name="model-storage", parent=pulumi.ROOT_STACK_RESOURCE)]),
            )
            if made.model_storage
            else (None, [])
        )
        load_balancers_ready: list[pulumi.Resource] = []
        if args.load_balancers is not None:  # on the system nodes, with their add-ons
            controller = LoadBalancerController(
                f"{name}-load-balancers",
                made.load_balancer_controller,
                built,
                args.load_balancers,
                args.region,
                eks.cluster.vpc_config.vpc_id,
                opts=self.child_opts(providers=[eks.provider], depends_on=[node_addons]),
            )
            load_balancers_ready = [controller.release]
        elastic: dict[str, pulumi.Resource] = {}
        if eks_plan.karpenter is not None:  # on the system nodes, with their add-ons
            karpenter = Karpenter(
                f"{name}-karpenter",
                _karpenter_resources(name, config, eks_plan, args.region),
                built,
                eks_plan.karpenter,
                [built[key] for key in (f"{name}-nodes-efa",) if key in built],  # the EFA peers' group
                opts=self.child_opts(providers=[eks.provider], depends_on=[node_addons]),
            )
            elastic = karpenter.node_pools
        private_subnet_ids = resolved(made.subnet_ids, built)
        self.target = ClusterTarget(
            provider=eks.provider,
            crds_provider=eks.crds_provider,
            access=ClusterAccess(eks.kubeconfig),
            system_ready=[node_addons, storage_class],
            gpu_ready={pool: made_pool.node_group for pool, made_pool in gpu_pools.items()} | elastic,
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


def model_storage(
    name: str, resources: list[AwsResource], built: Built, opts: pulumi.ResourceOptions | None = None
) -> tuple[FileSystemRef, list[pulumi.Resource]]:
    """The model cache's EFS or FSx for Lustre file system (core/render/aws/resources.py: model_storage),
    and what a pod mounting it waits for: the EFS mount targets, or the FSx file system and the nodes'
    side of its security group rules."""
    storage = AwsResources("ModelStorage", name, resources, built, opts=opts)
    made = storage.made.values()
    efs = built.get(f"{name}-efs")
    if efs is not None:  # Pulumi waits for each mount target to become available; pods mount through them.
        return FileSystemRef(efs.id, None, None), [target for target in made if isinstance(target, aws.efs.MountTarget)]
    fsx = built[f"{name}-fsx"]
    assert isinstance(fsx, aws.fsx.LustreFileSystem)
    # Pulumi waits for the file system to become AVAILABLE.
    node_rules = [rule for rule in made if isinstance(rule, aws.vpc.SecurityGroupIngressRule)]
    return FileSystemRef(fsx.id, fsx.dns_name, fsx.mount_name), [fsx, *node_rules]
