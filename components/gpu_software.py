"""What makes GPUs (and EFA) schedulable: the pinned Helm releases core.render.gpu_software decided."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.base import Component
from components.kubernetes import chart_release
from core.render.gpu_software import ChartRelease


@dataclass(frozen=True)
class GpuSoftwareArgs:
    releases: list[ChartRelease]


class GpuSoftware(Component):
    def __init__(self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:gpu:GpuSoftware", name, None, opts)
        for release in args.releases:
            chart_release(self, f"{name}-{release.chart.chart}", release)
        self.register_outputs({})
