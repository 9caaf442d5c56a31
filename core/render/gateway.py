"""The authenticating gateway in front of a deployment whose endpoint is `internal` or `public`.

Dynamo's frontend authenticates nobody: Dynamo's deployment guidance puts an authenticating
gateway in front of it as the security boundary [dynamo-sec]. We use Envoy Gateway (pinned in
configs/charts.yaml), the Gateway API implementation whose SecurityPolicy has API-key auth and whose
BackendTrafficPolicy has per-client local rate limits, with no external store [eg-apikey]
[eg-ratelimit]. Per deployment, in the workloads namespace (so no ReferenceGrant is needed):

  EnvoyProxy            its Envoy Service, named by us in Envoy Gateway's namespace: an NLB made by the
                        AWS Load Balancer Controller [lbc-nlb], internal, or internet-facing for
                        `public`, admitting allowedCidrs (else the VPC we create for internal); TLS
                        ends on the NLB with the ACM certificate (ACM certificates cannot be exported
                        to Envoy). On an existing cluster without the controller: a ClusterIP Service.
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
                 (Access control: without source ranges the NLB's security group admits 0.0.0.0/0, internal or not)
  [eg-pod-security] Envoy Gateway v1.9.0: charts/gateway-helm/values.tmpl.yaml (deployment.pod.securityContext,
                 deployment.envoyGateway.securityContext, certgen.job) and
                 internal/infrastructure/kubernetes/proxy/resource.go (expectedEnvoySecurityContext,
                 expectedShutdownManagerSecurityContext; volumes: secret and configMap only), at
                 https://github.com/envoyproxy/gateway/tree/v1.9.0
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.inputs.catalog import Chart
from gpt_oss_infra.core.inputs.config import EksClusterConfig, EndpointConfig, RateLimit, StackConfig
from gpt_oss_infra.core.inputs.rules import has_load_balancer_controller
from gpt_oss_infra.core.render.gpu_software import ChartRelease
from gpt_oss_infra.core.render.labels import SYSTEM_POOL_AFFINITY, common_labels
from gpt_oss_infra.core.render.manifests import FRONTEND_PORT, frontend_service_name
from gpt_oss_infra.core.render.pod_security import RESTRICTED, admission_labels

GATEWAY_CLASS = "gpt-oss-infra"
GATEWAY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
CLIENT_ID_HEADER = "x-client-id"
OWNING_GATEWAY_LABEL = "gateway.envoyproxy.io/owning-gateway-name"  # on the Envoy pods of a Gateway
API_KEY_HEADERS = ["authorization", "x-api-key"]
NLB_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-"
TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"  # TLS 1.3 and 1.2 only [lbc-nlb]
# Envoy replicas per gateway: local rate limits count per replica, so a client gets up to this many
# times its limit (docs/production.md says so).
ENVOY_REPLICAS = 2
# Envoy Gateway's own defaults for the proxy (envoyproxy/gateway api/v1alpha1/shared_types.go
# DefaultDeploymentCPUResourceRequests "100m", DefaultDeploymentMemoryResourceRequests "512Mi"), written
# out, and a memory limit of twice that: a proxy that leaks is stopped on the system node it shares.
ENVOY_RESOURCES = {"requests": {"cpu": "100m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}
PROGRAMMED = {"pulumi.com/waitFor": "condition=Programmed", "pulumi.com/timeoutSeconds": "900"}


MASKED = "[secret]"  # what the plan shows for each API key; the shell sets the key itself
# How an internal gateway is reached where the cluster makes no NLB (an existing cluster without the
# AWS Load Balancer Controller): the plan summary, the report and the smoke test's path say this,
# never "internal NLB".
IN_CLUSTER_SERVICE = "the gateway's in-cluster Service (ClusterIP, no NLB: cluster.loadBalancerController is off)"


@dataclass(frozen=True)
class FrontDoor:
    """How the smoke test calls a gateway as a client would, and what that proves."""

    service: str  # the Envoy Service of the gateway (we name it), in `namespace`
    namespace: str
    port: int
    via_nlb: bool  # to the NLB's DNS name, read from the Service's status; else the Service's cluster address
    tls: bool  # HTTPS to the NLB, which ends TLS
    host: str | None  # the hostname clients use: the Host header, and the name the certificate must cover
    client: str  # whose API key the smoke test sends
    path: str  # in words, for servingChecks


@dataclass(frozen=True)
class Gateway:
    """A deployment's gateway objects; the API-key Secret's values are the shell's (a Pulumi secret)."""

    objects: list[dict[str, Any]]
    api_key_secret: dict[str, Any]  # one masked value per client: a valid Secret in the plan
    url: str | None  # None: the NLB's DNS name, known once it exists
    curl: str  # how a client calls it, the key read from $GPT_OSS_API_KEY
    front_door: FrontDoor


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


def envoy_service_name(namespace: str, deployment: str) -> str:
    """The gateway's Envoy Service, in Envoy Gateway's namespace, which every stack on the cluster
    shares: named by the workloads namespace too, starting with a letter as a Service name must (a
    namespace may start with a digit), within Kubernetes' 63 characters."""
    name = f"envoy-{namespace}-{deployment}"
    return name if len(name) <= 63 else f"{name[:56]}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def gateway(
    deployment: str,
    namespace: str,
    endpoint: EndpointConfig,
    model: str,
    target: GatewayTarget,
    clients: list[str],
) -> Gateway:
    """The gateway objects of one deployment whose endpoint is internal or public. `clients`: the
    API keys' client names (not secret: they are the keys of apiKeys in the stack file)."""
    tls = endpoint.certificate_arn is not None
    proxy_name, gateway_name = f"{deployment}-proxy", f"{deployment}-gateway"

    def meta(name: str) -> dict[str, Any]:
        return {"name": name, "namespace": namespace, "labels": common_labels("gateway")}

    service_name = envoy_service_name(namespace, deployment)
    envoy_service: dict[str, Any] = {"name": service_name, "type": "ClusterIP"}
    if target.with_nlb:
        envoy_service = {
            "name": service_name,
            "type": "LoadBalancer",
            "loadBalancerClass": "service.k8s.aws/nlb",
            "annotations": _nlb_annotations(endpoint),
        } | ({"loadBalancerSourceRanges": ranges} if (ranges := source_ranges(endpoint, target)) else {})
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
                        "container": {"resources": ENVOY_RESOURCES},
                    },
                    "envoyService": envoy_service,
                },
            }
        },
    }
    port = 443 if tls else 80
    listener = {"name": "http", "protocol": "HTTP", "port": port}
    gateway_object = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        # `pulumi up` waits until Envoy Gateway has programmed it: its listener, its Envoy proxies
        # available and its Service's address assigned (the NLB's DNS name, once the NLB exists).
        "metadata": meta(gateway_name) | {"annotations": PROGRAMMED},
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
    route_ref = [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": deployment}]
    security = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "SecurityPolicy",
        "metadata": meta(f"{deployment}-api-keys"),
        "spec": {
            "targetRefs": route_ref,
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
        "spec": {"targetRefs": route_ref, "rateLimit": {"local": {"rules": rate_limit_rules(endpoint)}}},
    }
    host = endpoint.hostname
    if target.with_nlb:
        url = f"{'https' if tls else 'http'}://{host}" if host else None
    else:  # reached from inside the cluster, or through the user's own ingress to this Service
        url = f"http://{service_name}.{target.namespace}.svc.cluster.local:{port}"
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": meta(api_key_secret_name(deployment)),
        "stringData": dict.fromkeys(clients, MASKED),
    }
    return Gateway(
        objects=[proxy, gateway_object, route, security, limits],
        api_key_secret=secret,
        url=url,
        curl=curl_example(url or "$GPT_OSS_URL", model),
        front_door=front_door(endpoint, target, service_name, port, clients[0]),
    )


@dataclass(frozen=True)
class GatewayTarget:
    """What the cluster gives a gateway."""

    namespace: str  # Envoy Gateway's, where it runs each gateway's Envoy Deployment and Service
    with_nlb: bool  # the AWS Load Balancer Controller turns the Service into an NLB
    pod_cidr: str | None  # the VPC we create, where the pods take their addresses; None: not known


def source_ranges(endpoint: EndpointConfig, target: GatewayTarget) -> list[str] | None:
    """Who the NLB's security group admits: allowedCidrs; for an internal NLB without them, the VPC
    we create. The controller's own default is anywhere, internal or not [lbc-nlb], which would open
    an internal endpoint to every network routed to the VPC (peerings, Transit Gateway, VPN). None:
    the controller's default (a public endpoint; an internal one in a VPC we do not know)."""
    if endpoint.allowed_cidrs:
        return endpoint.allowed_cidrs
    return [target.pod_cidr] if endpoint.exposure == "internal" and target.pod_cidr else None


def _nlb_annotations(endpoint: EndpointConfig) -> dict[str, str]:
    annotations = {
        f"{NLB_ANNOTATION}type": "external",
        f"{NLB_ANNOTATION}nlb-target-type": "ip",
        f"{NLB_ANNOTATION}scheme": "internet-facing" if endpoint.exposure == "public" else "internal",
    }
    if endpoint.certificate_arn is not None:
        annotations |= {
            f"{NLB_ANNOTATION}ssl-cert": endpoint.certificate_arn,
            f"{NLB_ANNOTATION}ssl-ports": "443",
            f"{NLB_ANNOTATION}ssl-negotiation-policy": TLS_POLICY,
        }
    return annotations


def front_door(endpoint: EndpointConfig, target: GatewayTarget, service: str, port: int, client: str) -> FrontDoor:
    """The way the smoke test, a pod of the cluster, reaches the gateway: through the NLB where the
    NLB admits it, else through the Envoy Service's cluster address (the gateway's listener, route,
    API keys and rate limits, without the NLB), and the reason.

    A pod's requests reach an internal NLB from the pod's own address (in the VPC, which the NLB
    admits unless allowedCidrs leave it out), and an internet-facing one from the cluster's NAT
    address, which allowedCidrs may leave out."""
    tls = endpoint.certificate_arn is not None
    ranges = source_ranges(endpoint, target)
    admitted = ", ".join(ranges or [])
    path, reason = "", None
    if not target.with_nlb:
        path = IN_CLUSTER_SERVICE  # there is no NLB to go around
    elif endpoint.exposure == "internal":
        if _admits(ranges, target.pod_cidr):
            path = "its internal NLB, from inside the VPC"
        else:
            reason = f"the internal NLB admits only {admitted}, which need not hold the pods' addresses"
    elif _admits(ranges, None):
        path = "its internet-facing NLB, from the cluster through its NAT address"
    else:
        reason = f"the public NLB admits only {admitted}, which need not hold the cluster's NAT address"
    via_nlb = target.with_nlb and reason is None
    if reason is not None:
        path = f"its Envoy Service inside the cluster, not the NLB ({reason})"
    return FrontDoor(
        service=service,
        namespace=target.namespace,
        port=port,
        via_nlb=via_nlb,
        tls=tls and via_nlb,
        host=endpoint.hostname,
        client=client,
        path=path,
    )


def _admits(allowed: list[str] | None, source: str | None) -> bool:
    """An NLB with these source ranges (None: its default) admits every address of `source` (None:
    an address not known before `up`, which only 0.0.0.0/0 surely admits)."""
    if allowed is None:
        return True
    networks = [ipaddress.ip_network(cidr, strict=False) for cidr in allowed]
    if any(network.prefixlen == 0 for network in networks):
        return True
    return source is not None and any(_within(ipaddress.ip_network(source), network) for network in networks)


def _within(
    inner: ipaddress.IPv4Network | ipaddress.IPv6Network, outer: ipaddress.IPv4Network | ipaddress.IPv6Network
) -> bool:
    """Whether every address of `inner` is in `outer`: never across IP versions (an IPv6 range admits no
    IPv4 address; ipaddress's subnet_of raises TypeError there)."""
    if isinstance(inner, ipaddress.IPv4Network) and isinstance(outer, ipaddress.IPv4Network):
        return inner.subnet_of(outer)
    if isinstance(inner, ipaddress.IPv6Network) and isinstance(outer, ipaddress.IPv6Network):
        return inner.subnet_of(outer)
    return False


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
    target: GatewayTarget


def gateway_software(config: StackConfig, charts: dict[str, Chart]) -> GatewaySoftware | None:
    """What a stack with an internal or public endpoint installs once, on the system pool."""
    if not config.exposed:
        return None
    created = config.cluster if isinstance(config.cluster, EksClusterConfig) else None
    return cluster_gateway_software(
        charts, has_load_balancer_controller(config), created, config.cluster.kubernetes_version
    )


def cluster_gateway_software(
    charts: dict[str, Chart], with_nlb: bool, created: EksClusterConfig | None, kubernetes_version: str
) -> GatewaySoftware:
    """Envoy Gateway and its GatewayClass (and, on the cluster the program creates, `created`, the NLB
    controller) for a cluster, whether or not its deployments have an endpoint yet. `with_nlb`: the
    cluster's load balancer controller turns a gateway's LoadBalancer Service into an NLB."""
    on_system_pool = {"affinity": SYSTEM_POOL_AFFINITY}
    controller = ChartRelease(
        charts["gateway-helm"], {"deployment": {"pod": on_system_pool}, "certgen": {"job": on_system_pool}}
    )
    load_balancers = None
    if created is not None:
        values = {
            "clusterName": created.name,
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
    target = GatewayTarget(
        namespace=controller.chart.namespace,
        with_nlb=with_nlb,
        pod_cidr=created.network.vpc_cidr
        if created is not None and not created.network.existing_private_subnets
        else None,
    )
    if target.with_nlb:
        # The NLB sends to the Envoy pods' IPs: with the readiness gate the controller injects, a
        # rolling Envoy pod is Ready only once its target is healthy, so a rollout drops no
        # connection [lbc-readiness-gate].
        labels |= {READINESS_GATE_LABEL: "enabled"}
    # Every pod Envoy Gateway runs here meets `restricted` while we override none of its
    # securityContexts and add no volume or container: the controller's and its certgen Job's are the
    # chart's defaults, the proxies' the controller's own [eg-pod-security]
    # (tests/core/render/test_gateway.py keeps it so).
    labels |= admission_labels(RESTRICTED, kubernetes_version)
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": controller.chart.namespace, "labels": labels},
    }
    return GatewaySoftware(controller, namespace, gateway_class(), load_balancers, target)
