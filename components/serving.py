"""A gpt-oss-120b serving deployment: engine-config ConfigMap + DynamoGraphDeployment."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.base import Component
from components.kubernetes import resource_args
from core.render import manifests
from core.stack import Serving


@dataclass(frozen=True)
class DynamoServingArgs:
    serving: Serving
    gpu_nodes: pulumi.Resource | None  # the pool's node group (created clusters): the graph alone waits for it


class DynamoServing(Component):
    """One DynamoGraphDeployment with a Frontend and the recipe's TRT-LLM workers."""

    def __init__(self, name: str, args: DynamoServingArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:serving:DynamoServing", name, None, opts)
        serving = args.serving
        engine_config = k8s.core.v1.ConfigMap(
            f"{name}-engine-config",
            **resource_args(serving.engine_config),
            opts=self.child_opts(),
        )
        graph = serving.graph
        gpu_nodes = [args.gpu_nodes] if args.gpu_nodes is not None else []
        graph_resource = k8s.apiextensions.CustomResource(
            f"{name}-graph",
            api_version=graph["apiVersion"],
            kind=graph["kind"],
            metadata=graph["metadata"],
            spec=graph["spec"],
            opts=self.child_opts(depends_on=[engine_config, *gpu_nodes]),
        )
        if serving.benchmark_job is not None:
            k8s.batch.v1.Job(
                f"{name}-benchmark",
                **resource_args(serving.benchmark_job),
                opts=self.child_opts(depends_on=[graph_resource]),
            )
        service = manifests.frontend_service_name(serving.deployment.name)
        namespace = graph["metadata"]["namespace"]
        self.endpoint = pulumi.Output.from_input(
            f"http://{service}.{namespace}.svc.cluster.local:{manifests.FRONTEND_PORT}"
        )
        # `pulumi up` got here only if the graph became Ready and the smoke test's answer had content.
        self.check: pulumi.Output[str] = pulumi.Output.from_input(f"not checked yet: {serving.deferred}")
        if serving.smoke_test is not None:
            script = k8s.core.v1.ConfigMap(
                f"{name}-smoke-test-script", **resource_args(serving.smoke_test.script), opts=self.child_opts()
            )
            job = k8s.batch.v1.Job(
                f"{name}-smoke-test",
                **resource_args(serving.smoke_test.job),
                opts=self.child_opts(depends_on=[graph_resource, script]),
            )
            self.check = job.metadata.apply(
                lambda metadata: f"answered a chat completion through {service} (Job {metadata['name']})"
            )
        self.register_outputs({"endpoint": self.endpoint, "check": self.check})
