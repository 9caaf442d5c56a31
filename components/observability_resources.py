"""Prometheus, Alertmanager and Grafana (kube-prometheus-stack), with our monitors, dashboards and
alert rules (core.render.observability decides them all)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import chart_release, custom_resource, namespace_resource, resource_args
from gpt_oss_infra.core.render.observability import ObservabilityObjects


@dataclass(frozen=True)
class ObservabilityArgs:
    objects: ObservabilityObjects


class Observability(Component):
    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:observability:Observability", name, None, opts)
        namespace = namespace_resource(f"{name}-namespace", args.objects.namespace, self.child_opts())
        # The chart installs the Prometheus Operator's CRDs: every monitor and rule waits for it.
        self.release = release = chart_release(
            self, f"{name}-release", args.objects.release, [namespace], release_name=args.objects.release.chart.chart
        )
        for manifest in args.objects.objects:
            child = f"{name}-{manifest['kind'].lower()}-{manifest['metadata']['name']}"
            if manifest["kind"] == "ConfigMap":
                k8s.core.v1.ConfigMap(child, **resource_args(manifest), opts=self.child_opts(depends_on=[release]))
            else:
                custom_resource(self, child, manifest, depends_on=[release])
        self.register_outputs({})
