"""What makes GPUs (and EFA) schedulable: pinned Helm releases, tolerating the GPU taint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.base import Component
from core.catalog import Chart
from core.manifests import GPU_TAINT

GPU_NODES = {"nvidia.com/gpu.present": "true"}


@dataclass(frozen=True)
class GpuSoftwareArgs:
    charts: dict[str, Chart]
    gpu_software: str  # device-plugin | gpu-operator | none: exactly one, never two
    dcgm_exporter: bool
    efa: bool  # some pool has EFA interfaces


class GpuSoftware(Component):
    def __init__(self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:gpu:GpuSoftware", name, None, opts)
        placement = {"tolerations": [GPU_TAINT], "nodeSelector": GPU_NODES}
        if args.gpu_software == "device-plugin":
            # mofedEnabled is on by default from 0.19 and conflicts with the EFA device plugin.
            self._release(name, args.charts["nvidia-device-plugin"], placement | {"mofedEnabled": False})
        elif args.gpu_software == "gpu-operator":
            # The EKS AL2023 NVIDIA AMIs ship the driver and container toolkit already.
            self._release(
                name,
                args.charts["gpu-operator"],
                {"driver": {"enabled": False}, "toolkit": {"enabled": False}},
            )
        if args.dcgm_exporter and args.gpu_software != "gpu-operator":  # the operator ships its own
            self._release(name, args.charts["dcgm-exporter"], placement)
        if args.efa:
            self._release(name, args.charts["aws-efa-k8s-device-plugin"], {"tolerations": [GPU_TAINT]})
        self.register_outputs({})

    def _release(self, name: str, chart: Chart, values: dict[str, Any]) -> k8s.helm.v3.Release:
        return k8s.helm.v3.Release(
            f"{name}-{chart.chart}",
            chart=chart.chart,
            version=chart.version,
            repository_opts={"repo": chart.repo},
            namespace=chart.namespace,
            create_namespace=True,
            values=values,
            opts=self.child_opts(),
        )
