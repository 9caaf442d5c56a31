"""tests/reachability.py: the upstream NetworkPolicy semantics, on hand-written policies."""

from __future__ import annotations

import pytest

from tests.reachability import External, Pod, allowed, matrix

APP = Pod("shop", "app", {"app": "web", "tier": "front"})
DB = Pod("shop", "db", {"app": "db"})
PROM = Pod("monitoring", "prometheus", {"app": "prometheus"})
GRAFANA = Pod("monitoring", "grafana", {"app": "grafana"})
STRANGER = Pod("default", "stranger", {"app": "prometheus"})
INTERNET = External("internet", "93.184.216.34")
VPC_HOST = External("vpc-host", "10.0.3.7")


def policy(namespace, pod_selector, **spec):
    return {"metadata": {"name": "p", "namespace": namespace}, "spec": {"podSelector": pod_selector, **spec}}


def ingress_to_db(*peers, ports=None):
    """The db admits `peers` (one rule) on `ports`."""
    rule = {"from": list(peers)} | ({"ports": ports} if ports else {})
    return [policy("shop", {"matchLabels": {"app": "db"}}, policyTypes=["Ingress"], ingress=[rule])]


def test_without_policies_everything_is_allowed():
    peers = [APP, DB, PROM, INTERNET]
    assert all(matrix([], peers, 5432).values())
    assert len(matrix([], peers, 5432)) == 4 * 3  # every ordered pair of distinct peers


def test_a_default_deny_isolates_its_namespace_only_and_only_for_ingress():
    deny = [policy("shop", {}, policyTypes=["Ingress"])]
    assert not allowed(deny, PROM, APP, 80)
    assert not allowed(deny, APP, DB, 5432)
    assert allowed(deny, APP, PROM, 9090)  # egress is not isolated
    assert allowed(deny, APP, INTERNET, 443)
    assert allowed(deny, DB, GRAFANA, 3000)  # other namespaces are untouched


@pytest.mark.parametrize(
    ("expression", "admitted"),
    [
        ({"key": "app", "operator": "In", "values": ["web", "x"]}, {"app"}),
        ({"key": "tier", "operator": "NotIn", "values": ["front"]}, {"db", "worker"}),  # absent key: not in
        ({"key": "tier", "operator": "Exists"}, {"app", "worker"}),
        ({"key": "tier", "operator": "DoesNotExist"}, {"db"}),
    ],
)
def test_pod_selector_expressions(expression, admitted):
    worker = Pod("shop", "worker", {"app": "worker", "tier": "back"})
    target = Pod("shop", "target", {"role": "target"})
    policies = [
        policy(
            "shop",
            {"matchLabels": {"role": "target"}},
            ingress=[{"from": [{"podSelector": {"matchLabels": {}, "matchExpressions": [expression]}}]}],
        )
    ]
    reached = {pod.name for pod in (APP, DB, worker) if allowed(policies, pod, target, 80)}
    assert reached == admitted


def test_a_pod_selector_alone_means_the_policys_namespace():
    policies = ingress_to_db({"podSelector": {"matchLabels": {"app": "prometheus"}}})
    assert not allowed(policies, PROM, DB, 5432)
    assert not allowed(policies, STRANGER, DB, 5432)
    assert allowed(policies, Pod("shop", "local-prom", {"app": "prometheus"}), DB, 5432)


def test_namespace_selector_alone_admits_every_pod_of_the_namespaces():
    monitoring = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    policies = ingress_to_db(monitoring)
    assert allowed(policies, PROM, DB, 5432) and allowed(policies, GRAFANA, DB, 5432)
    assert not allowed(policies, STRANGER, DB, 5432) and not allowed(policies, APP, DB, 5432)
    everywhere = ingress_to_db({"namespaceSelector": {}})
    assert all(allowed(everywhere, pod, DB, 5432) for pod in (APP, PROM, STRANGER))
    assert not allowed(everywhere, INTERNET, DB, 5432)


def test_namespace_and_pod_selector_in_one_peer_are_anded_in_two_peers_ored():
    """The classic slip: a stray `-` makes the pod selector a second peer. Meant: Prometheus in
    monitoring. Written: all of monitoring, or any pod labelled app=prometheus in the db's namespace."""
    monitoring = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    prometheus = {"podSelector": {"matchLabels": {"app": "prometheus"}}}
    meant = ingress_to_db(monitoring | prometheus)
    broken = ingress_to_db(monitoring, prometheus)
    assert allowed(meant, PROM, DB, 5432) and allowed(broken, PROM, DB, 5432)
    assert not allowed(meant, GRAFANA, DB, 5432)
    assert allowed(broken, GRAFANA, DB, 5432)
    assert not allowed(meant, STRANGER, DB, 5432)


def test_ip_blocks_match_externals_by_address_and_pods_only_when_they_cover_everything():
    private = {"ipBlock": {"cidr": "10.0.0.0/8"}}
    internet = {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}
    assert allowed(ingress_to_db(private), VPC_HOST, DB, 5432)
    assert not allowed(ingress_to_db(private), INTERNET, DB, 5432)
    assert not allowed(ingress_to_db(private), APP, DB, 5432)  # pods: no IP, only a /0 matches them
    assert allowed(ingress_to_db(internet), INTERNET, DB, 5432)
    assert not allowed(ingress_to_db(internet), VPC_HOST, DB, 5432)
    assert allowed(ingress_to_db(internet), PROM, DB, 5432)  # the documented over-approximation
    assert not allowed(ingress_to_db({"ipBlock": {"cidr": "::/0"}}), INTERNET, DB, 5432)  # IPv6 block


def test_egress_isolation_needs_the_destinations_ingress_too():
    to_db = policy(
        "shop", {"matchLabels": {"app": "web"}}, egress=[{"to": [{"podSelector": {"matchLabels": {"app": "db"}}}]}]
    )
    assert allowed([to_db], APP, DB, 5432)
    assert not allowed([to_db], APP, PROM, 9090)
    assert not allowed([to_db], APP, INTERNET, 443)
    assert allowed([to_db], DB, PROM, 9090)  # the db is not selected: its egress is open
    # policyTypes defaults to Ingress plus Egress when there are egress rules: the web pod is isolated for ingress
    assert not allowed([to_db], DB, APP, 80)
    egress_only = to_db | {"spec": to_db["spec"] | {"policyTypes": ["Egress"]}}
    assert allowed([egress_only], DB, APP, 80)
    assert not allowed([to_db, *ingress_to_db({"podSelector": {"matchLabels": {"app": "other"}}})], APP, DB, 5432)


def test_ports_protocols_and_ranges():
    ports = [{"protocol": "TCP", "port": 5432}, {"port": 8000, "endPort": 8010}, {"protocol": "UDP"}]
    policies = ingress_to_db({"podSelector": {}}, ports=ports)
    assert allowed(policies, APP, DB, 5432)
    assert not allowed(policies, APP, DB, 5432, "SCTP")  # the protocol must match too
    assert [p for p in (7999, 8000, 8005, 8010, 8011) if allowed(policies, APP, DB, p)] == [8000, 8005, 8010]
    assert allowed(policies, APP, DB, 53, "UDP")  # a protocol without a port: all its ports
    assert not allowed(policies, APP, DB, 53)
    assert allowed(ingress_to_db({"podSelector": {}}), APP, DB, 1)  # no ports: every port


def test_named_ports_are_refused():
    with pytest.raises(ValueError, match="named port 'http'"):
        allowed(ingress_to_db({"podSelector": {}}, ports=[{"port": "http"}]), APP, DB, 80)


def test_a_broken_policy_is_caught():
    """Meant: the db admits the app on 5432. Written with `from: []` (which admits every source)
    instead of the app's selector: a stranger reaches the db."""
    meant = ingress_to_db({"podSelector": {"matchLabels": {"app": "web"}}}, ports=[{"port": 5432}])
    broken = [policy("shop", {"matchLabels": {"app": "db"}}, ingress=[{"from": [], "ports": [{"port": 5432}]}])]
    assert not allowed(meant, STRANGER, DB, 5432)
    assert allowed(broken, STRANGER, DB, 5432)
