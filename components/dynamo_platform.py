"""The public DynamoPlatform block: the Dynamo platform at a supported release (its CRDs where the
program applies them, its namespace, an optional NGC pull secret, the pinned Helm release), with
`gateway`, Envoy Gateway, and the teardown guards `pulumi destroy` waits on. GptOssStack makes its
platform, gateway and guards with this block too (`DynamoPlatform.of_stack`).
This module is analyzed for the component schema: no postponed annotations here."""

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.arguments import refuse_bad_arguments, refuse_plaintext
from gpt_oss_infra.components.block_decisions import (
    Block,
    PlatformFacts,
    cluster_of,
    platforms_of_this_program,
    refuse_made_twice,
    refused,
    this_program,
)
from gpt_oss_infra.components.gateway_resources import GatewayController, GatewayControllerArgs
from gpt_oss_infra.components.kubernetes import namespace_resource, ngc_pull_secret, resource_args
from gpt_oss_infra.components.teardown_resources import guards_of, volumes_gone
from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.dynamo import CHART
from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.core.render.gateway import GatewaySoftware
from gpt_oss_infra.core.render.platform import PlatformObjects
from gpt_oss_infra.core.render.teardown import Teardown


class DynamoPlatformArgs(TypedDict):
    dynamo_release: NotRequired[str | None]
    """A Dynamo release of configs/dynamo/versions.yaml (default: configs/components.yaml's, 1.6.1)."""
    namespace: NotRequired[str | None]
    """The platform's namespace, created here (default: dynamo-system)."""
    block_storage_class: NotRequired[str | None]
    """The ReadWriteOnce StorageClass of the bundled NATS' volume, where the release bundles NATS."""
    kubernetes_version: NotRequired[str | None]
    """The cluster's Kubernetes version the objects are checked against (default 1.36)."""
    ngc_api_key: NotRequired[pulumi.Input[str] | None]
    """An NGC API key (a secret): the pull secret for nvcr.io; none where images pull anonymously."""
    gateway: NotRequired[bool | None]
    """Also install Envoy Gateway and its GatewayClass, once per cluster, which a GptOssDeployment's
    `endpoint` needs (default: off)."""
    load_balancer_controller: NotRequired[bool | None]
    """The cluster runs the AWS Load Balancer Controller, so gateways get NLBs: Envoy Gateway's
    namespace is labelled for the controller's pod readiness gate, and `destroy` waits for the NLBs to
    be gone; make this component depend on the controller (default: off)."""


@dataclass(frozen=True)
class DecidedPlatform:
    """What a DynamoPlatform registers, decided from its arguments (or by GptOssStack from the stack config)."""

    objects: PlatformObjects
    ngc_api_key: pulumi.Output[str] | None  # a Pulumi secret, set when objects.pull_secret is
    # The teardown guards: its own volumes' and gateways' NLBs' (GptOssStack's: the whole stack's, monitoring's too).
    guards: Teardown | None
    gateway: GatewaySoftware | None  # Envoy Gateway
    crds_provider: k8s.Provider | None = None  # the CRDs' own, upserting provider (components/kubernetes.py)
    # What Envoy Gateway waits for: the cluster's load balancer controller, where GptOssStack makes one (a
    # block's caller makes the whole component depend on theirs).
    load_balancers_ready: list[pulumi.Resource] = field(default_factory=list)
    # GptOssStack's: the URNs its guards and gateway had as the stack's own children, up to 0.6.1 (aliases).
    guards_aliases: list[pulumi.Alias] = field(default_factory=list)
    gateway_aliases: list[pulumi.Alias] = field(default_factory=list)


class DynamoPlatform(Block[DecidedPlatform]):
    """The Dynamo platform at a supported release: its namespace and the pinned dynamo-platform Helm
    release, with the release's CRDs applied as that release requires (by this component up to 1.2.1,
    by the operator's own crd-apply init container from 1.3), and with `gateway`, Envoy Gateway for the
    deployments' endpoints. Ready once the operator (and the gateway controller) is: make each
    GptOssDeployment depend on it. Kubernetes resources go through the program's provider (pass it in
    `opts.providers`). On destroy it waits for its NLBs and volumes to be gone, which needs the cluster's
    nodes, CSI drivers and load balancer controller until then: make it depend on them (`depends_on`)."""

    namespace: pulumi.Output[str]
    """The platform's namespace."""
    version: pulumi.Output[str]
    """The Dynamo release installed."""

    def __init__(self, name: str, args: DynamoPlatformArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_bad_arguments("DynamoPlatform", name, args, DynamoPlatformArgs)
        refuse_plaintext("DynamoPlatform", name, args, ["ngc_api_key"])
        ngc_api_key = args.get("ngc_api_key")
        block = refused(
            "DynamoPlatform",
            name,
            lambda: blocks.dynamo_platform(
                blocks.whole(dict(args)), load_catalog(), with_ngc_key=ngc_api_key is not None, owner=this_program()
            ),
        )
        decided = DecidedPlatform(
            objects=block.objects,
            ngc_api_key=pulumi.Output.secret(ngc_api_key) if ngc_api_key else None,
            guards=block.guards,
            gateway=block.gateway,
        )
        objects, gateway = block.objects, block.gateway
        made = {
            "namespace": [
                objects.namespace,
                *filter(None, [objects.pull_secret]),
                *(block.guards.objects() if block.guards else []),
            ],
            "gateway": [gateway.namespace, gateway.gateway_class] if gateway else [],
        }
        refuse_made_twice("DynamoPlatform", name, opts, made)
        self._register(name, decided, opts)
        platforms_of_this_program()[name] = PlatformFacts(
            gateway=block.gateway is not None,
            load_balancer_controller=bool(args.get("load_balancer_controller")),
            release=blocks.shared_argument(args, "dynamo_release"),
            cluster=cluster_of(opts),
        )

    def _register(self, name: str, decided: DecidedPlatform, opts: pulumi.ResourceOptions | None) -> None:
        super().__init__("gpt-oss-infra:index:DynamoPlatform", name, None, opts)
        # What `pulumi destroy` waits on (core/render/teardown.py): the platform's volumes and, with the
        # cluster's load balancer controller, the gateways' NLBs, before the program's cluster goes.
        guards = guards_of(f"{name}-teardown", decided.guards, self.child_opts(aliases=decided.guards_aliases))
        # What the owners of other guarded claims (GptOssStack's monitoring) are made after and deleted before.
        self.volumes_gone = volumes_gone(guards)
        # The platform itself, Ready once its operator is: what a graph waits for (not the gateway or guards).
        release, self.operator_ready = self._platform(name, decided, after=self.volumes_gone)
        # What a deployment's gateway waits for: the controller and its GatewayClass, and the NLB guard.
        self.gateway_ready: list[pulumi.Resource] = []
        if decided.gateway is not None:
            gateway = GatewayController(
                f"{name}-gateway",
                GatewayControllerArgs(
                    decided.gateway,
                    decided.load_balancers_ready,
                    decided.guards.load_balancers_gone if decided.guards else None,
                    guards.access if guards else [],
                ),
                opts=self.child_opts(aliases=decided.gateway_aliases),
            )
            self.gateway_ready = gateway.ready
        # Read from the release: whatever uses them waits for the platform.
        self.namespace = release.namespace.apply(str)
        self.version = release.version.apply(str)
        self.register_outputs({"namespace": self.namespace, "version": self.version})

    def _platform(
        self, name: str, decided: DecidedPlatform, after: list[pulumi.Resource]
    ) -> tuple[k8s.helm.v3.Release, list[pulumi.Resource]]:
        """The platform's Helm release, which is Ready once the operator is, and all its resources. `after`:
        what they are made after and deleted before (its teardown guard)."""
        objects = decided.objects
        # One owner for the CRDs (configs/dynamo/versions.yaml `crds`). Up to 1.2.1 the program applies
        # the release's CRDs itself, so that a preview of an existing cluster knows them and an upgrade
        # updates them before the operator and the graphs; the operator patches spec.conversion (its
        # conversion webhook) at run time, which Pulumi leaves to it. From 1.3 the list is empty: the
        # operator's crd-apply init container applies its own. Deleting a CRD deletes every object of
        # its kind: removing one from the program (or handing it to the operator) leaves it in the cluster.
        crds = [
            k8s.apiextensions.v1.CustomResourceDefinition(
                f"{name}-crd-{crd['spec']['names']['plural']}",
                **resource_args(crd),
                opts=self.child_opts(
                    depends_on=after,
                    ignore_changes=["spec.conversion"],
                    retain_on_delete=True,
                    **({"provider": decided.crds_provider} if decided.crds_provider else {}),
                ),
            )
            for crd in objects.crds
        ]
        namespace = namespace_resource(f"{name}-namespace", objects.namespace, self.child_opts(depends_on=after))
        waits_for = [namespace]
        if objects.pull_secret is not None and decided.ngc_api_key is not None:
            waits_for.append(
                ngc_pull_secret(
                    f"{name}-ngc-pull",
                    objects.pull_secret,
                    decided.ngc_api_key,
                    self.child_opts(depends_on=[namespace]),
                )
            )
        # helm.v3.Release (not v4.Chart): a real Helm release with the chart's own hooks, whose readiness
        # wait covers the operator's init containers. The chart's crds/ folder is always skipped
        # (skipCrds); its crd-apply init container is on only where the operator owns the CRDs.
        release = k8s.helm.v3.Release(
            f"{name}-release",
            name=CHART,
            # The release's chart package by its HTTPS URL, as NVIDIA's install guide fetches it: NGC serves
            # no OCI chart, and its repository index is not what the guide relies on.
            chart=objects.dynamo.chart_url,
            version=objects.dynamo.version,
            namespace=objects.namespace["metadata"]["name"],
            values=objects.values,
            skip_crds=True,
            timeout=900,
            max_history=10,
            opts=self.child_opts(depends_on=[*crds, *waits_for]),
        )
        return release, [*crds, *waits_for, release]
