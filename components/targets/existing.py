"""Cluster kind `existing`: a cluster that exists, reached through `kubernetes:kubeconfig` /
`kubernetes:context` (else KUBECONFIG or ~/.kube/config). Nothing is created outside Kubernetes."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.destroy_wait import ClusterAccess
from gpt_oss_infra.components.targets.target import ClusterTarget
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan, existing_cluster_plan
from gpt_oss_infra.core.render.stack_objects import Stack


def plan(stack: Stack, catalog: Catalog) -> ClusterPlan:
    return existing_cluster_plan()


def build(stack: Stack, cluster_plan: ClusterPlan, opts: pulumi.ResourceOptions) -> ClusterTarget:
    return ExistingCluster("existing-cluster", opts).target


class ExistingCluster(Component):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:kubernetes:ExistingCluster", name, None, opts)
        settings = pulumi.Config("kubernetes")
        # A kubeconfig may carry credentials: secret in the state and outputs, however it was stored.
        access = ClusterAccess(settings.get_secret("kubeconfig"), settings.get("context"))
        provider = k8s.Provider(
            f"{name}-kubernetes",
            kubeconfig=access.kubeconfig,
            context=access.context,
            enable_server_side_apply=True,
            # Adopt objects that exist already (the CRDs of an earlier Dynamo install, made by its
            # chart) instead of failing with AlreadyExists, as pulumi-kubernetes did before 4.29.
            upsert_existing_objects=True,
            # It was `kubernetes` at the stack's root: the provider (and all it manages) stays.
            opts=self.child_opts(aliases=[pulumi.Alias(name="kubernetes", parent=pulumi.ROOT_STACK_RESOURCE)]),
        )
        self.target = ClusterTarget(provider=provider, access=access)
        self.register_outputs({})
