"""The authenticating gateway in front of a deployment whose endpoint is `internal` or `public`.

Dynamo's frontend authenticates nobody: Dynamo's deployment guidance puts an authenticating
gateway in front of it as the security boundary [dynamo-sec]. We use Envoy Gateway (pinned in
configs/charts.yaml), the Gateway API implementation whose SecurityPolicy has API-key auth and whose
BackendTrafficPolicy has per-client local rate limits, with no external store [eg-apikey]
[eg-ratelimit]. Per deployment, in the workloads namespace (so no ReferenceGrant is needed):

  EnvoyProxy            its Envoy Service: an NLB made by the AWS Load Balancer Controller [lbc-nlb],
                        internal, or internet-facing for `public`; TLS ends on the NLB with the ACM
                        certificate (ACM certificates cannot be exported to Envoy)
  Gateway               one HTTP listener: 443 behind the NLB's TLS, else 80
  HTTPRoute             everything to the frontend's ClusterIP Service, with no request timeout
                        (Envoy's default of 15 s would cut long generations)
  SecurityPolicy        API keys from the Secret `<name>-api-keys` (client name -> key), read from
                        `Authorization: Bearer <key>` (what OpenAI clients send) or `x-api-key`;
                        401 without a valid one; the client's name goes on as x-client-id
  BackendTrafficPolicy  per-client request limits on x-client-id (429 beyond them)

  [dynamo-sec]   https://docs.nvidia.com/dynamo/latest/security/secure-deployment-guidelines
  [eg-apikey]    https://gateway.envoyproxy.io/docs/tasks/security/apikey-auth/
  [eg-ratelimit] https://gateway.envoyproxy.io/docs/tasks/traffic/local-rate-limit/
  [lbc-nlb]      https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations/
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.inputs.catalog import Chart
from core.inputs.config import EksClusterConfig, EndpointConfig, RateLimit, StackConfig
from core.render.gpu_software import ChartRelease
from core.render.labels import SYSTEM_POOL_AFFINITY, common_labels
from core.render.manifests import FRONTEND_PORT, frontend_service_name

GATEWAY_CLASS = "gpt-oss-infra"
GATEWAY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
CLIENT_ID_HEADER = "x-client-id"
OWNING_GATEWAY_LABEL = "gateway.envoyproxy.io/owning-gateway-name"  # on the Envoy pods of a Gateway
API_KEY_HEADERS = ["authorization", "x-api-key"]
NLB_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-"
TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"  # TLS 1.3 and 1.2 only [lbc-nlb]
# Envoy replicas per gateway: local rate limits count per replica, so a client gets up to this many
# times its limit (README says so).
ENVOY_REPLICAS = 2


@dataclass(frozen=True)
class Gateway:
    """A deployment's gateway objects; the API-key Secret's data is the shell's (a Pulumi secret)."""

    objects: list[dict[str, Any]]
    api_key_secret: dict[str, Any]  # metadata only
    url: str | None  # None: the NLB's DNS name, known once it exists
    curl: str  # how a client calls it, the key read from $GPT_OSS_API_KEY


def gateway_class() -> dict[str, Any]:
    """The one GatewayClass of the Envoy Gateway controller the program installs."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": GATEWAY_CLASS, "labels": common_labels("gateway")},
        "spec": {"controllerName": GATEWAY_CONTROLLER},
    }


def api_key_secret_name(deployment: str) -> str:
    return f"{deployment}-api-keys"


def gateway(deployment: str, namespace: str, endpoint: EndpointConfig, model: str) -> Gateway:
    """The gateway objects of one deployment whose endpoint is internal or public."""
    tls = endpoint.certificate_arn is not None
    proxy_name, gateway_name = f"{deployment}-proxy", f"{deployment}-gateway"

    def meta(name: str) -> dict[str, Any]:
        return {"name": name, "namespace": namespace, "labels": common_labels("gateway")}

    annotations = {
        f"{NLB_ANNOTATION}type": "external",
        f"{NLB_ANNOTATION}nlb-target-type": "ip",
        f"{NLB_ANNOTATION}scheme": "internet-facing" if endpoint.exposure == "public" else "internal",
    }
    if tls:
        annotations |= {
            f"{NLB_ANNOTATION}ssl-cert": endpoint.certificate_arn,
            f"{NLB_ANNOTATION}ssl-ports": "443",
            f"{NLB_ANNOTATION}ssl-negotiation-policy": TLS_POLICY,
        }
    proxy = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": meta(proxy_name),
        "spec": {
            "provider": {
                "type": "Kubernetes",
                "kubernetes": {
                    "envoyDeployment": {
                        "replicas": ENVOY_REPLICAS,
                        "pod": {"affinity": SYSTEM_POOL_AFFINITY | _spread({OWNING_GATEWAY_LABEL: gateway_name})},
                    },
                    "envoyService": {
                        "type": "LoadBalancer",
                        "loadBalancerClass": "service.k8s.aws/nlb",
                        "annotations": annotations,
                    },
                },
            }
        },
    }
    listener = {"name": "http", "protocol": "HTTP", "port": 443 if tls else 80}
    gateway_object = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": meta(gateway_name),
        "spec": {
            "gatewayClassName": GATEWAY_CLASS,
            "infrastructure": {
                "parametersRef": {"group": "gateway.envoyproxy.io", "kind": "EnvoyProxy", "name": proxy_name}
            },
            "listeners": [listener | {"allowedRoutes": {"namespaces": {"from": "Same"}}}],
        },
    }
    rule: dict[str, Any] = {
        "backendRefs": [{"name": frontend_service_name(deployment), "port": FRONTEND_PORT}],
        "timeouts": {"request": "0s"},
    }
    route_spec: dict[str, Any] = {"parentRefs": [{"name": gateway_name, "sectionName": "http"}], "rules": [rule]}
    if endpoint.hostname:
        route_spec["hostnames"] = [endpoint.hostname]
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": meta(deployment),
        "spec": route_spec,
    }
    target = [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": deployment}]
    security = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "SecurityPolicy",
        "metadata": meta(f"{deployment}-api-keys"),
        "spec": {
            "targetRefs": target,
            "apiKeyAuth": {
                "credentialRefs": [{"group": "", "kind": "Secret", "name": api_key_secret_name(deployment)}],
                "extractFrom": [{"headers": API_KEY_HEADERS}],
                "forwardClientIDHeader": CLIENT_ID_HEADER,
                "sanitize": True,  # the key never reaches the frontend or its logs
            },
        },
    }
    limits = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "BackendTrafficPolicy",
        "metadata": meta(f"{deployment}-rate-limits"),
        "spec": {"targetRefs": target, "rateLimit": {"local": {"rules": rate_limit_rules(endpoint)}}},
    }
    host = endpoint.hostname
    url = f"{'https' if tls else 'http'}://{host}" if host else None
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": meta(api_key_secret_name(deployment))}
    return Gateway(
        objects=[proxy, gateway_object, route, security, limits],
        api_key_secret=secret,
        url=url,
        curl=curl_example(url or "$GPT_OSS_URL", model),
    )


def _spread(labels: dict[str, str]) -> dict[str, Any]:
    """Replicas on different nodes where they can be: one node's loss leaves one running."""
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]
        }
    }


def rate_limit_rules(endpoint: EndpointConfig) -> list[dict[str, Any]]:
    """One rule per client with its own limit, then one bucket per other client (Distinct). Envoy
    applies every rule that matches, so the shared rule leaves the named clients out."""

    def rule(headers: list[dict[str, Any]], limit: RateLimit) -> dict[str, Any]:
        return {"clientSelectors": [{"headers": headers}], "limit": {"requests": limit.requests, "unit": limit.unit}}

    named = sorted(endpoint.client_rate_limits.items())
    rules = [rule([{"name": CLIENT_ID_HEADER, "type": "Exact", "value": name}], limit) for name, limit in named]
    others = [{"name": CLIENT_ID_HEADER, "type": "Exact", "value": name, "invert": True} for name, _ in named]
    rules.append(rule([{"name": CLIENT_ID_HEADER, "type": "Distinct"}, *others], endpoint.rate_limit))
    return rules


def curl_example(url: str, model: str) -> str:
    """How a client calls the endpoint: the key from an environment variable, never inline."""
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Hello"}]})
    return (
        f"curl {url}/v1/chat/completions \\\n"
        '  -H "Authorization: Bearer $GPT_OSS_API_KEY" \\\n'
        "  -H 'Content-Type: application/json' \\\n"
        f"  -d '{body}'"
    )


# --- the software behind every gateway: Envoy Gateway, and on a created cluster the AWS Load Balancer
# Controller that turns each gateway's Service into an NLB.

LOAD_BALANCER_CONTROLLER = "aws-load-balancer-controller"
# [lbc-readiness-gate] https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/pod_readiness_gate/
READINESS_GATE_LABEL = "elbv2.k8s.aws/pod-readiness-gate-inject"
LOAD_BALANCER_SERVICE_ACCOUNT = "aws-load-balancer-controller"  # its Pod Identity association names it
# Values only the shell knows (pulumi config aws:region, the VPC the network creates): set there.
SHELL_VALUES = ("region", "vpcId")


@dataclass(frozen=True)
class GatewaySoftware:
    controller: ChartRelease  # Envoy Gateway: the controller and its CRDs
    namespace: dict[str, Any]  # the controller's, where it runs the Envoy proxies too
    gateway_class: dict[str, Any]
    load_balancers: ChartRelease | None  # created clusters: the AWS Load Balancer Controller


def gateway_software(config: StackConfig, charts: dict[str, Chart]) -> GatewaySoftware | None:
    """What a stack with an internal or public endpoint installs once, on the system pool."""
    if not any(deployment.endpoint.exposure != "cluster" for deployment in config.deployments.values()):
        return None
    on_system_pool = {"affinity": SYSTEM_POOL_AFFINITY}
    controller = ChartRelease(
        charts["gateway-helm"], {"deployment": {"pod": on_system_pool}, "certgen": {"job": on_system_pool}}
    )
    load_balancers = None
    if isinstance(config.cluster, EksClusterConfig):
        values = {
            "clusterName": config.cluster.name,
            "serviceAccount": {"create": True, "name": LOAD_BALANCER_SERVICE_ACCOUNT},
            # Its Service webhook (failurePolicy Fail) would be called for every Service of the
            # cluster, and refuse them all while the controller is not Ready (at install: the other
            # charts' Services; aws-load-balancer-controller#4140). It only sets loadBalancerClass,
            # which our EnvoyProxy sets itself.
            "enableServiceMutatorWebhook": False,
            # Ours replaces the chart's default affinity: keep its spread of the two replicas.
            "affinity": SYSTEM_POOL_AFFINITY | _spread({"app.kubernetes.io/name": LOAD_BALANCER_CONTROLLER}),
        }
        load_balancers = ChartRelease(charts[LOAD_BALANCER_CONTROLLER], values)
    labels = common_labels("gateway")
    if load_balancers is not None:
        # The NLB sends to the Envoy pods' IPs: with the readiness gate the controller injects, a
        # rolling Envoy pod is Ready only once its target is healthy, so a rollout drops no
        # connection [lbc-readiness-gate].
        labels |= {READINESS_GATE_LABEL: "enabled"}
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": controller.chart.namespace, "labels": labels},
    }
    return GatewaySoftware(controller, namespace, gateway_class(), load_balancers)
