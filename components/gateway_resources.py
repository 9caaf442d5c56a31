"""The way in from outside the cluster: Envoy Gateway and, per deployment with an internal or public
endpoint, its gateway objects and API keys (core.render.gateway decides them all)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component, secret
from gpt_oss_infra.components.kubernetes import chart_release, custom_resource, namespace_resource, resource_args
from gpt_oss_infra.components.teardown_resources import add_guard
from gpt_oss_infra.core.render.gateway import Gateway, GatewaySoftware


@dataclass(frozen=True)
class GatewayControllerArgs:
    software: GatewaySoftware
    load_balancers_ready: list[pulumi.Resource]  # the NLB controller, where the target installs one
    # With NLBs: the guard `pulumi destroy` waits on before the controllers go (core/render/teardown.py),
    # and its namespace and access (components/teardown_resources.py).
    load_balancers_gone: dict[str, Any] | None = None
    guard_access: list[pulumi.Resource] = dataclasses.field(default_factory=list)


class GatewayController(Component):
    """Envoy Gateway (its chart installs the Gateway API and Envoy Gateway CRDs) and our GatewayClass.
    `ready`: what each deployment's gateway waits for."""

    def __init__(self, name: str, args: GatewayControllerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:gateway:GatewayController", name, None, opts)
        namespace = namespace_resource(f"{name}-namespace", args.software.namespace, self.child_opts())
        release = chart_release(
            self,
            f"{name}-release",
            args.software.controller,
            [namespace, *args.load_balancers_ready],
            release_name="envoy-gateway",
            create_namespace=False,
        )
        gateway_class = custom_resource(self, f"{name}-class", args.software.gateway_class, depends_on=[release])
        self.ready: list[pulumi.Resource] = [gateway_class, *args.load_balancers_ready]
        if args.load_balancers_gone is not None:  # deleted after every gateway, before both controllers
            self.ready.append(
                add_guard(
                    self, name, args.load_balancers_gone, args.guard_access, after=[release, *args.load_balancers_ready]
                )
            )
        self.register_outputs({})


@dataclass(frozen=True)
class DeploymentGatewayArgs:
    gateway: Gateway
    api_keys: pulumi.Output[dict[str, str]]  # client name -> key: a Pulumi secret throughout
    ready: list[pulumi.Resource]  # the controller and its GatewayClass


class DeploymentGateway(Component):
    """One deployment's gateway: its API keys (a Secret), proxy, Gateway, route and policies.
    `url` and `curl`: how a client calls it; `ready`: what its smoke test waits for."""

    def __init__(self, name: str, args: DeploymentGatewayArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:gateway:DeploymentGateway", name, None, opts)
        gateway = args.gateway
        # One entry per client the core named, each value a Pulumi secret: the plan shows a valid
        # Secret with every key masked, and the state and outputs never hold a key in plaintext.
        api_keys: pulumi.Output[dict[str, str]] = secret(args.api_keys)
        keys = k8s.core.v1.Secret(
            f"{name}-api-keys",
            **resource_args(gateway.api_key_secret)
            | {
                "string_data": {
                    client: api_keys.apply(itemgetter(client)) for client in gateway.api_key_secret["stringData"]
                }
            },
            opts=self.child_opts(),
        )
        self.ready: list[pulumi.Resource] = [
            custom_resource(self, f"{name}-{manifest['kind'].lower()}", manifest, depends_on=[keys, *args.ready])
            for manifest in gateway.objects
        ]
        gateway_name = next(m["metadata"] for m in gateway.objects if m["kind"] == "Gateway")
        where = (
            f"http(s)://<the NLB's DNS name: kubectl get gateway -n {gateway_name['namespace']} "
            f"{gateway_name['name']} -o jsonpath='{{.status.addresses[0].value}}'>"
        )
        self.url = pulumi.Output.from_input(gateway.url or where)
        self.curl = pulumi.Output.from_input(gateway.curl)
        self.register_outputs({"url": self.url, "curl": self.curl})
