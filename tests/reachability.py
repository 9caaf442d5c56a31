"""Which connections a set of NetworkPolicy manifests allows, by the upstream semantics
(https://kubernetes.io/docs/concepts/services-networking/network-policies/): a pod is isolated for
ingress (egress) if a policy of its namespace selects it with that policyType (by default Ingress,
and Egress when the policy has egress rules); a connection is then allowed only if some rule of
those policies admits the peer on that port, on both ends.

Approximations, each named:
- a namespace carries only its `kubernetes.io/metadata.name` label;
- whether an ipBlock matches pod IPs is left to the implementation; the VPC CNI matches pod IPs
  against CIDRs. Pods here have no IP: an ipBlock matches every pod when it covers all addresses
  (prefix length 0, whatever its `except`) and no pod otherwise. Addresses outside the cluster are
  `External` peers with an IP, matched exactly. The approximation over-allows traffic to pods
  through a 0.0.0.0/0 block, which is the safe side for isolation properties;
- named ports are refused (ValueError): matching them needs the pods' container ports;
- traffic from the node (kubelet probes) and hostNetwork pods are not modelled: both always pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import ip_address, ip_network
from typing import Any

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Pod:
    """A pod, identified by namespace and name (its labels are not part of its identity nor its repr)."""

    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class External:
    """An address outside the cluster (the internet, a VPC endpoint)."""

    name: str
    ip: str


Peer = Pod | External
Policy = Mapping[str, Any]


def allowed(policies: list[Policy], source: Peer, destination: Peer, port: int, protocol: str = "TCP") -> bool:
    """Whether `source` may open a connection to `destination` on `port`: the source's egress and the
    destination's ingress must both admit it. External peers are not isolated."""
    egress = not isinstance(source, Pod) or _admits(policies, source, destination, port, protocol, "Egress")
    ingress = not isinstance(destination, Pod) or _admits(policies, destination, source, port, protocol, "Ingress")
    return egress and ingress


def matrix(
    policies: list[Policy], peers: list[Peer], port: int, protocol: str = "TCP"
) -> dict[tuple[Peer, Peer], bool]:
    """`allowed` for every ordered pair of distinct peers."""
    return {(src, dst): allowed(policies, src, dst, port, protocol) for src in peers for dst in peers if src != dst}


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A label selector (matchLabels and matchExpressions, ANDed; empty selects everything)."""
    return all(labels.get(key) == value for key, value in selector.get("matchLabels", {}).items()) and all(
        _expression(expression, labels) for expression in selector.get("matchExpressions", [])
    )


def _expression(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, values = expression["key"], expression.get("values", [])
    match expression["operator"]:
        case "In":
            return key in labels and labels[key] in values
        case "NotIn":  # an absent key is not in the set
            return labels.get(key) not in values
        case "Exists":
            return key in labels
        case "DoesNotExist":
            return key not in labels
    raise ValueError(f"unknown selector operator {expression['operator']!r}")


def _policy_types(policy: Policy) -> list[str]:
    spec = policy["spec"]
    return spec.get("policyTypes") or ["Ingress", *(["Egress"] if spec.get("egress") else [])]


def _admits(policies: list[Policy], pod: Pod, peer: Peer, port: int, protocol: str, direction: str) -> bool:
    """Whether `pod`'s policies of `direction` admit `peer` (the source for Ingress, the destination for
    Egress): yes when none selects the pod, else when one of their rules does."""
    rules_key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    selecting = [
        policy
        for policy in policies
        if policy["metadata"]["namespace"] == pod.namespace
        and direction in _policy_types(policy)
        and selects(policy["spec"]["podSelector"], pod.labels)
    ]
    return not selecting or any(
        _port_matches(rule.get("ports"), port, protocol)
        and (not rule.get(peers_key) or any(_peer_matches(p, peer, pod.namespace) for p in rule[peers_key]))
        for policy in selecting
        for rule in policy["spec"].get(rules_key, [])
    )


def _peer_matches(rule_peer: Mapping[str, Any], peer: Peer, policy_namespace: str) -> bool:
    if "ipBlock" in rule_peer:
        block = rule_peer["ipBlock"]
        if isinstance(peer, Pod):
            return ip_network(block["cidr"]).prefixlen == 0
        address = ip_address(peer.ip)
        return address in ip_network(block["cidr"]) and not any(
            address in ip_network(c) for c in block.get("except", [])
        )
    if isinstance(peer, External):
        return False
    namespaces = rule_peer.get("namespaceSelector")
    in_namespace = (
        selects(namespaces, {NAMESPACE_NAME_LABEL: peer.namespace})
        if namespaces is not None
        else peer.namespace == policy_namespace
    )
    return in_namespace and selects(rule_peer.get("podSelector", {}), peer.labels)


def _port_matches(ports: list[Mapping[str, Any]] | None, port: int, protocol: str) -> bool:
    """No ports: every port. An entry without a port: every port of its protocol (TCP by default)."""
    return not ports or any(_in_range(entry, port) for entry in ports if entry.get("protocol", "TCP") == protocol)


def _in_range(entry: Mapping[str, Any], port: int) -> bool:
    if "port" not in entry:
        return True
    if isinstance(entry["port"], str):
        raise ValueError(f"named port {entry['port']!r}: only numeric ports are evaluated")
    return entry["port"] <= port <= entry.get("endPort", entry["port"])
