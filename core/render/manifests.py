"""Kubernetes objects as plain dicts, rendered from the resolved stack.

Layout follows NVIDIA's gpt-oss-120b Dynamo recipes
(ai-dynamo/dynamo recipes/gpt-oss-120b/trtllm/{agg,disagg}/deploy.yaml): the engine
config is a ConfigMap mounted into each worker, the model cache PVC is mounted at /opt/models
with HF_HOME pointing at it, and the HF token reaches pods only through a Secret.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any

from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.dynamo_graph import GraphComponent, ModelVolume, render_graph
from gpt_oss_infra.core.inputs.catalog import FrontendResources, GpuWorkerResources, PodResources
from gpt_oss_infra.core.inputs.config import Release
from gpt_oss_infra.core.render import planner, pod_security
from gpt_oss_infra.core.render.karpenter import DO_NOT_DISRUPT
from gpt_oss_infra.core.render.labels import (
    DEPLOYMENT_LABEL,
    FRONTEND_ROLE,
    GPU_TAINT,
    SIMULATED_LABEL,
    SYSTEM_POOL_AFFINITY,
    common_labels,
    worker_labels,
)
from gpt_oss_infra.core.resolve.drain import GRACE_PERIOD_VARIABLE
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment, Worker

MODEL_CACHE_PVC = "model-cache"
MODEL_CACHE_MOUNT = "/opt/models"  # HF_HOME of every worker, as in the upstream recipes
ENGINE_CONFIG_MOUNT = "/opt/dynamo/configs"
HF_TOKEN_SECRET = "hf-token"
HF_TOKEN_KEY = "HF_TOKEN"
WORKER_SHARED_MEMORY = "80Gi"  # /dev/shm of TRT-LLM workers, as in the upstream recipes
FRONTEND_PORT = 8000
EFA_RESOURCE = "vpc.amazonaws.com/efa"
ENGINE_VERSION = "gpt-oss-infra/engine-version"
# An autoscaled graph's components, by name: Dynamo's admission refuses adding or removing a component of
# a live graph (its Planner, when autoscaling is turned on or off), so a change here replaces the graph.
COMPONENTS_ANNOTATION = "gpt-oss-infra/components"


def namespace(name: str, component: str, admission: dict[str, str]) -> dict[str, Any]:
    """A namespace with its Pod Security Admission labels (core.render.pod_security)."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": common_labels(component) | admission},
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


def model_snapshot_path(release: Release) -> str:
    """Where the Hugging Face hub layout under HF_HOME keeps the pinned revision."""
    repo_dir = "models--" + release.model.replace("/", "--")
    return f"{MODEL_CACHE_MOUNT}/hub/{repo_dir}/snapshots/{release.model_revision}"


def engine_config_name(deployment: ResolvedDeployment) -> str:
    return f"{deployment.name}-engine-config"


def engine_config_map(
    deployment: ResolvedDeployment, dynamo: DynamoVersion, namespace_name: str
) -> dict[str, Any] | None:
    """The files the deployment's workers read from ENGINE_CONFIG_MOUNT (the backend's: an engine config
    per role, or timing data); None when its backend takes everything as flags."""
    backend = deployment.backend
    files = {
        name: content for worker in deployment.workers for name, content in _config_files(worker, deployment).items()
    }
    if not files:
        return None
    config_map: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": engine_config_name(deployment),
            "namespace": namespace_name,
            "labels": common_labels("engine-config") | {DEPLOYMENT_LABEL: deployment.name},
            # The engine these keys are for: the one the release's runtime image carries.
            "annotations": {ENGINE_VERSION: f"{backend.spec.title} {dynamo.spec.engine_versions[backend.name]}"},
        },
    }
    text = {name: content for name, content in files.items() if isinstance(content, str)}
    binary = {name: base64.b64encode(content).decode() for name, content in files.items() if isinstance(content, bytes)}
    if text:
        config_map["data"] = text
    if binary:
        config_map["binaryData"] = binary
    return config_map


def ngc_pull_secret(namespace_name: str, name: str) -> dict[str, Any]:
    """An image pull secret for nvcr.io without its data (the NGC key is a secret the shell adds)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace_name, "labels": common_labels("image-pull")},
        "type": "kubernetes.io/dockerconfigjson",
    }


@dataclass(frozen=True)
class PodExtras:
    """What every worker pod of a graph gets besides its recipe: node placement, the model-cache
    gate (init container + its volume) and image pull secrets."""

    node_selector: dict[str, str] | None  # the pool's nodes; None: a CPU deployment, no pool
    init_container: dict[str, Any]
    init_volume: dict[str, Any]
    image_pull_secrets: list[str]
    with_hf_token: bool
    observed: bool  # observability.enabled: the dashboards and alerts read the workers' metrics
    prometheus: str | None  # the stack's Prometheus (observability.enabled), which a Planner reads
    resources: PodResources  # the frontend's and GPU workers' CPU and memory (configs/pod-resources.yaml)
    tolerations: list[dict[str, Any]] = field(default_factory=lambda: [GPU_TAINT])  # of the pool's taint
    elastic: bool = False  # an elastic pool's: Karpenter must not disrupt a node under a worker


def dynamo_graph_deployment(
    deployment: ResolvedDeployment,
    release: Release,
    dynamo: DynamoVersion,  # the release's graph apiVersion and flags (configs/dynamo/versions.yaml)
    namespace_name: str,
    extras: PodExtras,
    annotations: dict[str, str],  # how `pulumi up` awaits it (core.render.smoke_test)
) -> dict[str, Any]:
    components = [_frontend(deployment, release, dynamo, extras)]
    components += [_worker(worker, deployment, release, dynamo, extras) for worker in deployment.workers]
    if deployment.config.autoscaling is not None:
        # Refused before this without either (core/inputs/rules.py _autoscaling_problems).
        assert dynamo.spec.planner is not None and extras.prometheus is not None
        components.append(
            planner.planner_component(
                deployment,
                release,
                dynamo.spec.planner,
                extras.prometheus,
                extras.resources.planner,
                _pull_secrets(extras),
            )
        )
    if deployment.config.autoscaling is not None:
        annotations = annotations | {COMPONENTS_ANNOTATION: ",".join(sorted(c.name for c in components))}
    metadata = {
        "name": deployment.name,
        "namespace": namespace_name,
        "labels": common_labels("serving")
        | {"gpt-oss-infra/recipe": deployment.recipe_name}
        | (SIMULATED_LABEL if deployment.backend.spec.simulated else {}),
        "annotations": annotations,
    }
    return render_graph(dynamo.spec.graph_api_version, metadata, deployment.backend.spec.framework, components)


def frontend_service_name(deployment_name: str) -> str:
    """The Service the Dynamo operator creates for a graph's Frontend."""
    return f"{deployment_name}-frontend"


def _frontend(
    deployment: ResolvedDeployment, release: Release, dynamo: DynamoVersion, extras: PodExtras
) -> GraphComponent:
    main = {
        "securityContext": pod_security.GRAPH_CONTAINER,
        "image": release.runtime_image,
        "command": ["python3", "-m", "dynamo.frontend"],
        "args": ["--router-mode", deployment.router_mode, "--http-port", str(FRONTEND_PORT)],
        "resources": frontend_resources(deployment, extras.resources.frontend),
    }
    return GraphComponent(
        name="Frontend",
        type="frontend",
        replicas=1,
        runtime_version=_runtime_version(release.runtime_image, dynamo),
        # Our labels, not the operator's (which have changed between releases): NetworkPolicies
        # and monitors select the graph's pods by them.
        labels=worker_labels(deployment.name, FRONTEND_ROLE),
        pod=_pull_secrets(extras) | {"securityContext": pod_security.FRONTEND_POD, "containers": [main]},
    )


def frontend_resources(deployment: ResolvedDeployment, sizing: FrontendResources) -> dict[str, Any]:
    """The frontend's CPU and memory, by the worker pods it serves (configs/pod-resources.yaml says why)."""
    pods = max(1, sum(worker.replicas for worker in deployment.workers))
    memory = pods * sizing.memory_gib_per_worker
    return {
        "requests": {"cpu": str(pods * sizing.cpu_per_worker), "memory": f"{memory}Gi"},
        "limits": {"memory": f"{memory * sizing.memory_limit_factor}Gi"},
    }


def gpu_worker_resources(gpus: int, sizing: GpuWorkerResources) -> dict[str, Any]:
    """A GPU worker's CPU and memory, by its GPUs (configs/pod-resources.yaml says why); its GPUs are the
    component's own resources (core.dynamo_graph)."""
    return {
        "requests": {"cpu": str(gpus * sizing.cpu_per_gpu), "memory": f"{gpus * sizing.memory_gib_per_gpu}Gi"},
        "limits": {"memory": f"{gpus * sizing.memory_limit_gib_per_gpu}Gi"},
    }


def _worker(
    worker: Worker, deployment: ResolvedDeployment, release: Release, dynamo: DynamoVersion, extras: PodExtras
) -> GraphComponent:
    # Workers publish the KV events the frontend's KV router reads, and the metrics the dashboards and
    # the Planner read (its load-based scaling estimates latency from the workers' forward-pass metrics),
    # only when told to (each costs some throughput).
    publish = dynamo.spec.publish_args[deployment.backend.name]
    wanted = [
        *(publish.kv_events if deployment.router_mode == "kv" else []),
        *(publish.metrics if extras.observed or deployment.config.autoscaling is not None else []),
    ]
    publishing = list(dict.fromkeys(wanted))  # one flag may publish both
    files = _config_files(worker, deployment)
    args = deployment.backend.worker_args(
        model_path=model_snapshot_path(release),
        served_model_name=release.model,
        engine=worker.engine,
        role=worker.role,
        config_dir=ENGINE_CONFIG_MOUNT,
        recipe_args=[*worker.args, *publishing],
    )
    env = {"HF_HOME": MODEL_CACHE_MOUNT, "HF_HUB_OFFLINE": "1"} | worker.env
    if worker.scaling is not None and deployment.drain is not None:  # it finishes its requests before it stops
        env[GRACE_PERIOD_VARIABLE] = str(deployment.drain.request_seconds)
    image = worker.efa.image if worker.efa else release.runtime_image
    main: dict[str, Any] = {
        "image": image,
        "command": deployment.backend.spec.command,
        "args": args,
        "env": [{"name": name, "value": value} for name, value in env.items()],
    }
    if files:
        main["volumeMounts"] = [{"name": "engine-config", "mountPath": ENGINE_CONFIG_MOUNT, "readOnly": True}]
    if worker.resources:  # a CPU worker's own requests and limits
        main["resources"] = worker.resources
    elif worker.gpus:
        main["resources"] = gpu_worker_resources(worker.gpus, extras.resources.gpu_worker)
    main["securityContext"] = pod_security.GRAPH_CONTAINER
    # Workers go to their pool's nodes, tolerating its taint; CPU workers without a pool where platform pods go.
    placement = (
        {"nodeSelector": extras.node_selector, "tolerations": extras.tolerations}
        if extras.node_selector is not None
        else {"affinity": SYSTEM_POOL_AFFINITY}
    )
    volumes = [{"name": "engine-config", "configMap": {"name": engine_config_name(deployment)}}] if files else []
    # A worker the Planner stops finishes the requests it holds first (core/resolve/drain.py): its pod has
    # the time its grace period (GRACE_PERIOD_VARIABLE) and the release's own waits take.
    draining = (
        {"terminationGracePeriodSeconds": deployment.drain.grace_seconds}
        if worker.scaling is not None and deployment.drain is not None
        else {}
    )
    pod: dict[str, Any] = (
        _pull_secrets(extras)
        | placement
        | draining
        | {
            # The image the node pulls anyway.
            "initContainers": [pod_security.secured_container(extras.init_container | {"image": image})],
            "volumes": [*volumes, extras.init_volume],
            "containers": [main],
            # No seccomp profile on GPU workers: it blocks TensorRT-LLM's MoE all-to-all (pod_security).
            "securityContext": pod_security.WORKER_POD if worker.gpus else pod_security.FRONTEND_POD,
        }
    )
    if worker.efa:  # privileged, with the image's own user: EFA's memory registration needs it
        main["securityContext"] = worker.efa.pod.security_context
        pod["hostIPC"] = worker.efa.pod.host_ipc
        del pod["securityContext"]
        if worker.efa.apart_from:  # required anti-affinity is symmetric: one side suffices
            pod["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": worker_labels(deployment.name, worker.efa.apart_from)},
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            }
    return GraphComponent(
        name=worker.service_name,
        type=worker.role,
        replicas=worker.replicas,
        labels=worker_labels(deployment.name, worker.role),
        # A changed engine config rolls the workers: the ConfigMap alone would not. On an elastic pool,
        # Karpenter never disrupts a node under a worker (core/render/karpenter.py).
        annotations=({"gpt-oss-infra/engine-config-sha256": _files_sha256(files)} if files else {})
        | (DO_NOT_DISRUPT if extras.elastic else {}),
        pod=pod,
        gpus=worker.gpus,
        # The device plugin hands EFA devices only to pods that request them.
        devices={EFA_RESOURCE: str(worker.efa.devices)} if worker.efa else {},
        shared_memory=WORKER_SHARED_MEMORY if worker.gpus else None,  # else the operator's default
        volume=ModelVolume(MODEL_CACHE_PVC, MODEL_CACHE_MOUNT),
        env_secret=HF_TOKEN_SECRET if extras.with_hf_token else None,
        runtime_version=_runtime_version(image, dynamo),
        scaling_adapter=worker.scaling is not None,
    )


def _runtime_version(image: str, dynamo: DynamoVersion) -> str | None:
    """The release, for a main image whose tag is not exactly it (a digest, a custom build, or an
    -efa variant, whose tag parses as a pre-release of it), where the release's graphs can say so:
    Dynamo's admission asks for it from 1.4 ("Set it also when the parsed tag is not the Dynamo
    runtime version", the CRD's description of the override)."""
    exact = "@" not in image and image.rpartition(":")[2] == dynamo.version
    return dynamo.version if dynamo.spec.runtime_version_override and not exact else None


def _pull_secrets(extras: PodExtras) -> dict[str, Any]:
    if not extras.image_pull_secrets:
        return {}
    return {"imagePullSecrets": [{"name": name} for name in extras.image_pull_secrets]}


def _config_files(worker: Worker, deployment: ResolvedDeployment) -> dict[str, str | bytes]:
    return deployment.backend.config_files(worker.role, worker.engine)


def _files_sha256(files: dict[str, str | bytes]) -> str:
    """Over the files' contents in name order (one file: its own SHA-256)."""
    digest = hashlib.sha256()
    for name in sorted(files):
        content = files[name]
        digest.update(content.encode() if isinstance(content, str) else content)
    return digest.hexdigest()
