"""The model cache: where the weights live, how they get there, and how workers wait for them.

Layout: the PVC's root is HF_HOME for the download Job and for every worker (both mount it at
MODEL_CACHE_MOUNT), so the Job's snapshot_download lands exactly where workers load from:
hub/models--<org>--<name>/snapshots/<revision>. A marker file written after a complete download
is what workers' init containers wait for.
"""

from __future__ import annotations

import math
from typing import Any

from core.inputs.catalog import ModelDownload
from core.inputs.config import ModelCacheConfig, Release
from core.inputs.quantity import gibibytes
from core.render.labels import REPLACE_UNREADY, SYSTEM_POOL_AFFINITY, common_labels
from core.render.manifests import HF_TOKEN_SECRET, MODEL_CACHE_MOUNT, MODEL_CACHE_PVC
from core.render.scripts import SCRIPT_VOLUME_MOUNT, Script, ScriptedJob, script_volume

# Values AWS computes when it creates the file system: the manifests name them, and the model-cache
# component (components/model_cache.py) puts the file system's outputs in their place.
FILE_SYSTEM_ID = "${fileSystemId}"
FILE_SYSTEM_DNS_NAME = "${fileSystemDnsName}"
FILE_SYSTEM_MOUNT_NAME = "${fileSystemMountName}"

# FSx for Lustre PERSISTENT_2 sizes: 1,200 GiB, then multiples of 2,400 GiB (FSx API reference).
FSX_MIN_GIB, FSX_STEP_GIB = 1200, 2400

DOWNLOAD_SCRIPT = "model-download.sh"  # configs/scripts/


def storage_class_name(model_cache: ModelCacheConfig) -> str:
    """The RWX StorageClass of the model cache: the user's for `existing`, else ours."""
    return model_cache.storage_class_name or f"gpt-oss-{model_cache.storage}"


def storage_class(model_cache: ModelCacheConfig) -> dict[str, Any] | None:
    """Our StorageClass (None for `existing`)."""
    if model_cache.storage == "existing":
        return None
    manifest = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": storage_class_name(model_cache), "labels": common_labels("model-cache")},
        "reclaimPolicy": "Retain",  # deleting the PVC never deletes the weights
        "volumeBindingMode": "Immediate",
    }
    if model_cache.storage == "efs":
        # Dynamic provisioning through an EFS access point per volume.
        return manifest | {
            "provisioner": "efs.csi.aws.com",
            "parameters": {
                "provisioningMode": "efs-ap",
                "directoryPerms": "775",
                "basePath": "/gpt-oss-infra",
            },
        }
    return manifest | {"provisioner": "fsx.csi.aws.com"}  # static PV below binds through it


def fsx_capacity_gib(size: str) -> int:
    wanted = math.ceil(gibibytes(size))
    if wanted <= FSX_MIN_GIB:
        return FSX_MIN_GIB
    return math.ceil(wanted / FSX_STEP_GIB) * FSX_STEP_GIB


def fsx_persistent_volume(model_cache: ModelCacheConfig, namespace: str) -> dict[str, Any]:
    """The static PV of an FSx for Lustre file system, bound to our PVC only."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"{namespace}-{MODEL_CACHE_PVC}", "labels": common_labels("model-cache")},
        "spec": {
            "capacity": {"storage": f"{fsx_capacity_gib(model_cache.size)}Gi"},
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": storage_class_name(model_cache),
            "mountOptions": ["flock"],
            "claimRef": {"namespace": namespace, "name": MODEL_CACHE_PVC},
            "csi": {
                "driver": "fsx.csi.aws.com",
                "volumeHandle": FILE_SYSTEM_ID,
                "volumeAttributes": {"dnsname": FILE_SYSTEM_DNS_NAME, "mountname": FILE_SYSTEM_MOUNT_NAME},
            },
        },
    }


def model_cache_pvc(model_cache: ModelCacheConfig, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": MODEL_CACHE_PVC, "namespace": namespace, "labels": common_labels("model-cache")},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": storage_class_name(model_cache),
            "resources": {"requests": {"storage": model_cache.size}},
        },
    }


def completion_marker(release: Release) -> str:
    """The file the download Job writes last; its presence means the snapshot is complete."""
    model = release.model.replace("/", "--")
    return f"{MODEL_CACHE_MOUNT}/.gpt-oss-infra/{model}@{release.model_revision}.complete"


def download_job_name(release: Release) -> str:
    """The revision is in the name: a new revision is a new Job, and nothing else changes."""
    return f"model-download-{release.model_revision[:12]}"


def model_download_job(
    release: Release, namespace: str, settings: ModelDownload, script: Script, with_hf_token: bool
) -> ScriptedJob:
    env = {
        "HF_HOME": MODEL_CACHE_MOUNT,
        "HF_HUB_VERSION": settings.huggingface_hub,
        "MODEL": release.model,
        "MODEL_REVISION": release.model_revision,
        "EXCLUDES": ",".join(settings.excludes),
        "MARKER": completion_marker(release),
    } | settings.env
    container: dict[str, Any] = {
        "name": "download",
        "image": settings.image,
        "env": [{"name": name, "value": value} for name, value in env.items()],
        "resources": settings.resources,
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    if with_hf_token:
        container["envFrom"] = [{"secretRef": {"name": HF_TOKEN_SECRET}}]
    scripted = cache_job(
        name=download_job_name(release),
        namespace=namespace,
        component="model-download",
        container=container,
        script=script,
        script_map_name="model-download-script",
        backoff_limit=settings.backoff_limit,
        annotations=REPLACE_UNREADY
        | {"gpt-oss-infra/model": release.model, "gpt-oss-infra/model-revision": release.model_revision},
    )
    scripted.job["spec"]["activeDeadlineSeconds"] = settings.active_deadline_seconds
    return scripted


def cache_job(
    *,
    name: str,
    namespace: str,
    component: str,
    container: dict[str, Any],
    script: Script,
    script_map_name: str,
    backoff_limit: int,
    annotations: dict[str, str],
    labels: dict[str, str] | None = None,
) -> ScriptedJob:
    """A run-once Job on the system pool that runs `script` with sh, the model cache mounted at
    MODEL_CACHE_MOUNT (the download Job and the benchmark Job), and the ConfigMap of its script.

    No ttlSecondsAfterFinished: Pulumi keeps these Jobs in its state, and a Job Kubernetes deleted
    after its TTL would vanish at the next `pulumi refresh` and be created (run) again by `up`."""
    labels = common_labels(component) | (labels or {})
    script_map = script.config_map(script_map_name, namespace, labels)
    cache_mount = {"name": MODEL_CACHE_PVC, "mountPath": MODEL_CACHE_MOUNT}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
        "spec": {
            "backoffLimit": backoff_limit,
            "template": {
                "metadata": {"labels": common_labels(component), "annotations": script.pod_annotations()},
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": SYSTEM_POOL_AFFINITY,
                    "containers": [
                        container | {"command": ["sh", script.path], "volumeMounts": [cache_mount, SCRIPT_VOLUME_MOUNT]}
                    ],
                    "volumes": [
                        {"name": MODEL_CACHE_PVC, "persistentVolumeClaim": {"claimName": MODEL_CACHE_PVC}},
                        script_volume(script_map),
                    ],
                },
            },
        },
    }
    return ScriptedJob(script=script_map, job=job)


def wait_for_model(release: Release) -> tuple[dict[str, Any], dict[str, Any]]:
    """An init container that holds a worker until the cache is complete, and its volume (the
    same PVC, read-only, under its own name so it never depends on the operator's naming)."""
    volume = {
        "name": "model-cache-marker",
        "persistentVolumeClaim": {"claimName": MODEL_CACHE_PVC, "readOnly": True},
    }
    container = {
        "name": "wait-for-model",
        "image": release.runtime_image,  # already on the node for the worker itself
        "command": ["sh", "-c", 'until [ -f "$MARKER" ]; do echo "waiting for $MARKER"; sleep 15; done'],
        "env": [{"name": "MARKER", "value": completion_marker(release)}],
        "volumeMounts": [{"name": volume["name"], "mountPath": MODEL_CACHE_MOUNT, "readOnly": True}],
    }
    return container, volume
