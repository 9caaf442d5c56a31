"""The AWS Load Balancer Controller: turns each gateway's LoadBalancer Service into an NLB.

Installed on a created cluster when a deployment's endpoint is internal or public, on the system
nodes, with its own EKS Pod Identity role [lbc-install] whose policy is the controller's own
published one for the pinned version (vendor/aws-iam/, no wildcard actions: a test checks); the role
and its association are core/render/aws/resources.py's load_balancer_controller.
  [lbc-install] https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/installation/
"""

from __future__ import annotations

import pulumi

from gpt_oss_infra.components.aws.build import Built, register
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import chart_release
from gpt_oss_infra.core.render.aws.resources import AwsResource
from gpt_oss_infra.core.render.gpu_software import ChartRelease


class LoadBalancerController(Component):
    def __init__(
        self,
        name: str,
        identity: list[AwsResource],
        built: Built,
        release: ChartRelease,
        region: str,
        vpc_id: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpt-oss-infra:aws:LoadBalancerController", name, None, opts)
        register(self, identity, built)
        self.release = chart_release(
            self,
            f"{name}-release",
            release,
            [built[f"{name}-identity"]],
            release_name=release.chart.chart,
            region=region,
            vpcId=vpc_id,
        )
        self.register_outputs({})
