"""A wait that runs when `pulumi destroy` deletes it (core/render/destroy_waits.py says for what).

Pulumi deletes a resource after everything that depends on it, and before what it depends on: a
wait that depends on a controller, and that the controller's users depend on, is deleted between
the two. Its deletion is the wait: a Pulumi dynamic resource whose `delete` watches the cluster
until the controller has removed what it made, bounded, and fails the destroy, naming what is left
and where to look in the account, when time runs out. Creating and updating it touch nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import pulumi
import pulumi.dynamic

from gpt_oss_infra.components.kubeconfig import api_client
from gpt_oss_infra.core.render.destroy_waits import DestroyWait

POLL_SECONDS = 10


@dataclass(frozen=True)
class ClusterAccess:
    """How the wait reaches the cluster at destroy time: the provider's kubeconfig (contents or a
    path; None: KUBECONFIG or ~/.kube/config) and context."""

    kubeconfig: pulumi.Input[str] | None
    context: str | None = None


class Cluster(Protocol):
    """What the wait asks of the cluster."""

    def services_left(self, services: list[str]) -> list[str]: ...
    def volumes_left(self, namespaces: list[str]) -> list[str]: ...


def wait_until_gone(
    cluster: Cluster,
    wait: dict[str, Any],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Wait for its Services, and the volumes of the claims of its namespaces, to be gone; TimeoutError,
    naming them, after its timeout. It deletes nothing: a run of it outside a destroy (the resource
    renamed, say) can only wait, never take live data."""
    deadline = clock() + wait["timeout_seconds"]
    while True:
        left = cluster.services_left(wait["nlb_services"]) + cluster.volumes_left(wait["claim_namespaces"])
        if not left:
            return
        if clock() >= deadline:
            raise TimeoutError(
                f"{', '.join(left)}: still there {wait['timeout_seconds']} s after their controller was asked to "
                f"delete them, and with them AWS resources that bill. Find what is left with: {wait['leftovers']}"
            )
        sleep(POLL_SECONDS)


class KubernetesCluster:
    """The cluster through the Kubernetes Python client."""

    def __init__(self, kubeconfig: str | None, context: str | None):
        from kubernetes import client  # imported where the wait runs: the dynamic provider's process

        self.core = client.CoreV1Api(api_client(kubeconfig, context))
        self.not_found = client.ApiException

    def services_left(self, services: list[str]) -> list[str]:
        left = []
        for service in services:
            namespace, name = service.split("/")
            try:
                self.core.read_namespaced_service(name, namespace)
                left.append(f"Service {service}")
            except self.not_found as error:
                if error.status != 404:
                    raise
        return left

    def volumes_left(self, namespaces: list[str]) -> list[str]:
        return [
            f"PersistentVolume {volume.metadata.name} (claim {volume.spec.claim_ref.namespace}/"
            f"{volume.spec.claim_ref.name})"
            for volume in self.core.list_persistent_volume().items
            if volume.spec.claim_ref is not None
            and volume.spec.claim_ref.namespace in namespaces
            and volume.spec.persistent_volume_reclaim_policy == "Delete"
        ]


class WaitAtDestroyProvider(pulumi.dynamic.ResourceProvider):
    """Nothing to create or update; deleting waits (wait_until_gone)."""

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        return pulumi.dynamic.CreateResult(id_=props["wait"]["name"], outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        changed = any(olds.get(key) != value for key, value in news.items())
        return pulumi.dynamic.DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(outs=news)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        wait_until_gone(KubernetesCluster(props.get("kubeconfig"), props.get("context")), props["wait"])


class WaitAtDestroy(pulumi.dynamic.Resource):
    """One DestroyWait, parented and ordered by the caller's options."""

    def __init__(self, wait: DestroyWait, access: ClusterAccess, opts: pulumi.ResourceOptions):
        props = {"wait": asdict(wait), "kubeconfig": access.kubeconfig, "context": access.context}
        secret = pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"])
        super().__init__(WaitAtDestroyProvider(), wait.name, props, pulumi.ResourceOptions.merge(opts, secret))
