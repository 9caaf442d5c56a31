"""The AWS Load Balancer Controller: turns each gateway's LoadBalancer Service into an NLB.

Installed on a created cluster when a deployment's endpoint is internal or public, on the system
nodes, with its own EKS Pod Identity role [lbc-install] whose policy is the controller's own
published one for the pinned version (vendor/aws-iam/, no wildcard actions: a test checks).
  [lbc-install] https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/installation/
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.aws.iam import pod_identity_role
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import chart_release
from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.render.gateway import LOAD_BALANCER_SERVICE_ACCOUNT
from gpt_oss_infra.core.render.gpu_software import ChartRelease

POLICY_DIR = VENDOR_DIR / "aws-iam"


def controller_policy(app_version: str) -> dict:
    """The controller's IAM policy for its version, as it publishes it (docs/install/iam_policy.json)."""
    return json.loads((POLICY_DIR / f"aws-load-balancer-controller-{app_version}.json").read_text())


@dataclass(frozen=True)
class LoadBalancerControllerArgs:
    release: ChartRelease
    cluster_name: pulumi.Input[str]
    region: str
    vpc_id: pulumi.Input[str]


class LoadBalancerController(Component):
    def __init__(self, name: str, args: LoadBalancerControllerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:LoadBalancerController", name, None, opts)
        chart = args.release.chart
        policy = aws.iam.Policy(
            f"{name}-policy",
            policy=json.dumps(controller_policy(f"v{chart.version}"), sort_keys=True),
            description=f"AWS Load Balancer Controller v{chart.version} (its published policy)",
            opts=self.child_opts(),
        )
        role = pod_identity_role(f"{name}-role", policy.arn, self)
        identity = aws.eks.PodIdentityAssociation(
            f"{name}-identity",
            cluster_name=args.cluster_name,
            namespace=chart.namespace,
            service_account=LOAD_BALANCER_SERVICE_ACCOUNT,
            role_arn=role.arn,
            opts=self.child_opts(),
        )
        self.release = chart_release(
            self,
            f"{name}-release",
            args.release,
            [identity],
            release_name=args.release.chart.chart,
            region=args.region,
            vpcId=args.vpc_id,
        )
        self.register_outputs({})
