"""The model cache: where the weights live, how they get there, and how workers wait for them.

Layout: the PVC's root is HF_HOME for the download Job and for every worker (both mount it at
MODEL_CACHE_MOUNT), so the Job's snapshot_download lands exactly where workers load from:
hub/models--<org>--<name>/snapshots/<revision>. A marker file written after a complete download
is what workers' init containers wait for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from gpt_oss_infra.core.inputs.catalog import ModelDownload
from gpt_oss_infra.core.inputs.config import ModelCacheConfig, Release
from gpt_oss_infra.core.render.labels import REPLACE_UNREADY, SIMULATED_LABEL, SYSTEM_POOL_AFFINITY, common_labels
from gpt_oss_infra.core.render.manifests import HF_TOKEN_KEY, HF_TOKEN_SECRET, MODEL_CACHE_MOUNT, MODEL_CACHE_PVC
from gpt_oss_infra.core.render.scripts import SCRIPT_VOLUME_MOUNT, Script, ScriptedJob, script_volume
from gpt_oss_infra.core.resolve.sizing import fsx_capacity_gib

# Values AWS computes when it creates the file system: the manifests name them, and the model-cache
# block (components/model_cache.py) puts the file system's outputs in their place.
FILE_SYSTEM_ID = "${fileSystemId}"
FILE_SYSTEM_DNS_NAME = "${fileSystemDnsName}"
FILE_SYSTEM_MOUNT_NAME = "${fileSystemMountName}"

DOWNLOAD_SCRIPT = "model-download.sh"  # jobs/

# The download Job reads the HF token from a file of the Secret (huggingface_hub's HF_TOKEN_PATH).
HF_TOKEN_MOUNT = "/var/run/secrets/huggingface"
HF_TOKEN_FILE = "token"

# The cache Jobs' root filesystem is read-only; what they write besides the cache goes to an
# emptyDir: pip's --user installs (PYTHONUSERBASE), temporary files, and what tools keep in HOME.
SCRATCH_VOLUME = "scratch"
SCRATCH_MOUNT = "/tmp"
SCRATCH_ENV = [
    {"name": "HOME", "value": SCRATCH_MOUNT},
    {"name": "PYTHONUSERBASE", "value": f"{SCRATCH_MOUNT}/python"},
]

# checkov's per-object skips (its own annotation syntax, `<check>=<reason>`, no "=" in a reason),
# on the cache Jobs only: every other pod checkov sees runs as non-root and is held to it. They run
# as root because the cache's volume may let no other user write: kubelet applies fsGroup to no
# ReadWriteMany volume of the EFS or FSx CSI driver (fsGroupPolicy ReadWriteOnceWithFSType), a new
# FSx for Lustre file system's root directory belongs to root, an `existing` volume is the user's,
# and a cache an earlier Job filled holds root's files. (Through an EFS access point every write
# is the access point's POSIX user, whoever the container is.) With every capability dropped, root
# has no CAP_DAC_OVERRIDE: it writes as the owner uid 0, so an `existing` volume must let uid 0 write.
CACHE_WRITER_SKIPS = {
    "checkov.io/skip1": "CKV_K8S_23=writes the model cache, whose volume (FSx, existing) may admit root only",
    "checkov.io/skip2": "CKV_K8S_40=runs as root (CKV_K8S_23), with no capabilities and a read-only root",
}


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
        # The volume outlives its claim: its EFS access point goes with the stack's file system, or stays
        # with it (keepOnDestroy). Not a choice keepOnDestroy could change later: Kubernetes refuses any
        # update of a StorageClass's reclaimPolicy, and an existing volume keeps the one it was made with.
        # A ModelCache block on the caller's file system deletes instead (on_callers_file_system).
        "reclaimPolicy": "Retain",
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


class Snapshot(Protocol):
    """The model revision a cache holds: a stack's Release, or what a ModelCache block is given."""

    @property
    def model(self) -> str: ...

    @property
    def model_revision(self) -> str: ...


def completion_marker(release: Snapshot, weights: bool = True) -> str:
    """The file the download Job writes last; its presence means the snapshot is complete, with the
    weights, or with the tokenizer and config files only (a stack of mocker recipes): two files, so
    that a stack moving to engines that load weights never takes a tokenizer-only cache for a full one."""
    model = release.model.replace("/", "--")
    return (
        f"{MODEL_CACHE_MOUNT}/.gpt-oss-infra/{model}@{release.model_revision}{'' if weights else '.tokenizer'}.complete"
    )


def awaited_markers(release: Snapshot, weights: bool) -> list[str]:
    """The markers any of which lets a worker start: a full snapshot's, and for a worker that reads the
    tokenizer only (a mocker), a tokenizer-only snapshot's first. A full snapshot holds the tokenizer too,
    and a cache made on its own (the ModelCache block), which sees no deployment, downloads the full one."""
    full = completion_marker(release)
    return [full] if weights else [completion_marker(release, weights=False), full]


def download_job_name(release: Snapshot, weights: bool = True) -> str:
    """The revision (and what is cached) is in the name: a new revision is a new Job, and nothing else changes."""
    return f"model-download-{release.model_revision[:12]}{'' if weights else '-tokenizer'}"


def model_download_job(
    release: Snapshot, namespace: str, settings: ModelDownload, script: Script, with_hf_token: bool, weights: bool
) -> ScriptedJob:
    env = {
        "HF_HOME": MODEL_CACHE_MOUNT,
        "HF_HUB_VERSION": settings.huggingface_hub,
        "MODEL": release.model,
        "MODEL_REVISION": release.model_revision,
        # Without weights: the tokenizer, config and chat template only.
        "EXCLUDES": ",".join(settings.excludes if weights else [*settings.excludes, *settings.weight_files]),
        "MARKER": completion_marker(release, weights),
    } | settings.env
    container: dict[str, Any] = {
        "name": "download",
        "image": settings.image,
        "env": [{"name": name, "value": value} for name, value in env.items()],
        "resources": settings.resources,
    }
    volumes = []
    if with_hf_token:
        # A file, not an environment variable (which every child process inherits): huggingface_hub
        # reads the token from HF_TOKEN_PATH.
        container["env"].append({"name": "HF_TOKEN_PATH", "value": f"{HF_TOKEN_MOUNT}/{HF_TOKEN_FILE}"})
        container["volumeMounts"] = [{"name": HF_TOKEN_SECRET, "mountPath": HF_TOKEN_MOUNT, "readOnly": True}]
        volumes.append(
            {
                "name": HF_TOKEN_SECRET,
                "secret": {"secretName": HF_TOKEN_SECRET, "items": [{"key": HF_TOKEN_KEY, "path": HF_TOKEN_FILE}]},
            }
        )
    scripted = cache_job(
        name=download_job_name(release, weights),
        namespace=namespace,
        component="model-download",
        container=container,
        script=script,
        script_map_name="model-download-script",
        backoff_limit=settings.backoff_limit,
        annotations=REPLACE_UNREADY
        | {"gpt-oss-infra/model": release.model, "gpt-oss-infra/model-revision": release.model_revision},
        volumes=volumes,
        labels=None if weights else SIMULATED_LABEL,
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
    volumes: Sequence[dict[str, Any]] = (),
) -> ScriptedJob:
    """A run-once Job on the system pool that runs `script` with sh, the model cache mounted at
    MODEL_CACHE_MOUNT (the download Job and the benchmark Job), and the ConfigMap of its script;
    `container`'s own volumeMounts come after those, and `volumes` after the Job's.

    No ttlSecondsAfterFinished: Pulumi keeps these Jobs in its state, and a Job Kubernetes deleted
    after its TTL would vanish at the next `pulumi refresh` and be created (run) again by `up`.

    Hardened as far as writing the cache allows: a read-only root filesystem (pip installs into
    PYTHONUSERBASE on the scratch emptyDir, HOME is there too), no capabilities, no privilege
    escalation, the runtime's default seccomp profile and no service account token (neither Job
    calls the Kubernetes API). They run as the image's user, root, which checkov is told per Job
    (CACHE_WRITER_SKIPS): a non-root user cannot write where the cache needs it on every volume."""
    labels = common_labels(component) | (labels or {})
    script_map = script.config_map(script_map_name, namespace, labels)
    mounts = [
        {"name": MODEL_CACHE_PVC, "mountPath": MODEL_CACHE_MOUNT},
        SCRIPT_VOLUME_MOUNT,
        {"name": SCRATCH_VOLUME, "mountPath": SCRATCH_MOUNT},
        *container.get("volumeMounts", []),
    ]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": annotations | CACHE_WRITER_SKIPS,
        },
        "spec": {
            "backoffLimit": backoff_limit,
            "template": {
                "metadata": {"labels": common_labels(component), "annotations": script.pod_annotations()},
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": SYSTEM_POOL_AFFINITY,
                    "automountServiceAccountToken": False,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [
                        container
                        | {
                            "command": ["sh", script.path],
                            "env": container["env"] + SCRATCH_ENV,
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": mounts,
                        }
                    ],
                    "volumes": [
                        {"name": MODEL_CACHE_PVC, "persistentVolumeClaim": {"claimName": MODEL_CACHE_PVC}},
                        script_volume(script_map),
                        {"name": SCRATCH_VOLUME, "emptyDir": {}},
                        *volumes,
                    ],
                },
            },
        },
    }
    return ScriptedJob(script=script_map, job=job)


WAIT_FOR_MARKER = (
    "import os, time\n"
    "markers = os.environ['MARKERS'].split()\n"
    "while not any(os.path.exists(marker) for marker in markers):\n"
    "    print(f'waiting for {\" or \".join(markers)}', flush=True)\n"
    "    time.sleep(15)\n"
)


def wait_for_model(
    release: Release, weights: bool, resources: dict[str, dict[str, str]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """An init container that holds a worker until the cache is complete, and its volume (the
    same PVC, read-only, under its own name so it never depends on the operator's naming)."""
    volume = {
        "name": "model-cache-marker",
        "persistentVolumeClaim": {"claimName": MODEL_CACHE_PVC, "readOnly": True},
    }
    container = {
        "name": "wait-for-model",
        "image": release.runtime_image,  # already on the node for the worker itself
        # Python, which every runtime image runs its own components with: a minimal image need not
        # have a shell or `sleep` (the mocker's dynamo-planner image, say).
        "command": ["python3", "-c", WAIT_FOR_MARKER],
        "env": [{"name": "MARKERS", "value": " ".join(awaited_markers(release, weights))}],
        "volumeMounts": [{"name": volume["name"], "mountPath": MODEL_CACHE_MOUNT, "readOnly": True}],
        "resources": resources,
    }
    return container, volume
