"""IAM roles: AWS-managed policies, or a project's own published policy (the AWS Load Balancer
Controller's); no inline `*` permissions anywhere."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.core.render.aws.specs import pod_identity_trust_policy


def role_with_managed_policies(
    name: str, trust_policy: dict[str, Any], managed_policies: list[str], parent: Component
) -> aws.iam.Role:
    """A role trusted as `trust_policy`, with each AWS-managed policy (name after `policy/`)."""
    role = aws.iam.Role(
        name,
        assume_role_policy=json.dumps(trust_policy, sort_keys=True),
        opts=parent.child_opts(),
    )
    for policy in managed_policies:
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy.rsplit('/', 1)[-1]}",
            role=role.name,
            policy_arn=f"arn:aws:iam::aws:policy/{policy}",
            opts=parent.child_opts(),
        )
    return role


def pod_identity_role(name: str, policy_arn: pulumi.Input[str], parent: Component) -> aws.iam.Role:
    """A role for one Kubernetes service account through EKS Pod Identity, with one policy."""
    role = aws.iam.Role(
        name, assume_role_policy=json.dumps(pod_identity_trust_policy(), sort_keys=True), opts=parent.child_opts()
    )
    aws.iam.RolePolicyAttachment(f"{name}-policy", role=role.name, policy_arn=policy_arn, opts=parent.child_opts())
    return role
