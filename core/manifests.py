"""Kubernetes objects as plain dicts, rendered from the resolved stack.

Layout follows NVIDIA's gpt-oss-120b Dynamo recipes
(../shared/reference/dynamo/recipes/gpt-oss-120b/trtllm/{agg,disagg}/deploy.yaml): the engine
config is a ConfigMap mounted into each worker, the model cache PVC is mounted at /opt/models
with HF_HOME pointing at it, and the HF token reaches pods only through a Secret.
"""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from core.config import ModelCache, Release
from core.recipes import ResolvedDeployment, Worker

PART_OF = "gpt-oss-infra"
POOL_LABEL = "gpt-oss-infra/pool"
HARDWARE_LABEL = "gpt-oss-infra/hardware"
GPU_TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

MODEL_CACHE_PVC = "model-cache"
MODEL_CACHE_MOUNT = "/opt/models"  # HF_HOME of every worker, as in the upstream recipes
ENGINE_CONFIG_MOUNT = "/opt/dynamo/configs"
HF_TOKEN_SECRET = "hf-token"
HF_TOKEN_KEY = "HF_TOKEN"
WORKER_SHARED_MEMORY = "80Gi"  # upstream recipes' sharedMemory for TRT-LLM workers
FRONTEND_PORT = 8000


def common_labels(component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/component": component,
    }


def namespace(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": common_labels("workloads")},
    }


def hf_token_secret(namespace_name: str) -> dict[str, Any]:
    """The Secret without its data: the token is a Pulumi secret the shell adds (HF_TOKEN_KEY)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": HF_TOKEN_SECRET,
            "namespace": namespace_name,
            "labels": common_labels("model-cache"),
        },
        "type": "Opaque",
    }


def model_cache_pvc(namespace_name: str, size: str, storage_class: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": MODEL_CACHE_PVC,
            "namespace": namespace_name,
            "labels": common_labels("model-cache"),
        },
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
        },
    }


def storage_class_name(model_cache: ModelCache) -> str:
    """The RWX StorageClass of the model cache: the user's for `existing`, else ours."""
    return model_cache.storage_class_name or f"gpt-oss-{model_cache.storage}"


def model_snapshot_path(release: Release) -> str:
    """Where the Hugging Face hub layout under HF_HOME keeps the pinned revision."""
    repo_dir = "models--" + release.model.replace("/", "--")
    return f"{MODEL_CACHE_MOUNT}/hub/{repo_dir}/snapshots/{release.model_revision}"


def engine_config_name(deployment: ResolvedDeployment) -> str:
    return f"{deployment.name}-engine-config"


def engine_config_map(deployment: ResolvedDeployment, namespace_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": engine_config_name(deployment),
            "namespace": namespace_name,
            "labels": common_labels("engine-config") | {"gpt-oss-infra/deployment": deployment.name},
        },
        "data": {_engine_file(worker): _engine_yaml(worker) for worker in deployment.workers},
    }


def dynamo_graph_deployment(
    deployment: ResolvedDeployment,
    release: Release,
    namespace_name: str,
    node_selector: dict[str, str],
    with_hf_token: bool,
) -> dict[str, Any]:
    services = {"Frontend": _frontend(deployment, release)}
    for worker in deployment.workers:
        services[worker.service_name] = _worker(worker, deployment, release, node_selector, with_hf_token)
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": deployment.name,
            "namespace": namespace_name,
            "labels": common_labels("serving") | {"gpt-oss-infra/recipe": deployment.recipe_name},
        },
        "spec": {
            "backendFramework": "trtllm",
            "pvcs": [{"name": MODEL_CACHE_PVC, "create": False}],
            "services": services,
        },
    }


def frontend_service_name(deployment_name: str) -> str:
    """The Service the Dynamo operator creates for a graph's Frontend."""
    return f"{deployment_name}-frontend"


def _frontend(deployment: ResolvedDeployment, release: Release) -> dict[str, Any]:
    return {
        "componentType": "frontend",
        "replicas": 1,
        "extraPodSpec": {
            "mainContainer": {
                "image": release.runtime_image,
                "command": ["python3", "-m", "dynamo.frontend"],
                "args": [
                    "--router-mode",
                    deployment.config.router_mode,
                    "--http-port",
                    str(FRONTEND_PORT),
                ],
            }
        },
    }


def _worker(
    worker: Worker,
    deployment: ResolvedDeployment,
    release: Release,
    node_selector: dict[str, str],
    with_hf_token: bool,
) -> dict[str, Any]:
    args = [
        "--model-path",
        model_snapshot_path(release),
        "--served-model-name",
        release.model,
        "--extra-engine-args",
        f"{ENGINE_CONFIG_MOUNT}/{_engine_file(worker)}",
        *worker.args,
    ]
    if worker.role != "worker":
        args += ["--disaggregation-mode", worker.role]
    env = {"HF_HOME": MODEL_CACHE_MOUNT, "HF_HUB_OFFLINE": "1"} | worker.env
    service: dict[str, Any] = {
        "componentType": "worker",
        "replicas": worker.replicas,
        "resources": {"requests": {"gpu": str(worker.gpus)}, "limits": {"gpu": str(worker.gpus)}},
        "sharedMemory": {"size": WORKER_SHARED_MEMORY},
        "volumeMounts": [{"name": MODEL_CACHE_PVC, "mountPoint": MODEL_CACHE_MOUNT}],
        # A changed engine config rolls the workers: the ConfigMap alone would not.
        "extraPodMetadata": {
            "annotations": {"gpt-oss-infra/engine-config-sha256": _sha256(_engine_yaml(worker))}
        },
        "extraPodSpec": {
            "nodeSelector": node_selector,
            "tolerations": [GPU_TAINT],
            "volumes": [{"name": "engine-config", "configMap": {"name": engine_config_name(deployment)}}],
            "mainContainer": {
                "image": release.runtime_image,
                "command": ["python3", "-m", "dynamo.trtllm"],
                "args": args,
                "env": [{"name": name, "value": value} for name, value in env.items()],
                "volumeMounts": [
                    {"name": "engine-config", "mountPath": ENGINE_CONFIG_MOUNT, "readOnly": True}
                ],
            },
        },
    }
    if worker.role != "worker":
        service["subComponentType"] = worker.role
    if with_hf_token:
        service["envFromSecret"] = HF_TOKEN_SECRET
    return service


def _engine_file(worker: Worker) -> str:
    return f"{worker.role}.yaml"


def _engine_yaml(worker: Worker) -> str:
    return yaml.safe_dump(worker.engine, sort_keys=True)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
