"""Helm values of the Dynamo platform chart, set explicitly for the pinned release.

Chart defaults move between releases (etcd install off since early 2026, the NATS switch moved
to global.nats.install in 1.1 and NATS off by default from 1.4), so every switch we depend on is
written here rather than inherited, and `core.dynamo.undeclared_values` checks every path against
the release's own chart values before anything is deployed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.inputs.config import PlatformConfig
from gpt_oss_infra.core.mappings import deep_merge
from gpt_oss_infra.core.render import manifests, pod_security
from gpt_oss_infra.core.render.labels import SYSTEM_POOL_AFFINITY

NGC_PULL_SECRET = "ngc-pull"


@dataclass(frozen=True)
class PlatformObjects:
    dynamo: DynamoVersion  # the pinned release: chart, CRDs
    crds: list[dict[str, Any]]  # the release's CRDs, applied by the program before the chart and every graph
    namespace: dict[str, Any]
    values: dict[str, Any]  # dynamo-platform chart values
    pull_secret: dict[str, Any] | None  # without data


def platform_objects(
    namespace: str, dynamo: DynamoVersion, kubernetes_version: str, values: dict[str, Any], with_pull_secret: bool
) -> PlatformObjects:
    """The platform's objects in `namespace`, with its chart `values` (platform_values)."""
    return PlatformObjects(
        dynamo=dynamo,
        crds=dynamo.owned_crds(),
        namespace=manifests.namespace(
            namespace,
            "dynamo-platform",
            pod_security.admission_labels(pod_security.BASELINE, kubernetes_version),
        ),
        values=values,
        pull_secret=manifests.ngc_pull_secret(namespace, NGC_PULL_SECRET) if with_pull_secret else None,
    )


def platform_values(
    platform: PlatformConfig, dynamo: DynamoVersion, block_storage_class: str | None, with_pull_secret: bool
) -> dict[str, Any]:
    """`block_storage_class`: named by every PVC the chart creates (NATS JetStream's file store).
    Left empty, the chart's PVC asks for the cluster's default class, which EKS 1.30+ does not set."""
    pull_secrets = [{"name": NGC_PULL_SECRET}] if with_pull_secret else []
    nats_on = dynamo.bundled_nats(platform.nats)
    nats: dict[str, Any] = {"podTemplate": {"merge": {"spec": {"tolerations": [], "affinity": SYSTEM_POOL_AFFINITY}}}}
    if nats_on:
        nats["config"] = {"jetstream": {"fileStore": {"pvc": {"storageClassName": block_storage_class}}}}
    values = {
        "global": {
            "etcd": {"install": False},  # discovery goes through the Kubernetes API
            "grove": {"install": platform.grove, "enabled": platform.grove},
            "kai-scheduler": {"install": platform.kai_scheduler, "enabled": platform.kai_scheduler},
        },
        "dynamo-operator": {
            "enabled": True,
            # One owner for the CRDs (configs/dynamo/versions.yaml `crds`): the program, before this chart
            # and every graph, with the operator's crd-apply init container off; or that init container,
            # applying the CRDs of the operator's own image. The chart's crds/ folder is always skipped
            # (the Release's skipCrds).
            "upgradeCRD": not dynamo.program_owns_crds,
            "discoveryBackend": "kubernetes",
            "imagePullSecrets": pull_secrets,
            "controllerManager": {"tolerations": [], "affinity": SYSTEM_POOL_AFFINITY},
            # Never the chart's PodMonitors (made only if their CRD happens to exist at install): with
            # observability on, ours scrape the graphs (core/render/observability.py), once.
            "dynamo": {"metrics": {"podMonitors": {"enabled": False}}},
        },
        "nats": nats,
    }
    for path in dynamo.spec.nats_switch:  # where this release reads the NATS on/off switch
        values = deep_merge(values, _nested(path.split("."), nats_on))
    return values


def _nested(keys: list[str], value: Any) -> dict[str, Any]:
    """{"a": {"b": value}} for ["a", "b"]."""
    return {keys[0]: _nested(keys[1:], value) if len(keys) > 1 else value}
