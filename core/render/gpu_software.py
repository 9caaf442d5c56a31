"""What makes GPUs (and EFA) schedulable: pinned Helm releases and their values, checked against
each chart's own values before anything is deployed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.dynamo import undeclared_values
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import Chart
from gpt_oss_infra.core.inputs.config import EksClusterConfig, ExistingClusterConfig
from gpt_oss_infra.core.render.labels import GPU_NODE_LABEL, GPU_TAINT

EFA_PLUGIN = "aws-efa-k8s-device-plugin"
DCGM_EXPORTER = "dcgm-exporter"
SYSTEM_NAMESPACE = "kube-system"  # every cluster has it: never the stack's to make or delete


@dataclass(frozen=True)
class ChartRelease:
    chart: Chart
    values: dict[str, Any]
    # It creates Prometheus Operator objects (a ServiceMonitor): install it after the chart that
    # installs their CRDs (kube-prometheus-stack), or it fails.
    after_monitoring: bool = False
    # Helm would install its crds/ on first install only, never upgrading them: another release owns them.
    skips_crds: bool = False


def gpu_software(
    cluster: EksClusterConfig | ExistingClusterConfig,
    charts: dict[str, Chart],
    efa: bool,
    scraped: bool = False,
    gpu_pools: bool = True,
) -> list[ChartRelease]:
    """The device plugin or the GPU Operator (never both), DCGM exporter when asked or when
    Prometheus scrapes GPUs (`scraped`: observability.enabled) and the operator does not bring its
    own, and the EFA device plugin when a pool has EFA. Nothing for a stack without GPU node pools
    (a trial on CPU nodes): its DaemonSets would have no node to run on."""
    if not gpu_pools:
        return []
    placement = {"tolerations": [GPU_TAINT], "nodeSelector": GPU_NODE_LABEL}
    releases = []
    if cluster.resolved_gpu_software == "device-plugin":
        # mofedEnabled is on by default from 0.19 and conflicts with the EFA device plugin.
        releases.append(ChartRelease(charts["nvidia-device-plugin"], placement | {"mofedEnabled": False}))
    elif cluster.resolved_gpu_software == "gpu-operator":
        # The EKS AL2023 NVIDIA AMIs ship the driver and container toolkit already.
        values: dict[str, Any] = {"driver": {"enabled": False}, "toolkit": {"enabled": False}}
        if scraped:  # its own DCGM exporter, whose ServiceMonitor is off by default
            values["dcgmExporter"] = {"serviceMonitor": {"enabled": True}}
        releases.append(ChartRelease(charts["gpu-operator"], values, after_monitoring=scraped))
    if (cluster.dcgm_exporter or scraped) and cluster.resolved_gpu_software != "gpu-operator":
        # Its ServiceMonitor (on by default) only where Prometheus runs: without the CRD it fails.
        values = placement | {"serviceMonitor": {"enabled": scraped}}
        releases.append(ChartRelease(charts[DCGM_EXPORTER], values, after_monitoring=scraped))
    if efa:  # the chart has no tolerations by default: GPU nodes carry the GPU taint
        releases.append(ChartRelease(charts[EFA_PLUGIN], {"tolerations": [GPU_TAINT]}))
    return releases


def chart_problems(releases: list[ChartRelease], efa_instance_types: set[str]) -> list[Problem]:
    """Values a chart does not declare, and EFA instance types its DaemonSet would not run on."""
    problems = []
    for release in releases:
        chart = release.chart
        key = f"configs/charts.yaml: {chart.chart} {chart.version}"
        defaults = chart.default_values()
        problems += [
            Problem(key, f"{path}: not a value this chart declares (vendor/charts/{chart.chart}/{chart.version})")
            for path in undeclared_values(release.values, defaults)
        ]
        if chart.chart == EFA_PLUGIN:
            supported = set(defaults["supportedInstanceLabels"]["values"])
            problems += [
                Problem(key, f"its DaemonSet does not run on {instance_type} (supportedInstanceLabels): no EFA devices")
                for instance_type in sorted(efa_instance_types - supported)
            ]
    return problems


def release_namespaces(releases: list[ChartRelease]) -> list[str]:
    """The namespaces the releases run in, for the stack to make itself on a cluster it does not create.
    Helm's createNamespace makes a namespace that `helm uninstall` never deletes [helm-1464], so on a
    cluster that outlives the stack `pulumi destroy` would leave it (a created cluster takes its
    namespaces with it). kube-system is every cluster's.
      [helm-1464] https://github.com/helm/helm/issues/1464"""
    return sorted({release.chart.namespace for release in releases} - {SYSTEM_NAMESPACE})
