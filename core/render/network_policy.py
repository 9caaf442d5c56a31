"""NetworkPolicies of the workloads namespace: nothing reaches its pods unless a policy here says so,
and the model download Job reaches only DNS and HTTPS.

The VPC CNI enforces them once its network policy agent is on
(https://docs.aws.amazon.com/eks/latest/userguide/cni-network-policy.html). What that implementation
implies here (research: issue 12, network):
- ports are numeric: a named port next to an ipBlock is dropped by the policy controller;
- there are no FQDN rules, so HTTPS egress goes to 0.0.0.0/0, in one rule (aws-network-policy-agent#180:
  two rules with the same CIDR merge wrongly);
- an egress rule reaches a Service's ClusterIP only if the Service's selector satisfies the rule's
  podSelector: kube-dns is selected by exactly its Service's selector;
- kubelet probes come from the node, which is always allowed: no rule for them.
Graph pods are selected by our labels (core.render.labels.worker_labels), not the operator's, which have
changed between Dynamo releases. `tests/reachability.py` evaluates these policies in the tests.
"""

from __future__ import annotations

from typing import Any

from gpt_oss_infra.core.render.labels import DEPLOYMENT_LABEL, FRONTEND_ROLE, ROLE_LABEL, common_labels, worker_labels
from gpt_oss_infra.core.render.manifests import FRONTEND_PORT

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by Kubernetes on every namespace
COMPONENT_LABEL = "app.kubernetes.io/component"  # the key common_labels(component) sets
WORKER_ROLES = ("worker", "prefill", "decode")
SYSTEM_PORT = 9090  # Dynamo's system port on workers: /metrics, /live, /health
# The Jobs' components (core/render/smoke_test_job.py, benchmark.py, model_cache.py).
SERVING_CLIENTS = ("smoke-test", "benchmark")
MODEL_DOWNLOAD = "model-download"
ALL_TCP = {"protocol": "TCP"}  # no port: every TCP port
# The Prometheus pods of the monitoring namespace, by the label prometheus-operator gives every pod of a
# Prometheus it runs (its statefulset's pod selector labels): the frontend's metrics port is its API port
# too, so the rest of that namespace (Grafana, Alertmanager) must not reach it.
PROMETHEUS_PODS = {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}


def namespace_policies(
    namespace: str, kube_dns: tuple[str, dict[str, str]] = ("kube-system", {"k8s-app": "kube-dns"})
) -> list[dict[str, Any]]:
    """The namespace's own: every pod closed to ingress, and the model download's egress (a stack's
    Workloads; a block's caller makes their own)."""
    return [_default_deny(namespace), _model_download(namespace, kube_dns)]


def deployment_policies(
    namespace: str, deployment: str, gateway_namespace: str | None, monitoring_namespace: str | None
) -> list[dict[str, Any]]:
    """One deployment's graph pods' (its GptOssDeployment's): its frontend's and its workers'. Alone, without
    the namespace's default deny, they still close those pods to everything they do not name."""
    return [
        _frontend(namespace, deployment, gateway_namespace, monitoring_namespace),
        _workers(namespace, deployment, monitoring_namespace),
    ]


def _default_deny(namespace: str) -> dict[str, Any]:
    """Every pod of the namespace is isolated for ingress: a pod nobody must reach (the Jobs) gets no
    rule, and a new workload is closed until a policy opens it."""
    return _policy("default-deny-ingress", namespace, {}, policyTypes=["Ingress"], ingress=[])


def _frontend(
    namespace: str, deployment: str, gateway_namespace: str | None, monitoring_namespace: str | None
) -> dict[str, Any]:
    """The frontend serves the OpenAI API and /metrics on FRONTEND_PORT, without a key: to the gateway's Envoy
    proxies (Envoy Gateway runs them in its own namespace: any pod there), to the smoke test and benchmark
    Jobs, and to the monitoring namespace's Prometheus only. Its own workers reach it on any TCP port:
    Dynamo's request plane listens on a port the OS picks."""
    clients = [{"podSelector": _in(COMPONENT_LABEL, SERVING_CLIENTS)}]
    clients += [_namespace(gateway_namespace)] if gateway_namespace else []
    clients += [_prometheus(monitoring_namespace)] if monitoring_namespace else []
    ingress = [
        {"from": clients, "ports": [_tcp(FRONTEND_PORT)]},
        {"from": [{"podSelector": _graph_pods(deployment, WORKER_ROLES)}], "ports": [ALL_TCP]},
    ]
    selector = {"matchLabels": worker_labels(deployment, FRONTEND_ROLE)}
    return _policy(f"{deployment}-frontend-ingress", namespace, selector, policyTypes=["Ingress"], ingress=ingress)


def _workers(namespace: str, deployment: str, monitoring_namespace: str | None) -> dict[str, Any]:
    """A graph's workers take requests from its frontend and KV cache from each other (NIXL over UCX)
    on ports picked at run time: any TCP port, but only within the graph, so one deployment's
    workers never reach another's. The scraper reads their system port."""
    graph = {"podSelector": _graph_pods(deployment, (FRONTEND_ROLE, *WORKER_ROLES))}
    ingress = [{"from": [graph], "ports": [ALL_TCP]}]
    if monitoring_namespace:
        ingress.append({"from": [_prometheus(monitoring_namespace)], "ports": [_tcp(SYSTEM_PORT)]})
    selector = _graph_pods(deployment, WORKER_ROLES)
    return _policy(f"{deployment}-workers-ingress", namespace, selector, policyTypes=["Ingress"], ingress=ingress)


def _model_download(namespace: str, kube_dns: tuple[str, dict[str, str]]) -> dict[str, Any]:
    """The download Job runs pip and fetches the weights from Hugging Face: it needs DNS and HTTPS, and
    nothing in the cluster. HTTPS goes to any address (the VPC CNI has no FQDN rules)."""
    dns_namespace, dns_labels = kube_dns
    egress = [
        {
            "to": [_namespace(dns_namespace) | {"podSelector": {"matchLabels": dns_labels}}],
            "ports": [{"protocol": protocol, "port": 53} for protocol in ("UDP", "TCP")],
        },
        {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [_tcp(443)]},
    ]
    selector = {"matchLabels": {COMPONENT_LABEL: MODEL_DOWNLOAD}}
    return _policy("model-download-egress", namespace, selector, policyTypes=["Egress"], egress=egress)


def _policy(name: str, namespace: str, pod_selector: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": common_labels("network-policy")},
        "spec": {"podSelector": pod_selector, **spec},
    }


def _graph_pods(deployment: str, roles: tuple[str, ...]) -> dict[str, Any]:
    """A deployment's graph pods of these roles (the Jobs carry the deployment label too, not a role)."""
    return {"matchLabels": {DEPLOYMENT_LABEL: deployment}} | _in(ROLE_LABEL, roles)


def _in(key: str, values: tuple[str, ...]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}


def _namespace(name: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: name}}}


def _prometheus(monitoring_namespace: str) -> dict[str, Any]:
    return _namespace(monitoring_namespace) | {"podSelector": PROMETHEUS_PODS}


def _tcp(port: int) -> dict[str, Any]:
    return {"protocol": "TCP", "port": port}
