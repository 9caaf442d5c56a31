"""A gpt-oss-120b serving deployment: engine-config ConfigMap + DynamoGraphDeployment."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import resource_args
from core import manifests
from core.config import Release
from core.recipes import ResolvedDeployment


@dataclass(frozen=True)
class ServingArgs:
    deployment: ResolvedDeployment
    release: Release
    namespace: str
    node_selector: dict[str, str]
    with_hf_token: bool


class DynamoServing(pulumi.ComponentResource):
    """One DynamoGraphDeployment with a Frontend and the recipe's TRT-LLM workers."""

    def __init__(self, name: str, args: ServingArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:serving:DynamoServing", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        engine_config = k8s.core.v1.ConfigMap(
            f"{name}-engine-config",
            **resource_args(manifests.engine_config_map(args.deployment, args.namespace)),
            opts=child,
        )
        graph = manifests.dynamo_graph_deployment(
            args.deployment, args.release, args.namespace, args.node_selector, args.with_hf_token
        )
        self.graph = k8s.apiextensions.CustomResource(
            f"{name}-graph",
            api_version=graph["apiVersion"],
            kind=graph["kind"],
            metadata=graph["metadata"],
            spec=graph["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[engine_config]),
        )
        frontend = manifests.frontend_service_name(args.deployment.name)
        self.endpoint = pulumi.Output.from_input(
            f"http://{frontend}.{args.namespace}.svc.cluster.local:{manifests.FRONTEND_PORT}"
        )
        self.register_outputs({"endpoint": self.endpoint})
