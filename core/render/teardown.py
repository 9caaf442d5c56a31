"""What `pulumi destroy` waits for: AWS resources that controllers in the cluster make for Kubernetes
objects and delete only while they run. They are not Pulumi resources, so dependencies alone cannot
order their deletion: a teardown guard, deleted after what uses them and before the controller, holds
the destroy until they are gone.

  Load balancers  each gateway's NLB, its listeners, target groups and security groups: the AWS Load
                  Balancer Controller deletes them when the Envoy Service that Envoy Gateway made for
                  the Gateway is deleted, then removes the Service's finalizer
                  (aws-load-balancer-controller#3043: if the controller goes first, they stay). The
                  guard `load-balancers-gone` is deleted after the gateways, before the controller and
                  Envoy Gateway; it waits until every LoadBalancer Service of Envoy Gateway's namespace
                  whose Gateway is gone, or going, is gone too.
  EBS volumes     the EBS CSI driver's, for the claims of the charts' StatefulSets (NATS JetStream in
                  the platform's namespace, where the release bundles it; Prometheus in the monitoring
                  namespace). Uninstalling a chart leaves a StatefulSet's claims behind; deleting the
                  namespace, which Pulumi does (and waits for) before the guard, deletes them, and the
                  driver then deletes their volumes (reclaim policy Delete); likewise a ModelCache
                  block's EFS access point (its own guard, in `<namespace>-teardown`). The guard
                  `volumes-gone` is deleted before the nodes and the drivers: it waits for the volumes
                  whose claims are gone, or going.
A guard waits only for what lost its owner: a live gateway's NLB, or a claim in a namespace that
stays (adopted, renamed), is not the destroy's, so removing a guard never hangs on it.

A guard is a Deployment of one sleeping pod (jobs/teardown_guard.py) in a namespace of its own, which
outlives everything it guards. Pulumi deletes the Deployment in the foreground and waits until it is
gone, that is until its pod has exited: on SIGTERM the pod waits for what it guards when its Deployment
is being deleted, and exits at once when it is not (a drain, a rollout). Only Kubernetes objects: a
program in any Pulumi language can load them (a Pulumi dynamic resource could not, pulumi/pulumi#5455).

Not awaited: a GptOssStack's model cache volume, EFS access point or FSx static volume (reclaim policy
Retain: it goes with the stack's file system, or stays with it, modelCache.keepOnDestroy), and the VPC
CNI's network interfaces, released with their nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.inputs.catalog import TeardownSettings
from gpt_oss_infra.core.render.labels import SYSTEM_POOL_AFFINITY, common_labels
from gpt_oss_infra.core.render.pod_security import RESTRICTED, admission_labels
from gpt_oss_infra.core.render.rbac import granted
from gpt_oss_infra.core.render.scripts import API_TOKEN_VOLUME, SCRIPT_VOLUME_MOUNT, Script, script_volume

SCRIPT = "teardown_guard.py"  # jobs/
GUARD = "teardown-guard"  # its ServiceAccount, Role and script
GUARD_LABEL = "gpt-oss-infra/teardown-guard"
TOKEN_FILES = "/var/run/teardown-guard/serviceaccount"
LOAD_BALANCERS_GONE, VOLUMES_GONE = "load-balancers-gone", "volumes-gone"
# checkov's per-object skips (`<check>=<reason>`, no "=" in a reason).
GUARD_SKIPS = {
    "checkov.io/skip1": "CKV_K8S_8=the guard serves nothing to probe: it sleeps until SIGTERM",
    "checkov.io/skip2": "CKV_K8S_9=the guard serves nothing to probe: it sleeps until SIGTERM",
}
MAX_NAMESPACE = 63


@dataclass(frozen=True)
class Teardown:
    """The guards' namespace and access (made first), and each guard's Deployment, which the shell
    places in the dependency graph: `volumes_gone` before the charts that claim volumes, and
    `load_balancers_gone` before the gateways, each after what must outlive it."""

    namespace: str
    access: list[dict[str, Any]]  # Namespace, ServiceAccount, RBAC, the script's ConfigMap
    volumes_gone: dict[str, Any] | None
    load_balancers_gone: dict[str, Any] | None

    def objects(self) -> list[dict[str, Any]]:
        return [*self.access, *(guard for guard in (self.volumes_gone, self.load_balancers_gone) if guard)]


def guard_namespace(platform_namespace: str) -> str:
    """The guards' namespace: the platform's name and `-teardown`, within Kubernetes' 63 characters."""
    suffix = "-teardown"
    return f"{platform_namespace[: MAX_NAMESPACE - len(suffix)].rstrip('-')}{suffix}"


def teardown(
    platform_namespace: str,
    load_balancer_namespaces: list[str],
    claim_namespaces: list[str],
    settings: TeardownSettings,
    script: Script,
    kubernetes_version: str,
) -> Teardown | None:
    """The guards a stack needs: none without an NLB or a chart's volume to wait for."""
    if not load_balancer_namespaces and not claim_namespaces:
        return None
    namespace = guard_namespace(platform_namespace)
    labels = common_labels("teardown")
    guards = {
        name: _guard(name, namespace, waits, settings, script)
        for name, waits in (
            (VOLUMES_GONE, {"CLAIM_NAMESPACES": claim_namespaces}),
            (LOAD_BALANCERS_GONE, {"LOAD_BALANCER_NAMESPACES": load_balancer_namespaces}),
        )
        if next(iter(waits.values()))
    }
    # What it reads: the Services and the Gateways that own them; the volumes and the claims that own them.
    reads = [
        ("", "services", "list", load_balancer_namespaces),
        ("gateway.networking.k8s.io", "gateways", "get", load_balancer_namespaces),
        ("", "persistentvolumes", "list", claim_namespaces),
        ("", "persistentvolumeclaims", "get", claim_namespaces),
    ]
    cluster_reader = {"name": namespace, "labels": labels}  # cluster-scoped: named after its unique namespace
    access: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": labels | admission_labels(RESTRICTED, kubernetes_version)},
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": GUARD, "namespace": namespace, "labels": labels},
        },
        # Whether its own Deployment is being deleted.
        *granted(
            "Role",
            {"name": GUARD, "namespace": namespace, "labels": labels},
            [{"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": sorted(guards), "verbs": ["get"]}],
            GUARD,
            namespace,
        ),
        *granted(
            "ClusterRole",
            cluster_reader,
            [
                {"apiGroups": [group], "resources": [kind], "verbs": [verb]}
                for group, kind, verb, wanted in reads
                if wanted
            ],
            GUARD,
            namespace,
        ),
        script.config_map(GUARD, namespace, labels),
    ]
    return Teardown(namespace, access, guards.get(VOLUMES_GONE), guards.get(LOAD_BALANCERS_GONE))


def _guard(
    name: str, namespace: str, waits: dict[str, list[str]], settings: TeardownSettings, script: Script
) -> dict[str, Any]:
    labels = common_labels("teardown") | {GUARD_LABEL: name}
    env = {
        "GUARD_NAMESPACE": namespace,
        "GUARD_DEPLOYMENT": name,
        **{variable: ",".join(namespaces) for variable, namespaces in waits.items()},
        "POLL_SECONDS": str(settings.poll_seconds),
        "SERVICE_ACCOUNT_DIR": TOKEN_FILES,
        "PYTHONUNBUFFERED": "1",
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            # How long `pulumi destroy` waits for it to be gone (and `up` for it to be ready).
            "annotations": {"pulumi.com/timeoutSeconds": str(settings.destroy_timeout_seconds)} | GUARD_SKIPS,
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {GUARD_LABEL: name}},
            "template": {
                "metadata": {"labels": labels, "annotations": script.pod_annotations()},
                "spec": {
                    "serviceAccountName": GUARD,
                    "automountServiceAccountToken": False,  # the projected token below, read as a file
                    "affinity": SYSTEM_POOL_AFFINITY,
                    "terminationGracePeriodSeconds": settings.grace_period_seconds,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65534,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "guard",
                            "image": settings.image,
                            "command": ["python3", script.path],
                            "env": [{"name": key, "value": value} for key, value in env.items()],
                            "resources": settings.resources,
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [
                                SCRIPT_VOLUME_MOUNT,
                                {"name": API_TOKEN_VOLUME["name"], "mountPath": TOKEN_FILES, "readOnly": True},
                            ],
                        }
                    ],
                    "volumes": [script_volume({"metadata": {"name": GUARD}}), API_TOKEN_VOLUME],
                },
            },
        },
    }
