"""What makes GPUs (and EFA) schedulable: the pinned Helm releases core.render.gpu_software decided."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pulumi

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import chart_release
from gpt_oss_infra.core.render.gpu_software import ChartRelease


@dataclass(frozen=True)
class GpuSoftwareArgs:
    releases: list[ChartRelease]
    monitoring_ready: list[pulumi.Resource] = dataclasses.field(default_factory=list)  # the monitor CRDs' chart


class GpuSoftware(Component):
    def __init__(self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:gpu:GpuSoftware", name, None, opts)
        for release in args.releases:
            waits = args.monitoring_ready if release.after_monitoring else []
            chart_release(self, f"{name}-{release.chart.chart}", release, waits)
        self.register_outputs({})
