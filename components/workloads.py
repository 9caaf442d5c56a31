"""The serving workloads' namespace and its image pull secret."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import namespace_resource, ngc_pull_secret, resource_args


@dataclass(frozen=True)
class WorkloadsArgs:
    namespace: dict[str, Any]
    pull_secret: dict[str, Any] | None  # without data: the NGC key is added here
    ngc_api_key: pulumi.Output[str] | None
    network_policies: list[dict[str, Any]] = dataclasses.field(default_factory=list)


class Workloads(Component):
    """Depend on the component to wait for the namespace, its pull secret and its own NetworkPolicies (each
    deployment's graph pods' are its GptOssDeployment's)."""

    def __init__(self, name: str, args: WorkloadsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:serving:Workloads", name, None, opts)
        # Both were at the stack's root before this component: kept, not replaced.
        was_at_root = pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)
        namespace = namespace_resource(
            f"{name}-namespace",
            args.namespace,
            self.child_opts(aliases=[pulumi.Alias(name=name, parent=pulumi.ROOT_STACK_RESOURCE)]),
        )
        if args.pull_secret is not None and args.ngc_api_key is not None:
            ngc_pull_secret(
                f"{name}-ngc-pull",
                args.pull_secret,
                args.ngc_api_key,
                self.child_opts(depends_on=[namespace], aliases=[was_at_root]),
            )
        for policy in args.network_policies:
            k8s.networking.v1.NetworkPolicy(
                f"{name}-{policy['metadata']['name']}",
                **resource_args(policy),
                opts=self.child_opts(depends_on=[namespace]),
            )
        self.register_outputs({})
