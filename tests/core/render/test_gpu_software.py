"""core/render/gpu_software.py: the pinned EFA device plugin runs on every EFA instance type we use; the
releases' namespaces a stack makes itself."""

from __future__ import annotations

import yaml

from gpt_oss_infra.core.inputs.catalog import Chart
from gpt_oss_infra.core.inputs.config import EksClusterConfig
from gpt_oss_infra.core.render.gpu_software import ChartRelease, chart_problems, gpu_software, release_namespaces


def test_the_pinned_efa_plugin_runs_on_every_efa_instance_type_of_the_catalog(catalog):
    efa_types = {
        name
        for hardware in catalog.hardware.values()
        for name, instance in hardware.instance_types.items()
        if instance.efa_interfaces > 0
    }
    assert {"p6e-gb200.36xlarge", "p6-b200.48xlarge", "p5.48xlarge"} <= efa_types
    plugin = ChartRelease(catalog.charts["aws-efa-k8s-device-plugin"], {"tolerations": []})
    assert chart_problems([plugin], efa_types) == []


def test_an_efa_plugin_without_the_instance_type_is_refused(catalog, tmp_path):
    """0.5.10, pinned before, lacked p6e-gb200.36xlarge: its DaemonSet would never start there."""
    chart = catalog.charts["aws-efa-k8s-device-plugin"]
    values = chart.default_values()
    values["supportedInstanceLabels"]["values"].remove("p6e-gb200.36xlarge")
    folder = tmp_path / "charts" / chart.chart / chart.version
    folder.mkdir(parents=True)
    (folder / "values.yaml").write_text(yaml.safe_dump(values))

    class Vendored(Chart):  # the same chart, its values read from tmp_path
        def default_values(self, config_dir=tmp_path):
            return super().default_values(config_dir)

    broken = Vendored.model_validate(chart.model_dump(by_alias=True))
    (problem,) = chart_problems([ChartRelease(broken, {})], {"p6e-gb200.36xlarge", "p6-b200.48xlarge"})
    assert problem.key == "configs/charts.yaml: aws-efa-k8s-device-plugin v0.5.30"
    assert "does not run on p6e-gb200.36xlarge" in problem.message


def test_the_dcgm_exporter_servicemonitor_only_where_prometheus_runs(catalog):
    """Its chart's ServiceMonitor is on by default and fails without the CRD: on only when
    observability installs Prometheus, and then installed after it."""
    cluster = EksClusterConfig.model_validate({"kind": "eks", "name": "c", "dcgmExporter": True})
    alone = {r.chart.chart: r for r in gpu_software(cluster, catalog.charts, efa=False)}["dcgm-exporter"]
    assert alone.values["serviceMonitor"] == {"enabled": False} and not alone.after_monitoring
    scraped = {r.chart.chart: r for r in gpu_software(cluster, catalog.charts, efa=False, scraped=True)}
    assert scraped["dcgm-exporter"].values["serviceMonitor"] == {"enabled": True}
    assert scraped["dcgm-exporter"].after_monitoring and not scraped["nvidia-device-plugin"].after_monitoring


def test_the_gpu_operators_namespace_is_made_once_and_kube_system_never(catalog):
    """kube-system, where the EFA device plugin runs, is every cluster's: the stack neither makes nor deletes it."""
    cluster = EksClusterConfig.model_validate({"kind": "eks", "name": "c", "gpuSoftware": "gpu-operator"})
    releases = gpu_software(cluster, catalog.charts, efa=True, scraped=True)
    assert [release.chart.namespace for release in releases] == ["gpu-operator", "kube-system"]
    assert release_namespaces([*releases, releases[0]]) == ["gpu-operator"]
