"""The one Kubernetes provider every Kubernetes resource of the stack uses."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s


def existing_cluster_provider(name: str) -> k8s.Provider:
    """For `cluster.create: false`: the standard `kubernetes:kubeconfig` / `kubernetes:context`
    config, else the default kubeconfig (KUBECONFIG or ~/.kube/config)."""
    settings = pulumi.Config("kubernetes")
    return k8s.Provider(
        name,
        kubeconfig=settings.get("kubeconfig"),
        context=settings.get("context"),
        enable_server_side_apply=True,
        # Adopt objects that exist already (the CRDs of an earlier Dynamo install, made by its
        # chart) instead of failing with AlreadyExists, as pulumi-kubernetes did before 4.29.
        upsert_existing_objects=True,
    )
