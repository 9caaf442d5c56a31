"""core/render/observability.py: kube-prometheus-stack values the chart declares, monitors and rules
its CRDs accept, dashboards and alerts on metrics that exist."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from gpt_oss_infra.core.checks.validation import vendored_validators
from gpt_oss_infra.core.inputs.config import ObservabilityConfig
from gpt_oss_infra.core.render.gpu_software import ChartRelease, chart_problems
from gpt_oss_infra.core.render.labels import GPU_TAINT, SYSTEM_POOL_AFFINITY
from gpt_oss_infra.core.render.observability import (
    DeploymentMetrics,
    default_ttft_p95_seconds,
    dollars_per_million_tokens_expr,
    load_settings,
    observability,
)

# Every metric name a dashboard may query, as /work/research/issue12/observability/FINDINGS.md found
# them: Dynamo 1.2.1 (section 2, from the ai-dynamo-runtime 1.2.1 wheel's prometheus_names.py),
# DCGM (section 4, dcgm-exporter 4.8.2's default counters), kube-state-metrics' kube_pod_labels
# (section 5), and what the vendored Dynamo dashboard queries besides (vendor/dashboards/SOURCES.md:
# node-exporter and cAdvisor series of kube-prometheus-stack).
HISTOGRAMS = {  # each is the series <name>_bucket, _sum and _count
    "dynamo_frontend_time_to_first_token_seconds",
    "dynamo_frontend_inter_token_latency_seconds",
    "dynamo_frontend_request_duration_seconds",
    "dynamo_frontend_input_sequence_tokens",
    "dynamo_frontend_output_sequence_tokens",
}
KNOWN_METRICS = {f"{name}_{suffix}" for name in HISTOGRAMS for suffix in ("bucket", "sum", "count")} | {
    "dynamo_frontend_requests_total",
    "dynamo_frontend_inflight_requests",
    "dynamo_frontend_queued_requests",
    "dynamo_frontend_output_tokens_total",
    "dynamo_component_gpu_cache_usage_percent",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_XID_ERRORS",
    "kube_pod_labels",
    "node_cpu_seconds_total",
    "node_load1",
    "node_load5",
    "container_cpu_usage_seconds_total",
    "container_memory_working_set_bytes",
}

PRICED = DeploymentMetrics("gpt-oss", "workloads", "aggregated", dollars_per_hour=98.32, ttft_p95_seconds=3.5)
UNPRICED = DeploymentMetrics("gpt-oss-cb", "workloads", "disaggregated", dollars_per_hour=None, ttft_p95_seconds=1.0)
CONFIG = ObservabilityConfig.model_validate({"enabled": True, "retention": "30d", "storageSize": "80Gi"})


@pytest.fixture
def rendered(catalog):
    return observability(
        CONFIG, catalog.charts["kube-prometheus-stack"], "gp3", [PRICED, UNPRICED], "model-download", "1.33"
    )


def _kind(rendered, kind):
    return [o for o in rendered.objects if o["kind"] == kind]


def _dashboards(rendered):
    return {name: json.loads(text) for o in _kind(rendered, "ConfigMap") for name, text in o["data"].items()}


def _alerts(rendered):
    (rule,) = _kind(rendered, "PrometheusRule")
    return [(group["name"], r) for group in rule["spec"]["groups"] for r in group["rules"]]


def test_the_values_are_ones_the_chart_and_its_subcharts_declare(rendered):
    assert chart_problems([rendered.release], set()) == []


def test_on_a_cluster_the_stack_does_not_create_the_kubelet_service_goes_in_the_stacks_namespace(catalog, rendered):
    """The Prometheus Operator makes the Service it scrapes the kubelets through, in kube-system by default, where
    it outlived `destroy` on an existing cluster (a reviewer's). There it goes in the observability namespace,
    with the ServiceMonitor that looks for it; a created cluster's, which goes with the cluster, is unchanged."""
    existing = observability(
        CONFIG,
        catalog.charts["kube-prometheus-stack"],
        "gp3",
        [PRICED],
        "model-download",
        "1.33",
        created_cluster=False,
    )
    values = existing.release.values
    assert values["prometheusOperator"]["kubeletService"] == {"namespace": CONFIG.namespace}
    assert values["kubelet"] == {"namespace": CONFIG.namespace}
    assert values["prometheusOperator"]["affinity"] == SYSTEM_POOL_AFFINITY  # merged with, not instead of
    assert chart_problems([existing.release], set()) == []
    assert "kubeletService" not in rendered.release.values["prometheusOperator"]
    assert "kubelet" not in rendered.release.values


def test_a_value_the_chart_does_not_declare_is_refused(rendered):
    values = rendered.release.values | {"grafana": rendered.release.values["grafana"] | {"adminPasword": "x"}}
    (problem,) = chart_problems([ChartRelease(rendered.release.chart, values)], set())
    assert problem.key == "configs/charts.yaml: kube-prometheus-stack 88.5.3"
    assert problem.message.startswith("grafana.adminPasword: not a value this chart declares")


def test_every_component_prefers_the_system_pool_and_node_exporter_runs_on_gpu_nodes(rendered):
    values = rendered.release.values
    for placed in (
        values["prometheus"]["prometheusSpec"],
        values["alertmanager"]["alertmanagerSpec"],
        values["prometheusOperator"],
        values["prometheusOperator"]["admissionWebhooks"]["patch"],
        values["grafana"],
        values["kube-state-metrics"],
    ):
        assert placed["affinity"] == SYSTEM_POOL_AFFINITY
    assert "affinity" not in values["prometheus-node-exporter"]  # a DaemonSet: every node
    assert any(
        t["operator"] == "Exists" and t.get("key", GPU_TAINT["key"]) == GPU_TAINT["key"] and t["effect"] == "NoSchedule"
        for t in values["prometheus-node-exporter"]["tolerations"]
    )


def test_prometheus_selects_every_monitor_and_keeps_its_data_on_block_storage(rendered, catalog):
    spec = rendered.release.values["prometheus"]["prometheusSpec"]
    assert all(spec[f"{kind}SelectorNilUsesHelmValues"] is False for kind in ("serviceMonitor", "podMonitor", "rule"))
    assert spec["retention"] == "30d"
    volume = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert volume == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "80Gi"}}} | {
        "storageClassName": "gp3"
    }
    default_class = observability(CONFIG, catalog.charts["kube-prometheus-stack"], None, [], None, "1.33")
    assert (
        "storageClassName"
        not in (
            default_class.release.values["prometheus"]["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]
        )
    )


def test_grafana_generates_its_admin_password(rendered):
    """Neither our values nor the chart's defaults set one: the grafana chart generates it."""
    defaults = rendered.release.chart.default_values()["grafana"]
    for grafana in (rendered.release.values["grafana"], defaults):
        assert "adminPassword" not in grafana
        assert not grafana.get("admin", {}).get("existingSecret")
    assert "prom-operator" not in json.dumps(defaults)


def test_dashboards_are_labelled_for_the_sidecar_and_query_only_known_metrics(rendered):
    sidecar = rendered.release.values["grafana"]["sidecar"]["dashboards"]
    for config_map in _kind(rendered, "ConfigMap"):
        assert config_map["metadata"]["namespace"] == "monitoring"
        assert config_map["metadata"]["labels"][sidecar["label"]] == sidecar["labelValue"]
    dashboards = _dashboards(rendered)
    assert set(dashboards) == {"dynamo-dashboard.json", "dashboard-gpt-oss.json", "dashboard-gpt-oss-cb.json"}
    for name, dashboard in dashboards.items():
        metrics = {m for expr in _exprs(dashboard) for m in _metrics(expr)}
        assert metrics and metrics <= KNOWN_METRICS, (name, metrics - KNOWN_METRICS)


def test_our_dashboard_has_every_panel_for_its_deployment_only(rendered):
    ours = _dashboards(rendered)["dashboard-gpt-oss.json"]
    titles = [panel["title"] for panel in ours["panels"]]
    assert titles == [
        "Output tokens/s",
        "Time to first token",
        "Inter-token latency",
        "Requests in flight and queued",
        "KV-cache usage",
        "GPU utilisation",
        "GPU memory used",
        "$ per million output tokens (On-Demand)",
    ]
    for expr in _exprs(ours):
        assert 'deployment="gpt-oss"' in expr or 'label_gpt_oss_infra_deployment="gpt-oss"' in expr, expr


def test_dollars_per_million_output_tokens(rendered):
    expr = dollars_per_million_tokens_expr(PRICED, "5m")
    constant, tokens_per_second = expr.split(" / ", 1)
    assert (
        tokens_per_second
        == 'sum(rate(dynamo_frontend_output_tokens_total{namespace="workloads", deployment="gpt-oss"}[5m]))'
    )
    # 98.32 $/h at 10,000 output tokens/s: 36 million tokens an hour, 2.7311 $ per million
    assert float(constant) / 10_000 == pytest.approx(98.32 / (3600 * 10_000) * 1e6) == pytest.approx(2.7311, abs=1e-4)
    unknown = _dashboards(rendered)["dashboard-gpt-oss-cb.json"]["panels"][-1]
    assert unknown["type"] == "text" and "unknown" in unknown["options"]["content"]


def test_alerts_watch_the_right_metrics_with_their_thresholds(rendered):
    settings = load_settings()
    alerts = {(group, rule["alert"]): rule for group, rule in _alerts(rendered)}
    xid = alerts["gpt-oss-infra-cluster", "GpuXidError"]
    assert xid["expr"] == "changes(DCGM_FI_DEV_XID_ERRORS[15m]) > 0 and DCGM_FI_DEV_XID_ERRORS > 0"  # a new Xid
    download = alerts["gpt-oss-infra-cluster", "ModelDownloadFailed"]
    assert download["expr"] == 'kube_job_failed{job_name="model-download", condition="true"} > 0'
    for d in (PRICED, UNPRICED):
        group = f"gpt-oss-infra-{d.name}"
        down = alerts[group, "GptOssFrontendDown"]["expr"]
        assert f'up{{namespace="workloads", deployment="{d.name}", role="frontend"}}' in down and "absent(" in down
        ttft = alerts[group, "GptOssTtftP95High"]
        assert (
            "histogram_quantile(0.95," in ttft["expr"]
            and "dynamo_frontend_time_to_first_token_seconds_bucket" in ttft["expr"]
        )
        assert ttft["expr"].endswith(f"> {d.ttft_p95_seconds}") and ttft["for"] == settings.for_.ttft_high
        kv = alerts[group, "GptOssKvCacheNearFull"]["expr"]
        assert "dynamo_component_gpu_cache_usage_percent" in kv and kv.endswith("> 0.95")
    for _, rule in _alerts(rendered):
        assert {"summary", "runbook"} <= set(rule["annotations"]) and rule["labels"]["severity"] in (
            "warning",
            "critical",
        )


def test_without_deployments_or_a_download_job_only_the_gpu_alert_remains(catalog):
    rendered = observability(CONFIG, catalog.charts["kube-prometheus-stack"], "gp3", [], None, "1.33")
    assert _kind(rendered, "PodMonitor") == []
    assert [rule["alert"] for _, rule in _alerts(rendered)] == ["GpuXidError"]


def test_every_monitor_and_rule_is_valid_under_its_crd_closed_to_unknown_fields(rendered):
    checked = [o for o in rendered.objects if o["kind"] in ("PodMonitor", "ServiceMonitor", "PrometheusRule")]
    assert {o["kind"] for o in checked} == {"PodMonitor", "PrometheusRule"}
    for manifest in checked:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in _validator(manifest["kind"]).iter_errors(manifest)]
        assert errors == [], manifest["kind"]


def test_the_crd_check_refuses_a_misplaced_field(rendered):
    (monitor,) = _kind(rendered, "PodMonitor")
    misplaced = monitor | {"spec": monitor["spec"] | {"interval": "15s"}}  # belongs to an endpoint
    assert any("interval" in e.message for e in _validator("PodMonitor").iter_errors(misplaced))


def test_every_serving_mode_has_a_default_ttft_threshold(catalog):
    for recipe in catalog.recipes.values():
        assert default_ttft_p95_seconds(recipe.mode) > 0


def _validator(kind: str) -> jsonschema.Draft7Validator:
    """The vendored CRD's schema, closed to unknown fields, as the program validates with it."""
    validator, _ = vendored_validators()[("monitoring.coreos.com/v1", kind)]
    return validator


def _exprs(dashboard):
    for panel in dashboard["panels"]:
        yield from (target["expr"] for target in panel.get("targets", []))
        for inner in panel.get("panels", []):  # rows hold their panels
            yield from (target["expr"] for target in inner.get("targets", []))


PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"}


def _metrics(expr: str) -> set[str]:
    """Metric names of a PromQL expression: identifiers outside label matchers, strings, ranges and
    grouping clauses that are not function calls, keywords or numbers."""
    expr = re.sub(r'"[^"]*"', "", expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    names = re.findall(r"\b([A-Za-z_:][A-Za-z0-9_:]*)\b(?!\s*\()", expr)
    return {name for name in names if name not in PROMQL_WORDS and not re.fullmatch(r"\d.*|[eE]\d*|Inf|NaN", name)}
