"""GptOssStack: the whole product as one component, from the stack config (what a stack file's
`gpt-oss-infra:` keys say). This module is analyzed for the component schema: no postponed
annotations here (the SDK's analyzer reads them as types)."""

from dataclasses import dataclass
from types import ModuleType
from typing import Any, NotRequired, TypedDict

import pulumi

from gpt_oss_infra.components.api_keys import ApiKeys, api_keys
from gpt_oss_infra.components.arguments import refuse_bad_arguments, refuse_plaintext
from gpt_oss_infra.components.aws.lookups import refuse_other_regions
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.dynamo_platform import DecidedPlatform, DynamoPlatform
from gpt_oss_infra.components.gpt_oss_deployment import DecidedDeployment, GptOssDeployment
from gpt_oss_infra.components.gpu_software_resources import GpuSoftware, GpuSoftwareArgs
from gpt_oss_infra.components.model_cache import DecidedModelCache, ModelCache
from gpt_oss_infra.components.observability_resources import Observability, ObservabilityArgs
from gpt_oss_infra.components.stack_config import (
    StackFileConfig,
    api_key_clients,
    raw_namespace_config,
    refused,
    secret_config,
    secret_map_config,
)
from gpt_oss_infra.components.targets import KINDS
from gpt_oss_infra.components.targets.target import ClusterTarget
from gpt_oss_infra.components.workloads import Workloads, WorkloadsArgs
from gpt_oss_infra.core.checks.aws_contract import aws_refusals
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import Catalog, load_catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX
from gpt_oss_infra.core.render.aws.resources import AwsResource
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan
from gpt_oss_infra.core.render.ownership import owner_of
from gpt_oss_infra.core.render.stack_objects import Serving, Stack, defer_serving
from gpt_oss_infra.core.report.stack_report import stack_report
from gpt_oss_infra.core.stack import build_stack

# Before 0.1.0 the stack's components were the program's own, at the stack's root: each keeps its
# URN (and so its live resources) by this alias; their children inherit it.
FROM_STACK_ROOT = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]

# The workloads namespace's component: its children's names, and so their URNs, derive from it.
WORKLOADS = "workloads"
# The types of the components the public blocks replaced in 0.4.1 (block_aliases).
PLATFORM_WAS, CACHE_WAS, DEPLOYMENT_WAS = (
    "gpt-oss-infra:dynamo:DynamoPlatform",
    "gpt-oss-infra:model:ModelCache",
    "gpt-oss-infra:serving:DynamoServing",
)


def block_aliases(replaced_type: str) -> list[pulumi.Alias]:
    """A public block of the stack's keeps the URNs of the component of `replaced_type` it replaced in 0.4.1,
    under GptOssStack (0.1.0-0.4.0) and at the stack's root (before 0.1.0); its children inherit them."""
    return [pulumi.Alias(type_=replaced_type), pulumi.Alias(type_=replaced_type, parent=pulumi.ROOT_STACK_RESOURCE)]


class GptOssStackArgs(TypedDict):
    config: dict[str, Any]
    """The stack config: every `gpt-oss-infra:` key of a stack file, without the prefix (release,
    cluster, nodePools, modelCache, deployments, ...), as docs/config.md describes it."""
    hf_token: NotRequired[pulumi.Input[str] | None]
    """A Hugging Face token for the model download (a secret); none for a public model."""
    ngc_api_key: NotRequired[pulumi.Input[str] | None]
    """An NGC API key: pull secrets for nvcr.io (a secret); none where images pull anonymously."""
    api_keys: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]] | None]
    """The gateways' API keys by client name (each value a secret), for internal or public endpoints."""
    api_clients: NotRequired[list[str] | None]
    """The client names of api_keys, where api_keys is an output (another resource's, or from another
    Pulumi language): they name the gateways' keys and rate limits before anything is registered."""


def stack_config_args() -> GptOssStackArgs:
    """GptOssStackArgs from this Pulumi stack's config (Pulumi.<stack>.yaml), each key checked as
    `pulumi up` reads it: a misspelt namespace, a secret stored in plaintext, refused with its key."""
    secrets = secret_map_config("apiKeys")
    return GptOssStackArgs(
        config=StackFileConfig(refused(raw_namespace_config)),
        hf_token=secret_config("hfToken"),
        ngc_api_key=secret_config("ngcApiKey"),
        api_keys={client: secrets[client] for client in api_key_clients()} if secrets is not None else None,
    )


def _output_of(value: pulumi.Input[str] | None) -> pulumi.Output[str] | None:
    return None if value is None else pulumi.Output.from_input(value)


def refuse_what_aws_would_refuse(resources: list[AwsResource], config: dict[str, Any]) -> None:
    """ConfigError naming every request of `resources` AWS's API would refuse (core/checks/aws_contract.py)."""
    if problems := aws_refusals(resources, config, KEY_PREFIX):
        raise ConfigError(problems)


@dataclass(frozen=True)
class _Decided:
    """What GptOssStack decides from its arguments before it registers anything."""

    catalog: Catalog
    stack: Stack
    kind: ModuleType  # the cluster target's module (components/targets/)
    cluster_plan: ClusterPlan
    keys: ApiKeys
    hf_token: pulumi.Output[str] | None  # each a Pulumi secret (refuse_plaintext refused a plain value)
    ngc_api_key: pulumi.Output[str] | None
    region: str | None


def _decide(name: str, args: GptOssStackArgs, opts: pulumi.ResourceOptions | None) -> _Decided:
    """Every check of GptOssStack's arguments, in the program's own process, or the run stopped naming
    the stack file's key (or the argument) and what is allowed."""
    refuse_bad_arguments("GptOssStack", name, args, GptOssStackArgs)
    refuse_plaintext("GptOssStack", name, args, ["hf_token", "ngc_api_key", "api_keys"])
    catalog = load_catalog()
    hf_token, ngc_api_key = _output_of(args.get("hf_token")), _output_of(args.get("ngc_api_key"))
    # A program's own config dict is refused as its argument; the stack file's as that file.
    given_to = None if isinstance(args["config"], StackFileConfig) else f"GptOssStack {name!r}"
    keys = refused(lambda: api_keys(args.get("api_keys"), args.get("api_clients")), given_to)
    refuse_other_regions(opts)
    region = pulumi.Config("aws").get("region")
    stack = refused(
        lambda: build_stack(
            args["config"],
            catalog,
            with_hf_token=hf_token is not None,
            with_ngc_key=ngc_api_key is not None,
            api_key_clients=keys.clients,
            region=region,
            owner=owner_of(pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack()),
        ),
        given_to,
    )
    # The cluster: what its kind decides before anything exists, and what AWS would refuse of what it
    # makes (under the stack config's key that holds the value).
    kind = KINDS[stack.config.cluster.kind]
    cluster_plan = refused(lambda: kind.plan(stack, catalog), given_to)
    refused(lambda: refuse_what_aws_would_refuse(kind.aws_resources(stack, cluster_plan), args["config"]), given_to)
    return _Decided(catalog, stack, kind, cluster_plan, keys, hf_token, ngc_api_key, region)


class GptOssStack(Component):
    """gpt-oss-120b served by NVIDIA Dynamo and TensorRT-LLM, everything a stack config says: the
    cluster (EKS with its GPU node groups, or an existing one), the Dynamo platform, the model cache,
    one serving graph per deployment and their gateways. Its children keep the names the config gives
    them (the cluster's, each deployment's): one GptOssStack per Pulumi stack. Everything AWS is made,
    checked and priced in one region, the stack's `aws:region`, through the default AWS provider."""

    endpoints: pulumi.Output[dict[str, str]]
    """Each deployment's in-cluster OpenAI-compatible URL."""
    serving_checks: pulumi.Output[dict[str, str]]
    """Each deployment's proof of service once `up` ends (its smoke test), or why it is not checked yet."""
    report: pulumi.Output[dict[str, Any]]
    """Pools, GPUs, costs and figures (each measured, published or modelled) and the warnings."""

    def __init__(self, name: str, args: GptOssStackArgs, opts: pulumi.ResourceOptions | None = None):
        decided = _decide(name, args, opts)
        # Registered only now: arguments refused above leave nothing behind, not even this component.
        super().__init__("gpt-oss-infra:index:GptOssStack", name, None, opts)
        # Graphs whose nodes do not exist yet are not checked by this `up`.
        stack = defer_serving(decided.stack, decided.cluster_plan.waiting_pools())
        target = decided.kind.build(stack, decided.cluster_plan, self.child_opts(aliases=FROM_STACK_ROOT))
        servings = self._serve(stack, target, decided)
        self._publish(stack, target, decided, servings)

    def _serve(self, stack: Stack, target: ClusterTarget, decided: "_Decided") -> dict[str, GptOssDeployment]:
        """Everything on the cluster, in the order `up` needs it; each deployment's serving graph."""

        def on_cluster(
            *depends_on: pulumi.Resource, aliases: list[pulumi.Alias] = FROM_STACK_ROOT
        ) -> pulumi.ResourceOptions:
            """A child that goes through the cluster's provider, after what every child waits for."""
            return self.child_opts(
                providers=[target.provider], depends_on=[*target.system_ready, *depends_on], aliases=aliases
            )

        dynamo = self._platform(stack, target, decided, opts=on_cluster(aliases=block_aliases(PLATFORM_WAS)))
        observability = (
            Observability(
                "observability", ObservabilityArgs(stack.observability), opts=on_cluster(*dynamo.volumes_gone)
            )
            if stack.observability
            else None
        )
        GpuSoftware(
            "gpu-software",
            GpuSoftwareArgs(stack.gpu_software, [observability.release] if observability else [], stack.gpu_namespaces),
            opts=on_cluster(),
        )
        workloads = Workloads(
            WORKLOADS,
            WorkloadsArgs(stack.namespace, stack.workload_pull_secret, decided.ngc_api_key, stack.network_policies),
            opts=on_cluster(),
        )
        cache = ModelCache.of_stack(
            "model-cache",
            DecidedModelCache(
                objects=stack.model_cache,
                file_system=target.file_system,
                hf_token=decided.hf_token,
                download_timeout=f"{decided.catalog.model_download.active_deadline_seconds}s",
                guards=None,
            ),
            opts=on_cluster(*target.storage_ready, workloads, aliases=block_aliases(CACHE_WAS)),
        )
        # After the cache and the platform's operator (which wait for the system nodes), not its gateway or
        # guards; a graph, for its GPU pool too.
        after = self.child_opts(
            providers=[target.provider],
            depends_on=[cache, *dynamo.operator_ready],
            aliases=block_aliases(DEPLOYMENT_WAS),
        )
        return {
            serving.deployment.name: self._deployment(serving, target, decided, dynamo, workloads, after)
            for serving in stack.serving
        }

    def _platform(
        self, stack: Stack, target: ClusterTarget, decided: "_Decided", opts: pulumi.ResourceOptions
    ) -> DynamoPlatform:
        """The Dynamo platform, with the whole stack's teardown guards and its Envoy Gateway: `pulumi destroy`
        deletes the charts that make volume claims (the platform's, monitoring's), then the guard
        `volumes-gone` (their volumes gone), then the nodes; the gateways, then `load-balancers-gone`, then
        Envoy Gateway and the cluster's load balancer controller."""
        return DynamoPlatform.of_stack(
            "dynamo-platform",
            DecidedPlatform(
                stack.platform,
                decided.ngc_api_key,
                guards=stack.teardown,
                gateway=stack.gateways,
                crds_provider=target.crds_provider,
                load_balancers_ready=target.load_balancers_ready,
                # Up to 0.6.1 the stack made both itself, as `teardown` and `gateway` (before 0.1.0 the program
                # made the gateway, at the stack's root; the guards came in 0.3.0).
                guards_aliases=[pulumi.Alias(name="teardown", parent=self)],
                gateway_aliases=[
                    pulumi.Alias(name="gateway", parent=self),
                    pulumi.Alias(name="gateway", parent=pulumi.ROOT_STACK_RESOURCE),
                ],
            ),
            opts=opts,
        )

    def _deployment(
        self,
        serving: Serving,
        target: ClusterTarget,
        decided: "_Decided",
        dynamo: DynamoPlatform,
        workloads: Workloads,
        opts: pulumi.ResourceOptions,
    ) -> GptOssDeployment:
        """One deployment's graph, its Jobs, gateway and NetworkPolicies."""
        return GptOssDeployment.of_stack(
            serving.deployment.name,
            DecidedDeployment(
                serving=serving,
                api_keys=decided.keys.values,
                gpu_nodes=target.gpu_ready.get(serving.deployment.config.node_pool or ""),  # a cpu pool's too
                gateway_ready=dynamo.gateway_ready,
                # Up to 0.6.1 the namespace's Workloads made every deployment's policies with its own.
                policy_aliases={
                    policy["metadata"]["name"]: [
                        pulumi.Alias(name=f"{WORKLOADS}-{policy['metadata']['name']}", parent=workloads)
                    ]
                    for policy in serving.network_policies
                },
            ),
            opts=opts,
        )

    def _publish(
        self, stack: Stack, target: ClusterTarget, decided: "_Decided", servings: dict[str, GptOssDeployment]
    ) -> None:
        """The report (its warnings logged), the component's outputs and the stack's, then register_outputs."""
        report = stack_report(stack, decided.catalog, decided.cluster_plan, decided.region)
        for warning in report["warnings"]:  # the stack's, the cluster plan's, and GPU pools no deployment uses
            pulumi.log.warn(warning)
        endpoints = {name: serving.endpoint for name, serving in servings.items()}
        checks = {name: serving.serving_check for name, serving in servings.items()}
        self.endpoints = pulumi.Output.all(**endpoints)
        self.serving_checks = pulumi.Output.all(**checks)
        self.report = pulumi.Output.from_input(report)
        exposed = {name: serving.served for name, serving in servings.items() if serving.served.url is not None}
        # What the stack exports (stack_outputs), in the order the program always exported it.
        self._stack_outputs: dict[str, Any] = {
            **target.exports,
            "nodePools": sorted(stack.config.node_pools),  # a cpu pool's name too
            # What is live after this `up`: the next one may move at most one Dynamo minor release from it.
            "dynamoRelease": stack.config.release.dynamo,
            "report": report,
            "endpoints": endpoints,
            "servingChecks": checks,
        }
        if exposed:  # how a client calls each internal or public endpoint
            self._stack_outputs["gateways"] = {
                name: {"url": served.url, "curl": served.curl} for name, served in exposed.items()
            }
        self.register_outputs(
            {"endpoints": self.endpoints, "servingChecks": self.serving_checks, "report": self.report}
        )

    def export_stack_outputs(self) -> None:
        """Export what a stack of this component shows after `up` (pulumi stack output): the
        cluster's outputs, nodePools, dynamoRelease, report, endpoints, servingChecks, gateways."""
        for name, value in self._stack_outputs.items():
            pulumi.export(name, value)
