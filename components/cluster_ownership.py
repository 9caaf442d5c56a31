"""Read from an existing cluster what the stack would take from someone else (core/render/ownership.py
decides; this reads): each Namespace and cluster-scoped object of the stack's, and where Helm releases
of its release names run. The program does it before `pulumi preview` or `up` registers anything on a
cluster of kind `existing`, and `make preflight` does it too. Read-only: GETs and LISTs."""

from __future__ import annotations

import json
from typing import Any, Protocol

from gpt_oss_infra.components.kubeconfig import api_client
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.render import ownership
from gpt_oss_infra.core.render.stack_objects import Stack

KUBECONFIG_KEY = "kubernetes:kubeconfig"


class LiveCluster:
    """The cluster through the Kubernetes Python client, as the stack's provider reaches it."""

    def __init__(self, client: Any):
        import kubernetes  # imported where a cluster is read, not by every program run

        self.api = client  # a kubernetes.client.ApiClient (components/kubeconfig.api_client)
        self.error = kubernetes.client.ApiException

    def get(self, path: str, accept: str = "application/json", **query: str) -> dict[str, Any] | None:
        """The object at `path` as JSON, or None where the API answers 404."""
        try:
            response = self.api.call_api(
                path,
                "GET",
                query_params=list(query.items()),
                header_params={"Accept": accept},
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _preload_content=False,  # the raw answer: the client's own deserializers differ by version
                _request_timeout=30,
            )
            found: dict[str, Any] = json.loads(response.data)
            return found
        except self.error as error:
            if error.status == 404:
                return None
            raise

    def annotations(self, claim: ownership.Claim) -> dict[str, str] | None:
        found = self.get(claim.path)
        return None if found is None else (found.get("metadata", {}).get("annotations") or {})

    def release_namespaces(self, name: str) -> list[str]:
        """Where Helm releases named `name` run: Helm keeps each release in Secrets labelled owner=helm, name=<name>."""
        # Their metadata only: the Secrets hold every revision's values, other teams' too.
        metadata_only = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
        found = self.get("/api/v1/secrets", accept=metadata_only, labelSelector=f"owner=helm,name={name}") or {}
        return sorted({secret["metadata"]["namespace"] for secret in found.get("items", [])})


class ClusterObjects(Protocol):
    """What the ownership check reads (LiveCluster on a real cluster)."""

    def annotations(self, claim: ownership.Claim) -> dict[str, str] | None: ...
    def release_namespaces(self, name: str) -> list[str]: ...


def ownership_problems(stack: Stack, cluster: ClusterObjects, owner: str) -> list[Problem]:
    """Every object of the stack's that exists and is not its own, and every clashing Helm release."""
    claims = ownership.claims(stack)
    releases = ownership.release_claims(stack)
    return ownership.ownership_problems(
        claims,
        {claim.ref: cluster.annotations(claim) for claim in claims},
        releases,
        {release.name: cluster.release_namespaces(release.name) for release in releases},
        owner,
        getattr(stack.config.cluster, "adopt", []),
    )


def cluster_problems(stack: Stack, kubeconfig: str | None, context: str | None, owner: str) -> list[Problem]:
    """ownership_problems for the cluster `kubeconfig` reaches, or why it cannot be read."""
    try:
        return ownership_problems(stack, LiveCluster(api_client(kubeconfig, context)), owner)
    except Exception as error:  # unreachable, unauthorized, a kubeconfig that is neither path nor contents
        said = str(error).replace(kubeconfig, "<kubernetes:kubeconfig>") if kubeconfig else str(error)
        return [
            Problem(
                KUBECONFIG_KEY,
                f"cannot read the cluster to check what exists in it before changing anything: "
                f"{type(error).__name__}: {said[:500]}",
            )
        ]
