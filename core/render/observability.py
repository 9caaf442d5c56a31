"""observability.enabled: kube-prometheus-stack's values, the PodMonitor that scrapes our graphs,
Grafana dashboards (Dynamo's and one of ours per deployment) and our alert rules, as plain objects.

How a deployment's series are selected: by our own pod labels, not Dynamo's. Our PodMonitor copies
`gpt-oss-infra/deployment` and `gpt-oss-infra/role` of every graph pod onto its series as the target
labels `deployment` and `role` (next to the `namespace` and `pod` every PodMonitor adds). Dynamo's
frontend series carry only `model` and the operator's `dynamo_namespace`, whose value format
(<namespace>-<graph>) is unverified for 1.2.1 and changed between releases. GPU series come from
dcgm-exporter, whose ServiceMonitor (honorLabels false) renames the GPU's pod to `exported_pod`:
they are joined to kube-state-metrics' `kube_pod_labels`, which carries our deployment label
because the values below allow it. Dynamo's own PodMonitors (its operator chart makes them when the
monitoring CRDs exist) would scrape the same pods again, doubling what its dashboard sums per
namespace: turn them off in the platform values (dynamo-operator.dynamo.metrics.podMonitors.enabled).
Metric names: /work/research/issue12/observability/FINDINGS.md
(Dynamo 1.2.1 wheels, dcgm-exporter 4.8.2 counters, kube-state-metrics).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import Field, PositiveFloat, model_validator

from gpt_oss_infra.core.inputs.catalog import Chart, Recipe
from gpt_oss_infra.core.inputs.config import ObservabilityConfig
from gpt_oss_infra.core.mappings import deep_merge
from gpt_oss_infra.core.paths import CONFIG_DIR, VENDOR_DIR
from gpt_oss_infra.core.render import manifests, pod_security
from gpt_oss_infra.core.render.gpu_software import ChartRelease
from gpt_oss_infra.core.render.labels import (
    DEPLOYMENT_LABEL,
    FRONTEND_ROLE,
    ROLE_LABEL,
    SYSTEM_POOL_AFFINITY,
    common_labels,
)
from gpt_oss_infra.core.schema import StrictModel
from gpt_oss_infra.core.yaml_files import read_yaml

MONITORING = "monitoring.coreos.com/v1"
DASHBOARD_LABEL = {"grafana_dashboard": "1"}  # what the Grafana sidecar loads (values below)
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}  # kube-prometheus-stack's default datasource
GRAPH_MONITOR = "gpt-oss-infra-graphs"
Duration = Annotated[str, Field(pattern=r"^\d+(ms|s|m|h|d|w|y)$")]


class AlertFor(StrictModel):
    frontend_down: Duration
    ttft_high: Duration
    download_job_failed: Duration
    gpu_xid_error: Duration
    kv_cache_near_full: Duration


class ObservabilitySettings(StrictModel):
    """configs/observability.yaml: our alert defaults and scrape settings."""

    ttft_p95_seconds: dict[str, PositiveFloat]  # recipe serving mode -> default alert threshold
    kv_cache_near_full: Annotated[float, Field(gt=0, le=1)]
    scrape_interval: Duration
    rate_window: Duration
    for_: Annotated[AlertFor, Field(alias="for")]

    @model_validator(mode="after")
    def _every_mode_has_a_threshold(self) -> ObservabilitySettings:
        modes = set(get_args(Recipe.model_fields["mode"].annotation))
        if set(self.ttft_p95_seconds) != modes:
            raise ValueError(f"ttftP95Seconds needs exactly the serving modes {sorted(modes)}")
        return self


@cache
def load_settings(config_dir: Path = CONFIG_DIR) -> ObservabilitySettings:
    return ObservabilitySettings.model_validate(read_yaml(config_dir / "observability.yaml"))


def default_ttft_p95_seconds(mode: str) -> float:
    """The TTFT p95 alert threshold of a deployment that sets none (alerts.ttftP95Seconds)."""
    return load_settings().ttft_p95_seconds[mode]


@dataclass(frozen=True)
class DeploymentMetrics:
    """What a deployment's dashboard and alerts need."""

    name: str  # deployment (DGD) name; its pods carry gpt-oss-infra/deployment=<name>
    namespace: str  # workloads namespace
    mode: str  # recipe serving mode
    dollars_per_hour: float | None  # the pool's On-Demand $/h share for this deployment (None: unknown)
    ttft_p95_seconds: float  # the alert threshold (config or the mode's default)
    simulated: bool = False  # a simulated engine on CPU nodes (the mocker): no GPU panels, no $ per token


@dataclass(frozen=True)
class ObservabilityObjects:
    namespace: dict[str, Any]  # privileged: node-exporter reads the host (core.render.pod_security)
    release: ChartRelease  # kube-prometheus-stack with its values
    objects: list[dict[str, Any]]  # our PodMonitor, dashboard ConfigMaps, the PrometheusRule


def observability(
    config: ObservabilityConfig,
    chart: Chart,
    block_storage_class: str | None,  # None: the cluster's default StorageClass
    deployments: list[DeploymentMetrics],
    download_job_name: str | None,  # the model download Job (None: none to watch)
    kubernetes_version: str,
    gpu_nodes: bool = True,  # False: no GPU node pool, so no GPU alerts
    created_cluster: bool = True,  # False: a cluster the stack does not create, which outlives it
) -> ObservabilityObjects:
    settings = load_settings()
    objects = [] if not deployments else [_graph_monitor(config.namespace, deployments, settings)]
    objects += [_dashboard_config_map(config.namespace, path.stem, path.read_text()) for path in _vendored_dashboards()]
    objects += [
        _dashboard_config_map(config.namespace, f"dashboard-{d.name}", json.dumps(_dashboard(d, settings)))
        for d in deployments
    ]
    objects.append(_rules(config.namespace, deployments, download_job_name, settings, gpu_nodes))
    in_namespace = chart.model_copy(update={"namespace": config.namespace})  # observability.namespace, not the default
    namespace = manifests.namespace(
        config.namespace, "observability", pod_security.admission_labels(pod_security.PRIVILEGED, kubernetes_version)
    )
    values = _values(config, block_storage_class)
    if not created_cluster:
        values = deep_merge(values, _kubelet_service_in(config.namespace))
    return ObservabilityObjects(namespace, ChartRelease(in_namespace, values), objects)


def _kubelet_service_in(namespace: str) -> dict[str, Any]:
    """The Service through which Prometheus scrapes the kubelets, which the Prometheus Operator (not Helm) makes and
    keeps, in `namespace`: in kube-system, the chart's default, it outlives `helm uninstall` and the stack's
    namespaces on a cluster that outlives the stack. The kubelet ServiceMonitor looks for it there (kube-prometheus-
    stack 88.5.3: the operator's --kubelet-service is prometheusOperator.kubeletService.namespace, the
    monitor's namespaceSelector kubelet.namespace)."""
    return {"prometheusOperator": {"kubeletService": {"namespace": namespace}}, "kubelet": {"namespace": namespace}}


def _values(config: ObservabilityConfig, block_storage_class: str | None) -> dict[str, Any]:
    system = {"affinity": SYSTEM_POOL_AFFINITY}
    volume = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": config.storage_size}}}
    if block_storage_class:
        volume["storageClassName"] = block_storage_class
    return {
        "prometheus": {
            "prometheusSpec": system
            | {
                # Dynamo's and dcgm-exporter's monitors and our rules carry no `release` label: with
                # these false Prometheus selects every monitor and rule, in every namespace.
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "podMonitorSelectorNilUsesHelmValues": False,
                "ruleSelectorNilUsesHelmValues": False,
                "probeSelectorNilUsesHelmValues": False,
                "scrapeConfigSelectorNilUsesHelmValues": False,
                "retention": config.retention,
                "storageSpec": {"volumeClaimTemplate": {"spec": volume}},
            }
        },
        "alertmanager": {"alertmanagerSpec": system},
        "prometheusOperator": system | {"admissionWebhooks": {"patch": system}},  # patch: the cert Job
        # No adminPassword and no admin.existingSecret, on purpose: the grafana chart (12.11.1,
        # templates/_config.tpl `grafana.secretsData`, _helpers.tpl `grafana.password`) then writes a
        # random 40-character password into the Secret <release>-grafana and, on every upgrade, reads
        # it back from that Secret (Helm `lookup`, which helm.v3.Release runs against the cluster).
        # kube-prometheus-stack 88.5.3 no longer sets the old "prom-operator" default.
        "grafana": system
        | {
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": next(iter(DASHBOARD_LABEL)),
                    "labelValue": DASHBOARD_LABEL["grafana_dashboard"],
                    "searchNamespace": "ALL",
                }
            }
        },
        # kube_pod_labels carries our deployment label only when allowed: the GPU panels join on it.
        "kube-state-metrics": system | {"metricLabelsAllowlist": [f"pods=[{DEPLOYMENT_LABEL}]"]},
        # A DaemonSet that must run on every node, GPU nodes (tainted) included: the chart's own
        # default stated, so that an upgrade changing it does not take node metrics off GPU nodes.
        "prometheus-node-exporter": {"tolerations": [{"operator": "Exists", "effect": "NoSchedule"}]},
    }


def _graph_monitor(
    namespace: str, deployments: list[DeploymentMetrics], settings: ObservabilitySettings
) -> dict[str, Any]:
    """Scrapes our graphs' frontends (port `http`) and workers (the system status server, port
    `system`), with our deployment and role labels on every series."""
    relabelings = [
        {
            "action": "replace",
            "sourceLabels": [f"__meta_kubernetes_pod_label_{_label_name(label)}"],
            "targetLabel": target,
        }
        for label, target in ((DEPLOYMENT_LABEL, "deployment"), (ROLE_LABEL, "role"))
    ]
    return {
        "apiVersion": MONITORING,
        "kind": "PodMonitor",
        "metadata": {"name": GRAPH_MONITOR, "namespace": namespace, "labels": common_labels("observability")},
        "spec": {
            "namespaceSelector": {"matchNames": sorted({d.namespace for d in deployments})},
            "selector": {
                "matchExpressions": [
                    {"key": DEPLOYMENT_LABEL, "operator": "In", "values": sorted(d.name for d in deployments)}
                ]
            },
            "podMetricsEndpoints": [
                {"port": port, "path": "/metrics", "interval": settings.scrape_interval, "relabelings": relabelings}
                for port in ("http", "system")
            ],
        },
    }


def _label_name(label: str) -> str:
    """A Kubernetes label key as Prometheus and kube-state-metrics spell it in label names: every
    character not alphanumeric becomes `_`."""
    return "".join(c if c.isalnum() else "_" for c in label)


def _vendored_dashboards() -> list[Path]:
    return sorted((VENDOR_DIR / "dashboards").glob("*/*.json"))


def _dashboard_config_map(namespace: str, name: str, dashboard_json: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"grafana-{name}",
            "namespace": namespace,
            "labels": common_labels("observability") | DASHBOARD_LABEL,
        },
        "data": {f"{name}.json": dashboard_json},
    }


def _selector(d: DeploymentMetrics, **extra: str) -> str:
    labels = {"namespace": d.namespace, "deployment": d.name} | extra
    return "{" + ", ".join(f'{key}="{value}"' for key, value in labels.items()) + "}"


def _output_tokens_per_second(d: DeploymentMetrics, window: str) -> str:
    return f"sum(rate(dynamo_frontend_output_tokens_total{_selector(d)}[{window}]))"


def _quantile(q: float, histogram: str, d: DeploymentMetrics, window: str) -> str:
    return f"histogram_quantile({q}, sum by (le) (rate({histogram}_bucket{_selector(d)}[{window}])))"


def _kv_cache_usage(d: DeploymentMetrics) -> str:
    """Per worker pod, the fraction of its KV blocks in use (0..1 despite the metric's name)."""
    return f"max by (pod) (dynamo_component_gpu_cache_usage_percent{_selector(d)})"


def _on_deployment_gpus(series: str, d: DeploymentMetrics) -> str:
    """DCGM series of the GPUs the deployment's pods hold: kube_pod_labels (renamed to the
    exported_* labels dcgm-exporter's series carry) selects them."""
    pods = f'kube_pod_labels{{namespace="{d.namespace}", label_{_label_name(DEPLOYMENT_LABEL)}="{d.name}"}}'
    for target, source in (("exported_namespace", "namespace"), ("exported_pod", "pod")):
        pods = f'label_replace({pods}, "{target}", "$1", "{source}", "(.*)")'
    match = "exported_namespace, exported_pod"
    return f"{series} * on ({match}) group_left () max by ({match}) ({pods})"


def dollars_per_million_tokens_expr(d: DeploymentMetrics, window: str) -> str | None:
    """$ per million output tokens = $/h / (3600 s/h * tokens/s) * 1e6; None when the price is unknown."""
    if d.dollars_per_hour is None:
        return None
    return f"{d.dollars_per_hour * 1e6 / 3600!r} / {_output_tokens_per_second(d, window)}"


def _dashboard(d: DeploymentMetrics, settings: ObservabilitySettings) -> dict[str, Any]:
    w = settings.rate_window
    used = "DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)"
    panels = [
        ("Output tokens/s", "short", [(_output_tokens_per_second(d, w), "tokens/s")]),
        (
            "Time to first token",
            "s",
            [
                (_quantile(q, "dynamo_frontend_time_to_first_token_seconds", d, w), f"p{q * 100:.0f}")
                for q in (0.5, 0.95)
            ],
        ),
        (
            "Inter-token latency",
            "s",
            [
                (_quantile(q, "dynamo_frontend_inter_token_latency_seconds", d, w), f"p{q * 100:.0f}")
                for q in (0.5, 0.95)
            ],
        ),
        (
            "Requests in flight and queued",
            "short",
            [
                (f"sum(dynamo_frontend_inflight_requests{_selector(d)})", "in flight"),
                (f"sum(dynamo_frontend_queued_requests{_selector(d)})", "queued"),
            ],
        ),
        ("KV-cache usage", "percentunit", [(_kv_cache_usage(d), "{{pod}}")]),
    ]
    if not d.simulated:
        panels += [
            (
                "GPU utilisation",
                "percent",
                [(_on_deployment_gpus("DCGM_FI_DEV_GPU_UTIL", d), "{{Hostname}} GPU {{gpu}}")],
            ),
            ("GPU memory used", "percentunit", [(_on_deployment_gpus(f"({used})", d), "{{Hostname}} GPU {{gpu}}")]),
        ]
    dashboard_panels = [_timeseries(title, unit, targets, i) for i, (title, unit, targets) in enumerate(panels)]
    cost = dollars_per_million_tokens_expr(d, w)
    position = _grid(len(panels))
    if cost is None:  # a simulated engine, or no On-Demand price for the pool (a Capacity Block, an unpriced type)
        why = (
            "a simulated engine (Dynamo's mocker) on CPU nodes: its tokens and latencies are simulated, not a GPU's"
            if d.simulated
            else "no On-Demand price for this deployment's pool"
        )
        dashboard_panels.append(
            {
                "type": "text",
                "title": "$ per million output tokens",
                "gridPos": position,
                "options": {"mode": "markdown", "content": f"**{'none' if d.simulated else 'unknown'}**: {why}"},
            }
        )
    else:
        dashboard_panels.append(
            {
                "type": "stat",
                "title": "$ per million output tokens (On-Demand)",
                "gridPos": position,
                "datasource": DATASOURCE,
                "fieldConfig": {"defaults": {"unit": "currencyUSD"}, "overrides": []},
                "targets": [{"refId": "A", "expr": cost, "datasource": DATASOURCE}],
            }
        )
    return {
        "uid": f"gpt-oss-{d.name}"[:40],  # Grafana's limit
        "title": f"gpt-oss-infra: {d.name} ({d.mode})",
        "tags": ["gpt-oss-infra"],
        "schemaVersion": 39,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "panels": dashboard_panels,
    }


def _grid(index: int) -> dict[str, int]:
    return {"x": (index % 2) * 12, "y": (index // 2) * 8, "w": 12, "h": 8}


def _timeseries(title: str, unit: str, targets: list[tuple[str, str]], index: int) -> dict[str, Any]:
    return {
        "type": "timeseries",
        "title": title,
        "gridPos": _grid(index),
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {"refId": chr(ord("A") + i), "expr": expr, "legendFormat": legend, "datasource": DATASOURCE}
            for i, (expr, legend) in enumerate(targets)
        ],
    }


def _alert(name: str, expr: str, wait: str, severity: str, summary: str, runbook: str, **labels: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": wait,
        "labels": {"severity": severity} | labels,
        "annotations": {"summary": summary, "runbook": runbook},
    }


def _rules(
    namespace: str,
    deployments: list[DeploymentMetrics],
    download_job_name: str | None,
    settings: ObservabilitySettings,
    gpu_nodes: bool,
) -> dict[str, Any]:
    wait = settings.for_
    gpu_alerts = [
        # The gauge holds the last Xid code until the exporter restarts, so `> 0` would fire for
        # ever after one error: this fires when the code changes (a new Xid) and resolves after the
        # window. A repeat of the same code does not change it: the dashboard shows the gauge.
        _alert(
            "GpuXidError",
            "changes(DCGM_FI_DEV_XID_ERRORS[15m]) > 0 and DCGM_FI_DEV_XID_ERRORS > 0",
            wait.gpu_xid_error,
            "critical",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported a new Xid error",
            "Look the Xid up in https://docs.nvidia.com/deploy/xid-errors/; kubectl describe node "
            "{{ $labels.Hostname }}; cordon and drain the node when the Xid calls for a GPU reset.",
        )
    ]
    cluster = gpu_alerts if gpu_nodes else []
    if download_job_name:
        cluster.append(
            _alert(
                "ModelDownloadFailed",
                f'kube_job_failed{{job_name="{download_job_name}", condition="true"}} > 0',
                wait.download_job_failed,
                "critical",
                "The model download Job {{ $labels.namespace }}/{{ $labels.job_name }} failed",
                "kubectl -n {{ $labels.namespace }} logs job/{{ $labels.job_name }}: check the Hugging Face "
                "token and the model cache volume's free space; `pulumi up` runs the Job again.",
            )
        )
    groups = [{"name": "gpt-oss-infra-cluster", "rules": cluster}]
    for d in deployments:
        frontend = _selector(d, role=FRONTEND_ROLE)
        pods = f"kubectl -n {d.namespace} get pods -l {DEPLOYMENT_LABEL}={d.name}"
        rules = [
            _alert(
                "GptOssFrontendDown",
                f"max(up{frontend}) == 0 or absent(up{frontend})",
                wait.frontend_down,
                "critical",
                f"The frontend of {d.name} is not being scraped: down or not running",
                f"{pods},{ROLE_LABEL}={FRONTEND_ROLE}; kubectl describe and logs of that pod.",
                deployment=d.name,
            ),
            _alert(
                "GptOssTtftP95High",
                f"{_quantile(0.95, 'dynamo_frontend_time_to_first_token_seconds', d, settings.rate_window)}"
                f" > {d.ttft_p95_seconds}",
                wait.ttft_high,
                "warning",
                f"TTFT p95 of {d.name} is {{{{ $value | humanizeDuration }}}}, above {d.ttft_p95_seconds}s",
                f"Grafana dashboard 'gpt-oss-infra: {d.name} ({d.mode})': queued requests and KV-cache usage. Add "
                "replicas, or raise deployments.<name>.alerts.ttftP95Seconds if the load is expected.",
                deployment=d.name,
            ),
            _alert(
                "GptOssKvCacheNearFull",
                f"{_kv_cache_usage(d)} > {settings.kv_cache_near_full}",
                wait.kv_cache_near_full,
                "warning",
                f"KV cache of {{{{ $labels.pod }}}} ({d.name}) is {{{{ $value | humanizePercentage }}}} full",
                f"{pods}; requests queue once it is full: add worker replicas or lower the load.",
                deployment=d.name,
            ),
        ]
        groups.append({"name": f"gpt-oss-infra-{d.name}", "rules": rules})
    return {
        "apiVersion": MONITORING,
        "kind": "PrometheusRule",
        "metadata": {"name": "gpt-oss-infra", "namespace": namespace, "labels": common_labels("observability")},
        "spec": {"groups": groups},
    }
