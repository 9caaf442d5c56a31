"""The Kubernetes API access of the stack's own pods: a Role (or ClusterRole) and the binding that grants it to
one ServiceAccount. The smoke test reads its gateway's Service with one, a Planner its graph's pods, a teardown
guard its Deployment and what it waits for."""

from __future__ import annotations

from typing import Any, Literal

API_VERSION = "rbac.authorization.k8s.io/v1"


def granted(
    role_kind: Literal["Role", "ClusterRole"],
    metadata: dict[str, Any],
    rules: list[dict[str, Any]],
    account: str,
    account_namespace: str,
) -> list[dict[str, Any]]:
    """The role of `rules` and its binding (of the role's kind), both named and labelled as `metadata` says,
    granting it to the ServiceAccount `account` of `account_namespace`."""
    role = {"apiVersion": API_VERSION, "kind": role_kind, "metadata": metadata, "rules": rules}
    binding = {
        "apiVersion": API_VERSION,
        "kind": f"{role_kind}Binding",
        "metadata": dict(metadata),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": metadata["name"]},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": account_namespace}],
    }
    return [role, binding]
