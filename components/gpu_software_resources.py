"""What makes GPUs (and EFA) schedulable: the pinned Helm releases core.render.gpu_software decided."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pulumi

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import chart_release, namespace_resource
from gpt_oss_infra.core.render.gpu_software import ChartRelease


@dataclass(frozen=True)
class GpuSoftwareArgs:
    releases: list[ChartRelease]
    monitoring_ready: list[pulumi.Resource] = dataclasses.field(default_factory=list)  # the monitor CRDs' chart
    # The releases' namespaces the stack makes itself (an existing cluster's); Helm makes the others.
    namespaces: list[dict[str, Any]] = dataclasses.field(default_factory=list)


class GpuSoftware(Component):
    def __init__(self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:gpu:GpuSoftware", name, None, opts)
        made = {
            manifest["metadata"]["name"]: namespace_resource(
                f"{name}-{manifest['metadata']['name']}-namespace", manifest, self.child_opts()
            )
            for manifest in args.namespaces
        }
        for release in args.releases:
            waits = args.monitoring_ready if release.after_monitoring else []
            namespace = made.get(release.chart.namespace)
            chart_release(
                self,
                f"{name}-{release.chart.chart}",
                release,
                waits if namespace is None else [*waits, namespace],
                create_namespace=namespace is None,
            )
        self.register_outputs({})
