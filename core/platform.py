"""Helm values of the Dynamo platform chart (dynamo-platform 1.0.x-1.2.x), set explicitly.

Chart defaults move between releases (etcd install off since early 2026, NATS off from 1.3), so
every switch we depend on is written here rather than inherited. Keys follow
../shared/reference/dynamo/at-v1.0.0/deploy/helm/charts/platform/values.yaml.
"""

from __future__ import annotations

from typing import Any

from core.config import Platform
from core.model_cache import SYSTEM_POOL_AFFINITY

CHART = "dynamo-platform"
CHART_REPOSITORY = "oci://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts"
NGC_PULL_SECRET = "ngc-pull"


def platform_values(platform: Platform, block_storage_class: str | None, with_pull_secret: bool) -> dict[str, Any]:
    """`block_storage_class`: named by every PVC the chart creates (NATS JetStream's file store).
    Left empty, the chart's PVC asks for the cluster's default class, which EKS 1.30+ does not set."""
    pull_secrets = [{"name": NGC_PULL_SECRET}] if with_pull_secret else []
    nats: dict[str, Any] = {
        "enabled": platform.nats,
        "podTemplate": {"merge": {"spec": {"tolerations": [], "affinity": SYSTEM_POOL_AFFINITY}}},
    }
    if platform.nats:
        nats["config"] = {"jetstream": {"fileStore": {"pvc": {"storageClassName": block_storage_class}}}}
    return {
        "global": {
            "etcd": {"install": False},  # discovery goes through the Kubernetes API
            "grove": {"install": platform.grove, "enabled": platform.grove},
            "kai-scheduler": {"install": platform.kai_scheduler, "enabled": platform.kai_scheduler},
        },
        "dynamo-operator": {
            "enabled": True,
            "upgradeCRD": True,  # the operator's hook Job applies the CRDs (no separate CRD chart)
            "discoveryBackend": "kubernetes",
            "nats": {"enabled": platform.nats},
            "imagePullSecrets": pull_secrets,
            "controllerManager": {"tolerations": [], "affinity": SYSTEM_POOL_AFFINITY},
        },
        "nats": nats,
    }
