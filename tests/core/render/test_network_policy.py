"""core/render/network_policy.py: the rendered policies, and the isolation they give as
tests/reachability.py evaluates it (on hand-made pods, then on the labels the stack renders)."""

from __future__ import annotations

import copy
import re
from itertools import permutations, product

import pytest

from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.aws import specs
from gpt_oss_infra.core.render.labels import DEPLOYMENT_LABEL, FRONTEND_ROLE, common_labels, worker_labels
from gpt_oss_infra.core.render.network_policy import (
    COMPONENT_LABEL,
    WORKER_ROLES,
    deployment_policies,
    namespace_policies,
)
from gpt_oss_infra.core.stack import build_stack
from tests.reachability import External, Pod, allowed
from tests.support import example_entries

NAMESPACE, GATEWAY, MONITORING = "gpt-oss", "envoy-gateway-system", "monitoring"
DEPLOYMENTS = ["gpt-oss", "other"]
PORTS = (53, 80, 443, 4222, 8000, 9090, 19090, 40000)  # 40000: a port the request plane or UCX may pick

GRAPHS = {
    deployment: [
        Pod(NAMESPACE, f"{deployment}-{role}", worker_labels(deployment, role))
        for role in (FRONTEND_ROLE, *WORKER_ROLES)
    ]
    for deployment in DEPLOYMENTS
}
SMOKE_TEST = Pod(NAMESPACE, "smoke-test", common_labels("smoke-test") | {DEPLOYMENT_LABEL: "gpt-oss"})
BENCHMARK = Pod(NAMESPACE, "benchmark", common_labels("benchmark"))
DOWNLOAD = Pod(NAMESPACE, "model-download", common_labels("model-download"))
ENVOY = Pod(GATEWAY, "envoy", {"app.kubernetes.io/name": "envoy"})
SCRAPER = Pod(MONITORING, "prometheus", {"app.kubernetes.io/name": "prometheus"})
# Another pod of the monitoring namespace (kube-prometheus-stack's Grafana): the frontend's port is its API too.
GRAFANA = Pod(MONITORING, "grafana", {"app.kubernetes.io/name": "grafana"})
NATS = Pod("dynamo-system", "nats", {"app.kubernetes.io/name": "nats"})
KUBE_DNS = Pod("kube-system", "coredns", {"k8s-app": "kube-dns"})
STRANGER = Pod("default", "stranger", {"app": "anything"})
INTERNET = External("internet", "93.184.216.34")
OUTSIDE = [ENVOY, SCRAPER, GRAFANA, NATS, KUBE_DNS, STRANGER, INTERNET]
JOBS = [SMOKE_TEST, BENCHMARK, DOWNLOAD]
EVERYONE = [*GRAPHS["gpt-oss"], *GRAPHS["other"], *JOBS, *OUTSIDE]


def network_policies(namespace, deployments, gateway, monitoring, kube_dns=("kube-system", {"k8s-app": "kube-dns"})):
    """The workloads namespace's policies as a stack makes them: its own (Workloads) and each deployment's."""
    graphs = [policy for name in deployments for policy in deployment_policies(namespace, name, gateway, monitoring)]
    return namespace_policies(namespace, kube_dns) + graphs


def named(policies, name):
    (policy,) = [policy for policy in policies if policy["metadata"]["name"] == name]
    return policy


def rendered():
    return network_policies(NAMESPACE, DEPLOYMENTS, GATEWAY, MONITORING)


def assert_serving_isolation(policies):
    """The properties the workloads namespace's policies must have, on every port of PORTS."""

    def reach(src, dst, port, protocol="TCP"):
        return allowed(policies, src, dst, port, protocol)

    for deployment, (frontend, *workers) in GRAPHS.items():
        for src, port in product(OUTSIDE, PORTS):
            # from other namespaces: the gateway and the scraper reach the frontend's HTTP port,
            # the scraper the workers' system port, nothing else
            assert reach(src, frontend, port) == (src in (ENVOY, SCRAPER) and port == 8000), (src, frontend, port)
            for worker in workers:
                assert reach(src, worker, port) == (src == SCRAPER and port == 9090), (src, worker, port)
        for src, dst in permutations([frontend, *workers], 2):  # within a graph, any TCP port
            assert reach(src, dst, 40000), (src, dst)
        for other in set(GRAPHS) - {deployment}:
            for src, dst, port in product(GRAPHS[other], [frontend, *workers], PORTS):
                assert not reach(src, dst, port), (src, dst, port)
        assert reach(SMOKE_TEST, frontend, 8000) and reach(BENCHMARK, frontend, 8000)
        for job, dst, port in product(JOBS, workers, PORTS):
            assert not reach(job, dst, port), (job, dst, port)
    assert reach(DOWNLOAD, KUBE_DNS, 53, "UDP") and reach(DOWNLOAD, KUBE_DNS, 53, "TCP")
    assert reach(DOWNLOAD, INTERNET, 443)
    assert not reach(DOWNLOAD, INTERNET, 80)
    assert not any(reach(DOWNLOAD, pod, port) for graph in GRAPHS.values() for pod in graph for port in PORTS)
    for job, src, port in product(JOBS, EVERYONE, PORTS):  # nobody connects to a Job
        assert src == job or not reach(src, job, port), (src, job, port)
    assert all(reach(pod, NATS, 4222) for graph in GRAPHS.values() for pod in graph)  # egress stays open


def test_the_manifests():
    policies = rendered()
    assert [policy["metadata"]["name"] for policy in policies] == [
        "default-deny-ingress",
        "model-download-egress",
        "gpt-oss-frontend-ingress",
        "gpt-oss-workers-ingress",
        "other-frontend-ingress",
        "other-workers-ingress",
    ]
    for policy in policies:
        assert (policy["apiVersion"], policy["kind"]) == ("networking.k8s.io/v1", "NetworkPolicy")
        assert policy["metadata"]["namespace"] == NAMESPACE
        assert policy["metadata"]["labels"] == common_labels("network-policy")
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", policy["metadata"]["name"])
        rules = policy["spec"].get("ingress", []) + policy["spec"].get("egress", [])
        assert all(isinstance(entry.get("port", 0), int) for rule in rules for entry in rule["ports"])  # numeric only
    assert common_labels("x")[COMPONENT_LABEL] == "x"


def test_the_rendered_policies_isolate_the_serving_workloads():
    assert_serving_isolation(rendered())


def widen_gateway_selector(policies):
    for peer in named(policies, "gpt-oss-frontend-ingress")["spec"]["ingress"][0]["from"]:
        if peer.get("namespaceSelector", {}).get("matchLabels") == {"kubernetes.io/metadata.name": GATEWAY}:
            peer["namespaceSelector"] = {}


def workers_admit_the_namespace(policies):
    named(policies, "gpt-oss-workers-ingress")["spec"]["ingress"][0]["from"] = [{"podSelector": {}}]


def https_on_every_port(policies):
    del named(policies, "model-download-egress")["spec"]["egress"][1]["ports"]


@pytest.mark.parametrize(
    "breakage",
    [
        lambda policies: policies.pop(0),  # no default deny: anyone reaches the Jobs
        widen_gateway_selector,  # every namespace reaches the frontend
        workers_admit_the_namespace,  # the other deployment reaches gpt-oss's workers
        https_on_every_port,  # the download Job reaches the frontend and port 80
        lambda policies: policies.pop(),  # the download Job's egress is open
    ],
)
def test_the_property_check_catches_a_broken_policy(breakage):
    policies = copy.deepcopy(rendered())
    breakage(policies)
    with pytest.raises(AssertionError):
        assert_serving_isolation(policies)


def test_without_a_gateway_or_monitoring_no_other_namespace_reaches_the_graph():
    policies = network_policies(NAMESPACE, DEPLOYMENTS, None, None, ("dns", {"app": "dns"}))
    assert not any(allowed(policies, src, pod, port) for src in OUTSIDE for pod in GRAPHS["gpt-oss"] for port in PORTS)
    assert allowed(policies, DOWNLOAD, Pod("dns", "resolver", {"app": "dns"}), 53, "UDP")
    assert not allowed(policies, DOWNLOAD, KUBE_DNS, 53, "UDP")


def test_the_policies_select_the_pods_the_stack_renders(dev_raw, catalog):
    """The selectors match the labels on the real pod templates: the graph's, the Jobs'."""
    dev_raw["deployments"]["gpt-oss"]["benchmark"] = {"enabled": True}
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    (serving,) = stack.serving
    graph = [Pod(NAMESPACE, component.name, component.labels) for component in graph_components(serving.graph)]
    frontend, worker = sorted(graph, key=lambda pod: pod.labels["gpt-oss-infra/role"] != FRONTEND_ROLE)

    def job_pod(job):
        return Pod(NAMESPACE, job["metadata"]["name"], job["spec"]["template"]["metadata"]["labels"])

    smoke_test, benchmark, download = map(
        job_pod, [serving.smoke_test.job, serving.benchmark.job, stack.model_cache.download.job]
    )
    policies = network_policies(NAMESPACE, [serving.deployment.name], GATEWAY, MONITORING)
    assert allowed(policies, smoke_test, frontend, 8000) and allowed(policies, benchmark, frontend, 8000)
    assert allowed(policies, frontend, worker, 40000) and allowed(policies, worker, frontend, 40000)
    assert allowed(policies, SCRAPER, worker, 9090) and allowed(policies, ENVOY, frontend, 8000)
    assert allowed(policies, download, INTERNET, 443) and not allowed(policies, download, frontend, 8000)
    assert allowed(policies, benchmark, INTERNET, 443)  # pip install aiperf: its egress is not limited
    assert not any(allowed(policies, frontend, job, 8000) for job in (smoke_test, benchmark, download))


def test_on_an_existing_cluster_the_policies_come_with_a_warning_about_enforcement(catalog):
    raw = copy.deepcopy(namespace_config(example_entries("existing-cluster")))
    raw["networkPolicies"] = {"enabled": True}
    stack = build_stack(raw, catalog, with_hf_token=False)
    assert stack.network_policies[0]["metadata"]["name"] == "default-deny-ingress"
    warning = "gpt-oss-infra:networkPolicies.enabled: the NetworkPolicies are created"
    assert any(w.startswith(warning) for w in stack.warnings)


# --- secure by default: an endpoint reached from outside the cluster gets the policies unless opted out


def exposed_without_policy_setting(catalog, enabled=None):
    raw = copy.deepcopy(namespace_config(example_entries("staging")))
    del raw["networkPolicies"]
    if enabled is not None:
        raw["networkPolicies"] = {"enabled": enabled}
    return build_stack(raw, catalog, with_hf_token=False, api_key_clients=["ci"])


def test_an_exposed_endpoint_gets_default_deny_policies_without_asking(catalog):
    stack = exposed_without_policy_setting(catalog)
    assert "default-deny-ingress" in [policy["metadata"]["name"] for policy in stack.network_policies]
    vpc_cni = next(addon for addon in specs._addons(stack.config) if addon.name == "vpc-cni")
    assert vpc_cni.configuration == {"enableNetworkPolicy": "true"}  # and the VPC CNI enforces them
    assert not any("networkPolicies" in warning for warning in stack.warnings)


def test_opting_out_of_policies_with_an_exposed_endpoint_is_warned_about(catalog):
    stack = exposed_without_policy_setting(catalog, enabled=False)
    assert stack.network_policies == []
    (warning,) = [w for w in stack.warnings if w.startswith("gpt-oss-infra:networkPolicies.enabled")]
    assert warning.startswith(
        "gpt-oss-infra:networkPolicies.enabled: false, while deployments gpt-oss are reached from outside the cluster"
    )


def test_a_stack_with_cluster_endpoints_only_gets_no_policies_unless_asked(catalog):
    dev = build_stack(namespace_config(example_entries("dev")), catalog, with_hf_token=False)
    assert dev.config.network_policies.enabled is None and dev.network_policies == []
