"""Dynamo's SLA Planner for a deployment with `autoscaling`, rendered as the release's own code renders
it (ai-dynamo 1.6.1, dynamo/profiler/utils/dgd_generation.py: add_planner_to_config,
enable_planner_worker_scaling_adapters): a `Planner` component of the release's Planner image that runs
`python3 -m dynamo.planner --config <dir>/planner_config.json`, its config as a ConfigMap mounted at
that directory, and the workers it scales opted into the DynamoGraphDeploymentScalingAdapter, through
whose scale subresource it sets their replicas. tests/tools/test_planner_upstream.py runs that upstream
code on the same graph and compares.

What the Planner is told (its PlannerConfig fields, checked by the release's own model in the tests):
- `optimization_target: sla` with load-based scaling, its reactive loop: every
  load_adjustment_interval_seconds it estimates each role's latency from the workers' live forward-pass
  metrics and scales to keep TTFT and ITL within the targets. Its predictive throughput loop is off:
  it needs a performance model from a pre-deployment sweep (`pre_deployment_sweeping_mode`), which no
  recipe here has run.
- min_endpoint (per role when disaggregated) and max_gpu_budget: the deployment's bounds, the budget
  the roles' maxima times their GPUs (the Planner 1.6.1 bounds the total, not each role's maximum).

Where it reads its metrics: the workers' forward-pass metrics through Dynamo's runtime (the workers
publish them: core/render/manifests.py), and the frontend's in the stack's Prometheus (observability.enabled,
which scrapes them; its KV hit rate). Its ServiceAccount and RBAC are the operator's (planner-serviceaccount,
bound in the graph's namespace), as are DYN_PARENT_DGD_K8S_NAME and DYN_NAMESPACE, which it reads; the
program adds what it reads to take back a scale-up whose workers stay Pending (planner_access).

The scaled workers' `replicas` are left out of the graph (core/dynamo_graph.py). That relies on two things
of Dynamo's operator (read on its main branch of August 2026, not at the 1.6.1 tag): its defaulting webhook
sets a missing `replicas` to 1 on every create and update (defaultComponentFields), and the scaling adapter
starts from the graph's count (1 when unset). The 1.6.1 Planner reads a missing count as 0 and would wait
for it, so without that webhook it would not start.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gpt_oss_infra.core.dynamo import PlannerRelease
from gpt_oss_infra.core.dynamo_graph import GraphComponent
from gpt_oss_infra.core.inputs.config import Release
from gpt_oss_infra.core.render import pod_security
from gpt_oss_infra.core.render.labels import DEPLOYMENT_LABEL, SYSTEM_POOL_AFFINITY, common_labels, worker_labels
from gpt_oss_infra.core.render.rbac import granted
from gpt_oss_infra.core.resolve.autoscaling import AGGREGATED_ROLE
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment, Worker

PLANNER_ROLE = "planner"
PLANNER_COMPONENT = "Planner"  # the name the release's own graphs give it
CONFIG_FILE = "planner_config.json"
CONFIG_SHA256 = "gpt-oss-infra/planner-config-sha256"
# kube-prometheus-stack's Prometheus Service for the release name the observability stack installs it
# under (components/observability_resources.py: the chart's name): <release>-prometheus, port 9090
# (the chart's templates/prometheus/service.yaml; its fullname is the release name when that contains
# the chart's name).
PROMETHEUS_SERVICE = "kube-prometheus-stack-prometheus"
# The ServiceAccount Dynamo's operator gives every Planner pod (its PlannerServiceAccountName), and the
# plural of the DynamoGraphDeploymentScalingAdapter, whose scale subresource the Planner reads and sets.
PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"
SCALING_ADAPTERS = "dynamographdeploymentscalingadapters"
PROMETHEUS_PORT = 9090


def planner_config_name(deployment_name: str) -> str:
    return f"{deployment_name}-planner-config"


def prometheus_url(monitoring_namespace: str) -> str:
    return f"http://{PROMETHEUS_SERVICE}.{monitoring_namespace}.svc.cluster.local:{PROMETHEUS_PORT}"


def planner_settings(deployment: ResolvedDeployment, release: Release) -> dict[str, Any]:
    """The PlannerConfig fields this deployment sets (the Planner's defaults for the rest)."""
    autoscaling = deployment.config.autoscaling
    assert autoscaling is not None, "a Planner only for a deployment with autoscaling"
    scaled = _scaled(deployment)
    settings: dict[str, Any] = {
        "environment": "kubernetes",
        "backend": deployment.backend.name,
        "mode": "agg" if set(scaled) == {AGGREGATED_ROLE} else "disagg",
        "optimization_target": "sla",
        "pre_deployment_sweeping_mode": "none",
        "enable_load_scaling": True,
        "enable_throughput_scaling": False,
        "ttft_ms": autoscaling.ttft_ms,
        "itl_ms": autoscaling.itl_ms,
        "model_name": release.model,
        "max_gpu_budget": sum(worker.most_replicas * _gpus(worker) for worker in scaled.values()),
    }
    if AGGREGATED_ROLE in scaled:
        worker = scaled[AGGREGATED_ROLE]
        return settings | {"min_endpoint": _min(worker), "decode_engine_num_gpu": _gpus(worker)}
    for role, worker in scaled.items():
        settings |= {f"{role}_min_endpoint": _min(worker), f"{role}_engine_num_gpu": _gpus(worker)}
    return settings


def planner_config_map(deployment: ResolvedDeployment, release: Release, namespace_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": planner_config_name(deployment.name),
            "namespace": namespace_name,
            "labels": common_labels("planner-config") | {DEPLOYMENT_LABEL: deployment.name},
        },
        "data": {CONFIG_FILE: _config_text(deployment, release)},
    }


def _config_text(deployment: ResolvedDeployment, release: Release) -> str:
    return json.dumps(planner_settings(deployment, release), indent=2, sort_keys=True) + "\n"


def planner_component(
    deployment: ResolvedDeployment,
    release: Release,
    planner: PlannerRelease,
    prometheus: str,
    resources: dict[str, Any],
    pull_secrets: dict[str, Any],
) -> GraphComponent:
    """The graph's Planner: on the system nodes, like the frontend; `prometheus`: the URL it queries."""
    volume = planner_config_name(deployment.name)
    main = {
        "securityContext": pod_security.GRAPH_CONTAINER,
        "image": planner.image,
        "workingDir": planner.working_directory,
        "command": ["python3", "-m", "dynamo.planner"],
        "args": ["--config", f"{planner.config_directory}/{CONFIG_FILE}"],
        "env": [{"name": "PROMETHEUS_ENDPOINT", "value": prometheus}],
        "volumeMounts": [{"name": volume, "mountPath": planner.config_directory, "readOnly": True}],
        "resources": resources,
    }
    return GraphComponent(
        name=PLANNER_COMPONENT,
        type=PLANNER_ROLE,
        replicas=1,
        labels=worker_labels(deployment.name, PLANNER_ROLE),
        # A changed config restarts the Planner, which reads it once: the ConfigMap alone would not.
        annotations={CONFIG_SHA256: hashlib.sha256(_config_text(deployment, release).encode()).hexdigest()},
        pod=pull_secrets
        | {
            "affinity": SYSTEM_POOL_AFFINITY,
            "securityContext": pod_security.FRONTEND_POD,
            "volumes": [{"name": volume, "configMap": {"name": volume}}],
            "containers": [main],
        },
    )


def planner_access(deployment: ResolvedDeployment, namespace_name: str) -> list[dict[str, Any]]:
    """A Role and its RoleBinding that let the graph's Planner list the pods of its namespace and read its
    workers' scaling adapters' scale. While a worker is Pending (no node for it) the 1.6.1 Planner ignores
    every scaling but one: taking that scale-up back, which it may do only once it has listed the graph's
    pods and read the adapters' scale (dynamo/planner/connectors/kubernetes.py: set_component_replicas,
    _list_startup_pods; clients/kubernetes_api.py: get_service_replica_target). Without pods/list it logs
    "startup cancellation is disabled until pods/list is granted" and holds the GPUs it asked for until the
    worker is scheduled. Dynamo's chart grants pods/list only with dynamo-operator.planner.powerAwareness
    (read on its main branch of August 2026), to every Planner of the installation; this grants it to the
    Planners of one namespace."""
    metadata = {
        "name": f"{deployment.name}-planner-reader",
        "namespace": namespace_name,
        "labels": common_labels("planner-access") | {DEPLOYMENT_LABEL: deployment.name},
    }
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
        {"apiGroups": ["nvidia.com"], "resources": [f"{SCALING_ADAPTERS}/scale"], "verbs": ["get"]},
    ]
    return granted("Role", metadata, rules, PLANNER_SERVICE_ACCOUNT, namespace_name)


def _scaled(deployment: ResolvedDeployment) -> dict[str, Worker]:
    return {worker.role: worker for worker in deployment.workers if worker.scaling is not None}


def _min(worker: Worker) -> int:
    assert worker.scaling is not None
    return worker.scaling.min_replicas


def _gpus(worker: Worker) -> int:
    """A worker's GPUs as the Planner budgets them: a CPU worker (the trial's mocker) counts as one."""
    return max(worker.gpus, 1)
