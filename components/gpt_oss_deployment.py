"""The public GptOssDeployment block: gpt-oss-120b served by one DynamoGraphDeployment (its engine
ConfigMap, the graph, the smoke test, the opt-in benchmark) and, with an endpoint, its gateway.
GptOssStack makes each of its deployments with this block too (`GptOssDeployment.of_stack`).
This module is analyzed for the component schema: no postponed annotations here."""

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.api_keys import api_keys
from gpt_oss_infra.components.arguments import refusal, refuse_bad_arguments, refuse_plaintext
from gpt_oss_infra.components.block_decisions import (
    Block,
    CacheFacts,
    PlatformFacts,
    caches_of_this_program,
    cluster_of,
    placed_on_pools_of_this_program,
    platforms_of_this_program,
    pools_of_this_program,
    refused,
)
from gpt_oss_infra.components.gateway_resources import DeploymentGateway, DeploymentGatewayArgs
from gpt_oss_infra.components.kubernetes import custom_resource, manifest_resources, resource_args, scripted_job
from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.dynamo_graph import other_graph_types
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.core.render import manifests, smoke_test_job
from gpt_oss_infra.core.render.stack_objects import Serving


class Endpoint(TypedDict):
    exposure: str
    """internal (an internal NLB, or the in-cluster gateway) or public (an internet-facing NLB with TLS)."""
    hostname: NotRequired[str | None]
    """The name clients use, on the certificate."""
    certificate_arn: NotRequired[str | None]
    """The ACM certificate the NLB ends TLS with (required for public)."""
    allowed_cidrs: NotRequired[list[str] | None]
    """Who may reach the NLB (its security group); default: anywhere for public, the controller's
    default for internal (set it to your VPC's CIDR)."""
    requests_per_minute: NotRequired[int | None]
    """Requests per minute per API key and gateway replica (default 60); 429 beyond it."""
    client_requests_per_minute: NotRequired[dict[str, int] | None]
    """A client's own limit instead, by client name (at most 15)."""


class GptOssDeploymentArgs(TypedDict):
    namespace: str
    """The namespace of the ModelCache the workers load from (it must exist)."""
    recipe: NotRequired[str | None]
    """A recipe by name (configs/recipes/), e.g. h200-agg-low-latency; or give recipe_definition."""
    recipe_definition: NotRequired[dict[str, Any] | None]
    """A recipe as an object: the fields of a configs/recipes/ file, checked like one."""
    gpus: NotRequired[int | None]
    """GPUs per worker, where the recipe allows several sizes."""
    replicas: NotRequired[int | None]
    """Copies of the recipe's workers (default 1)."""
    node_pool: NotRequired[str | None]
    """The GpuNodePool (its name) whose nodes run the workers; default: this deployment's name."""
    node_selector: NotRequired[dict[str, str] | None]
    """The GPU nodes' labels, for nodes no GpuNodePool made (instead of the pool's label)."""
    pool_nodes: NotRequired[int | None]
    """With node_selector: how many nodes it selects, for the placement check (default 1); a GpuNodePool's
    nodes are counted as it made them."""
    router_mode: NotRequired[str | None]
    """The frontend's router: round-robin or kv (default: kv with more than one replica, else round-robin)."""
    overrides: NotRequired[dict[str, Any] | None]
    """Engine-config keys deep-merged into the recipe's, checked against TensorRT-LLM's fields."""
    ready_timeout_minutes: NotRequired[int | None]
    """How long `up` waits for the graph to be Ready (default 60)."""
    uses_hf_token: NotRequired[bool | None]
    """Whether the namespace's ModelCache was given an hf_token (the workers read it too)."""
    dynamo_release: NotRequired[str | None]
    """The DynamoPlatform's release (default: configs/components.yaml's, 1.6.1)."""
    runtime_image: NotRequired[str | None]
    """The workers' image; default: the release's runtime for the recipe's backend."""
    model_revision: NotRequired[str | None]
    """The ModelCache's model revision."""
    kubernetes_version: NotRequired[str | None]
    """The cluster's Kubernetes version the objects are checked against (default 1.36)."""
    endpoint: NotRequired[Endpoint | None]
    """Reach the deployment from outside the cluster through an authenticating gateway (API keys, rate
    limits); needs a DynamoPlatform with `gateway`. Default: its in-cluster Service only."""
    api_keys: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]] | None]
    """With `endpoint`: the gateway's API keys by client name (each value a secret)."""
    api_clients: NotRequired[list[str] | None]
    """The client names of api_keys, where api_keys is an output (another resource's, or from another
    Pulumi language): they name the gateway's keys and rate limits before anything is registered."""
    load_balancer_controller: NotRequired[bool | None]
    """With `endpoint`: the cluster runs the AWS Load Balancer Controller, so the gateway gets an NLB;
    without it, an internal endpoint is the gateway's in-cluster Service (default: off)."""
    network_policies: NotRequired[bool | None]
    """NetworkPolicies that admit to the frontend only the gateway and the smoke test, and to the
    workers only their own graph (default: on with an endpoint, so nothing goes around its API keys)."""


@dataclass(frozen=True)
class DecidedDeployment:
    """What a GptOssDeployment registers, decided from its arguments (or by GptOssStack from the stack config)."""

    serving: Serving
    api_keys: pulumi.Output[dict[str, str]] | None  # the gateway's, when the endpoint has one
    gpu_nodes: pulumi.Resource | None = None  # the pool's node group (created clusters): the graph alone waits for it
    gateway_ready: list[pulumi.Resource] = dataclasses.field(default_factory=list)  # its gateway controller
    # GptOssStack's: the URNs its graph's NetworkPolicies had as children of its Workloads, up to 0.6.1 (by
    # the policy's name).
    policy_aliases: dict[str, list[pulumi.Alias]] = dataclasses.field(default_factory=dict)


class GptOssDeployment(Block[DecidedDeployment]):
    """gpt-oss-120b served by one DynamoGraphDeployment: the recipe resolved (GPUs per worker,
    overrides), its engine config checked against TensorRT-LLM's fields, its workers fitted to the
    GPUs and placed on the pool's nodes, then the engine ConfigMap, the graph and its smoke test,
    which `up` waits for; with `endpoint`, its gateway, which the smoke test goes through with an API
    key. Depend on the DynamoPlatform, the ModelCache and the GpuNodePool `node_pool` names (`opts.depends_on`):
    in another language's program that is what makes them before it."""

    endpoint: pulumi.Output[str]
    """The OpenAI-compatible URL inside the cluster."""
    serving_check: pulumi.Output[str]
    """The smoke test's proof of service once `up` ends."""
    url: pulumi.Output[str]
    """How clients call it: the gateway's URL with `endpoint`, else the in-cluster endpoint."""

    def __init__(self, name: str, args: GptOssDeploymentArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_bad_arguments("GptOssDeployment", name, args, GptOssDeploymentArgs)
        if (endpoint := args.get("endpoint")) is not None:
            refuse_bad_arguments("GptOssDeployment", name, endpoint, Endpoint, within="endpoint.")
        refuse_plaintext("GptOssDeployment", name, args, ["api_keys"])
        keys = refused("GptOssDeployment", name, lambda: api_keys(args.get("api_keys"), args.get("api_clients")))
        beside = _beside_its_blocks(args, opts)
        try:
            block = blocks.gpt_oss_deployment(
                name,
                blocks.whole(dict(args)),
                load_catalog(),
                pools_of_this_program(),
                with_hf_token=bool(args.get("uses_hf_token")),
                clients=keys.clients,
                beside=placed_on_pools_of_this_program(),
            )
        except ConfigError as error:  # with what it must share with its blocks
            raise refusal("GptOssDeployment", name, ConfigError(error.problems + beside)) from None
        if beside:
            raise refusal("GptOssDeployment", name, ConfigError(beside))
        placed = block.serving.deployment
        if block.on_gpu_node_pool and placed.pool is not None:  # the next on its pool is placed beside it
            placed_on_pools_of_this_program().setdefault(placed.pool.name, []).append(placed)
        for warning in block.warnings:
            pulumi.log.warn(warning)
        # The gateway controller is the DynamoPlatform's, which this component depends on.
        decided = DecidedDeployment(block.serving, keys.values)
        self._register(name, decided, opts)

    def _register(self, name: str, decided: DecidedDeployment, opts: pulumi.ResourceOptions | None) -> None:
        super().__init__("gpt-oss-infra:index:GptOssDeployment", name, None, opts)
        # Its graph pods' NetworkPolicies, made before the graph: beside the namespace's default deny, a pod
        # started before its policy could not be reached.
        policies: list[pulumi.Resource] = [
            k8s.networking.v1.NetworkPolicy(
                f"{name}-{policy['metadata']['name'].removeprefix(f'{name}-')}",
                **resource_args(policy),
                opts=self.child_opts(aliases=decided.policy_aliases.get(policy["metadata"]["name"], [])),
            )
            for policy in decided.serving.network_policies
        ]
        self.served = self._serve(name, decided, policies)
        self.endpoint = self.served.endpoint
        self.serving_check = self.served.check
        self.url = self.served.url or self.served.endpoint
        self.register_outputs({"endpoint": self.endpoint, "servingCheck": self.serving_check, "url": self.url})

    def _serve(self, name: str, decided: DecidedDeployment, policies: list[pulumi.Resource]) -> "Served":
        serving = decided.serving
        # The files the graph's pods mount: its engine config, and its Planner's (autoscaling).
        config_maps = [
            k8s.core.v1.ConfigMap(f"{name}-{suffix}", **resource_args(config_map), opts=self.child_opts())
            for suffix, config_map in (
                ("engine-config", serving.engine_config),
                ("planner-config", serving.planner_config),
            )
            if config_map is not None
        ]
        # What its Planner reads pods with (autoscaling), there before the Planner starts.
        planner_access = manifest_resources(self, f"{name}-planner", serving.planner_access)
        graph = serving.graph
        gpu_nodes = [decided.gpu_nodes] if decided.gpu_nodes is not None else []
        # The graph's apiVersion is part of its type, so of its URN: a graph deployed with another release's
        # apiVersion is the same resource, updated in place (the API server converts it), never a new
        # one beside the old, which would clash, or delete the live graph after creating it.
        graph_resource = custom_resource(
            self,
            f"{name}-graph",
            graph,
            depends_on=[*config_maps, *planner_access, *gpu_nodes, *policies],
            aliases=[pulumi.Alias(type_=type_) for type_ in other_graph_types(graph["apiVersion"])],
            # Dynamo's admission refuses a component added to or removed from a live graph (its Planner, when
            # autoscaling is turned on or off): such a change replaces the graph, the old one deleted first
            # (the new one has its name). Only autoscaled graphs carry the annotation.
            replace_on_changes=[f'metadata.annotations["{manifests.COMPONENTS_ANNOTATION}"]'],
            delete_before_replace=True,
        )
        if serving.benchmark is not None:
            scripted_job(self, f"{name}-benchmark", serving.benchmark, depends_on=[graph_resource])
        service = manifests.frontend_service_name(serving.deployment.name)
        namespace = graph["metadata"]["namespace"]
        endpoint = pulumi.Output.from_input(f"http://{service}.{namespace}.svc.cluster.local:{manifests.FRONTEND_PORT}")
        # `pulumi up` got here only if the graph became Ready and the smoke test's answers had content.
        check: pulumi.Output[str] = pulumi.Output.from_input(f"not checked yet: {serving.deferred}")
        gateway = None
        if serving.gateway is not None and decided.api_keys is not None:
            gateway = DeploymentGateway(
                f"{name}-gateway",
                DeploymentGatewayArgs(serving.gateway, decided.api_keys, decided.gateway_ready),
                opts=self.child_opts(),
            )
        if serving.smoke_test is not None:
            job = scripted_job(
                self,
                f"{name}-smoke-test",
                serving.smoke_test,
                depends_on=[graph_resource, *(gateway.ready if gateway else [])],
                access_after=gateway.ready if gateway else None,
            )
            proven = smoke_test_job.proven(serving.deployment.name, serving.gateway)
            check = job.metadata.apply(lambda metadata: f"{proven} (Job {metadata['name']})")
        return Served(endpoint, check, gateway.url if gateway else None, gateway.curl if gateway else None)


@dataclass(frozen=True)
class Served:
    """How a deployment is reached, once `up` ends."""

    endpoint: pulumi.Output[str]  # the frontend's in-cluster URL
    check: pulumi.Output[str]  # the smoke test's proof once `up` ends, or why it is not checked yet
    url: pulumi.Output[str] | None  # with a gateway (endpoint internal or public): how clients call it
    curl: pulumi.Output[str] | None  # and a curl command that does


def _beside_its_blocks(args: GptOssDeploymentArgs, opts: pulumi.ResourceOptions | None) -> list[Problem]:
    """What the deployment must agree on with the program's platforms and its namespace's caches made before it
    on its cluster (its Kubernetes provider): a gateway, and its NLB's guard, a release, a revision, a token."""
    cluster = cluster_of(opts)
    platforms = {name: facts for name, facts in platforms_of_this_program().items() if facts.cluster == cluster}
    caches = [cache for cache in caches_of_this_program().get(args["namespace"], []) if cache.cluster == cluster]
    # The NLB guard's check predates the others and holds for every platform of the program, another language's
    # too, whose blocks no provider object ties together (base.provider_key).
    found = [_no_gateway(args, platforms), _unguarded_load_balancer(args, platforms_of_this_program())]
    return [problem for problem in found if problem] + _unlike_its_blocks(args, platforms, caches)


def _unlike_its_blocks(
    args: GptOssDeploymentArgs, platforms: dict[str, PlatformFacts], caches: list[CacheFacts]
) -> list[Problem]:
    """What the deployment must share with the program's platform and its namespace's cache, where the program
    made them (else they are another program's): the Dynamo release its graph is of, the snapshot its workers
    load, and the token Secret they read."""
    problems = []
    release = blocks.shared_argument(args, "dynamo_release")
    if platforms and release not in {facts.release for facts in platforms.values()}:
        installed = ", ".join(f"{name!r} {facts.release}" for name, facts in platforms.items())
        problems.append(
            Problem("dynamo_release", f"{release}, but the program's DynamoPlatform installs another ({installed})")
        )
    revision = blocks.shared_argument(args, "model_revision")
    if caches and revision not in {cache.model_revision for cache in caches}:
        downloaded = ", ".join(f"{cache.name!r} {cache.model_revision}" for cache in caches)
        problems.append(
            Problem(
                "model_revision", f"{revision}, which no ModelCache in {args['namespace']} downloads ({downloaded})"
            )
        )
    if caches and args.get("uses_hf_token") and not any(cache.hf_token for cache in caches):
        names = ", ".join(repr(cache.name) for cache in caches)
        problems.append(
            Problem(
                "uses_hf_token",
                f"true, but ModelCache {names} in {args['namespace']} was given no hf_token: the Secret its workers "
                "would read does not exist",
            )
        )
    return problems


def _through_a_gateway(args: GptOssDeploymentArgs) -> bool:
    """Whether the deployment's endpoint is an internal or public one, which its platform's gateway serves."""
    endpoint: Mapping[str, Any] = args.get("endpoint") or {}
    return endpoint.get("exposure") in ("internal", "public")


def _no_gateway(args: GptOssDeploymentArgs, platforms: dict[str, PlatformFacts]) -> Problem | None:
    """An endpoint where the program's platforms install no Envoy Gateway (with none, its platform is another
    program's, which may)."""
    if not _through_a_gateway(args) or not platforms:
        return None
    if any(facts.gateway for facts in platforms.values()):
        return None
    names = ", ".join(repr(name) for name in platforms)
    return Problem(
        "endpoint",
        f"needs Envoy Gateway, which no DynamoPlatform of this program installs ({names}): give one gateway=True",
    )


def _unguarded_load_balancer(args: GptOssDeploymentArgs, platforms: dict[str, PlatformFacts]) -> Problem | None:
    """An endpoint that gets an NLB while the program's gateway platform waits for none at destroy."""
    if not args.get("load_balancer_controller") or not _through_a_gateway(args):
        return None
    gateways = {name: facts for name, facts in platforms.items() if facts.gateway}
    if not gateways or any(facts.load_balancer_controller for facts in gateways.values()):
        return None  # its platform is another program's, or waits for the NLBs
    names = ", ".join(repr(name) for name in gateways)
    return Problem(
        "load_balancer_controller",
        f"true here, but DynamoPlatform {names} (the gateway) was made without it: its teardown guard would not "
        "wait for this endpoint's NLB, which `pulumi destroy` would then leave behind, billing; set "
        "load_balancer_controller on the platform too",
    )
