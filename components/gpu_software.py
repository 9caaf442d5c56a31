"""What makes GPUs (and EFA) schedulable: the pinned Helm releases core.render.gpu_software decided."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.base import Component
from core.render.gpu_software import ChartRelease


@dataclass(frozen=True)
class GpuSoftwareArgs:
    releases: list[ChartRelease]


class GpuSoftware(Component):
    def __init__(self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:gpu:GpuSoftware", name, None, opts)
        for release in args.releases:
            chart = release.chart
            k8s.helm.v3.Release(
                f"{name}-{chart.chart}",
                chart=chart.chart,
                version=chart.version,
                repository_opts={"repo": chart.repo},
                namespace=chart.namespace,
                create_namespace=True,
                values=release.values,
                opts=self.child_opts(),
            )
        self.register_outputs({})
