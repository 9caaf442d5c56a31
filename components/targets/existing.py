"""Cluster kind `existing`: a cluster that exists, reached through `kubernetes:kubeconfig` /
`kubernetes:context` (else KUBECONFIG or ~/.kube/config). Nothing is created outside Kubernetes."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.cluster_ownership import cluster_problems
from gpt_oss_infra.components.kubernetes import crds_provider
from gpt_oss_infra.components.pulumi_config import offline
from gpt_oss_infra.components.targets.target import ClusterAccess, ClusterTarget
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.render.aws.resources import AwsResource
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan, existing_cluster_plan
from gpt_oss_infra.core.render.ownership import owner_of
from gpt_oss_infra.core.render.stack_objects import Stack


def plan(stack: Stack, catalog: Catalog) -> ClusterPlan:
    """Before `pulumi preview` or `up` changes anything: refused, naming each, if the stack would take a
    namespace, cluster-wide object or Helm release name from someone else (core/render/ownership.py).
    Offline (the mock engine) there is no cluster to read: `make preflight` reads it before a first `up`."""
    if not offline():
        kubernetes = pulumi.Config("kubernetes")
        owner = owner_of(pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack())
        problems = cluster_problems(stack, kubernetes.get("kubeconfig"), kubernetes.get("context"), owner)
        if problems:
            raise ConfigError(problems)
    return existing_cluster_plan()


def aws_resources(stack: Stack, cluster_plan: ClusterPlan) -> list[AwsResource]:
    """None: an existing cluster's pools describe nodes that exist; nothing is made in AWS."""
    return []


def build(stack: Stack, cluster_plan: ClusterPlan, opts: pulumi.ResourceOptions) -> ClusterTarget:
    return ExistingCluster("existing-cluster", opts, applies_crds=bool(stack.platform.crds)).target


class ExistingCluster(Component):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None, applies_crds: bool = False):
        super().__init__("gpt-oss-infra:kubernetes:ExistingCluster", name, None, opts)
        settings = pulumi.Config("kubernetes")
        # A kubeconfig may carry credentials: secret in the state and outputs, however it was stored.
        access = ClusterAccess(settings.get_secret("kubeconfig"), settings.get("context"))
        provider = k8s.Provider(
            f"{name}-kubernetes",
            kubeconfig=access.kubeconfig,
            context=access.context,
            # No upsert (pulumi-kubernetes' default since 4.29): what exists is found and refused before
            # anything changes (plan() below), or adopted one by one (cluster.adopt), never wholesale.
            enable_server_side_apply=True,
            # It was `kubernetes` at the stack's root: the provider (and all it manages) stays.
            opts=self.child_opts(aliases=[pulumi.Alias(name="kubernetes", parent=pulumi.ROOT_STACK_RESOURCE)]),
        )
        crds = (
            crds_provider(f"{name}-crds", access.kubeconfig, access.context, self.child_opts())
            if applies_crds
            else None
        )
        self.target = ClusterTarget(provider=provider, access=access, crds_provider=crds)
        self.register_outputs({})
