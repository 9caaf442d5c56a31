"""A gpt-oss-120b serving deployment: engine-config ConfigMap, DynamoGraphDeployment, smoke test
and the opt-in benchmark."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.gateway_resources import DeploymentGateway, DeploymentGatewayArgs
from gpt_oss_infra.components.kubernetes import custom_resource, resource_args, scripted_job
from gpt_oss_infra.core.dynamo_graph import other_graph_types
from gpt_oss_infra.core.render import manifests, smoke_test_job
from gpt_oss_infra.core.render.stack_objects import Serving


@dataclass(frozen=True)
class DynamoServingArgs:
    serving: Serving
    gpu_nodes: pulumi.Resource | None  # the pool's node group (created clusters): the graph alone waits for it
    api_keys: pulumi.Output[dict[str, str]] | None = None  # the gateway's, when the endpoint has one
    gateway_ready: list[pulumi.Resource] = dataclasses.field(default_factory=list)  # its controller


class DynamoServing(Component):
    """One DynamoGraphDeployment with a Frontend and the recipe's workers."""

    def __init__(self, name: str, args: DynamoServingArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:serving:DynamoServing", name, None, opts)
        served = add_serving(self, name, args)
        self.endpoint, self.check, self.outputs = served.endpoint, served.check, served.outputs
        self.register_outputs(served.outputs)


@dataclass(frozen=True)
class Served:
    endpoint: pulumi.Output[str]  # the frontend's in-cluster URL
    check: pulumi.Output[str]  # the smoke test's proof once `up` ends, or why it is not checked yet
    outputs: dict[str, pulumi.Output[str]]  # endpoint and check, and the gateway's url and curl where exposed


def add_serving(owner: Component, name: str, args: DynamoServingArgs) -> Served:
    """The deployment's resources, children of `owner`."""
    serving = args.serving
    engine_config = (
        [
            k8s.core.v1.ConfigMap(
                f"{name}-engine-config", **resource_args(serving.engine_config), opts=owner.child_opts()
            )
        ]
        if serving.engine_config is not None
        else []
    )
    graph = serving.graph
    gpu_nodes = [args.gpu_nodes] if args.gpu_nodes is not None else []
    # The graph's apiVersion is part of its type, so of its URN: a graph deployed with another release's
    # apiVersion is the same resource, updated in place (the API server converts it), never a new
    # one beside the old, which would clash, or delete the live graph after creating it.
    graph_resource = custom_resource(
        owner,
        f"{name}-graph",
        graph,
        depends_on=[*engine_config, *gpu_nodes],
        aliases=[pulumi.Alias(type_=type_) for type_ in other_graph_types(graph["apiVersion"])],
    )
    if serving.benchmark is not None:
        scripted_job(owner, f"{name}-benchmark", serving.benchmark, depends_on=[graph_resource])
    service = manifests.frontend_service_name(serving.deployment.name)
    namespace = graph["metadata"]["namespace"]
    endpoint = pulumi.Output.from_input(f"http://{service}.{namespace}.svc.cluster.local:{manifests.FRONTEND_PORT}")
    # `pulumi up` got here only if the graph became Ready and the smoke test's answers had content.
    check: pulumi.Output[str] = pulumi.Output.from_input(f"not checked yet: {serving.deferred}")
    outputs: dict[str, pulumi.Output[str]] = {"endpoint": endpoint}
    gateway = None
    if serving.gateway is not None and args.api_keys is not None:
        gateway = DeploymentGateway(
            f"{name}-gateway",
            DeploymentGatewayArgs(serving.gateway, args.api_keys, args.gateway_ready),
            opts=owner.child_opts(),
        )
        outputs |= {"url": gateway.url, "curl": gateway.curl}
    if serving.smoke_test is not None:
        job = scripted_job(
            owner,
            f"{name}-smoke-test",
            serving.smoke_test,
            depends_on=[graph_resource, *(gateway.ready if gateway else [])],
            access_after=gateway.ready if gateway else None,
        )
        proven = smoke_test_job.proven(serving.deployment.name, serving.gateway)
        check = job.metadata.apply(lambda metadata: f"{proven} (Job {metadata['name']})")
    outputs["check"] = check
    return Served(endpoint, check, outputs)
