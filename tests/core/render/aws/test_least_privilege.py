"""Least privilege, checked: every add-on role's AWS-managed policy is one chosen as narrow for it,
and a policy of ours (the load balancer controller's) names every action."""

from __future__ import annotations

import pytest

from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.aws.resources import controller_policy
from gpt_oss_infra.core.render.aws.specs import addons, wildcard_actions
from gpt_oss_infra.core.stack import build_stack
from tests.support import eks_stack_names, example_entries

# AWS-managed policies scoped to what the add-on does (each add-on's EKS page recommends it).
NARROW = {
    "vpc-cni": "AmazonEKS_CNI_Policy",  # ENI and IP assignment only
    "aws-ebs-csi-driver": "service-role/AmazonEBSCSIDriverPolicy",  # volumes tagged by the driver
    "aws-efs-csi-driver": "service-role/AmazonEFSCSIDriverPolicy",  # access points
}


@pytest.mark.parametrize("stack", eks_stack_names())
def test_every_add_on_role_has_its_narrow_policy_and_no_other(stack, catalog):
    config = build_stack(namespace_config(example_entries(stack)), catalog, with_hf_token=False, api_key_clients=["ci"])
    specs, _ = addons(config.config, catalog.addon_versions[config.config.cluster.kubernetes_version])
    roles = {spec.name: spec.managed_policy for spec in specs if spec.managed_policy}
    assert roles == {name: NARROW[name] for name in roles}, "an add-on role with a policy not chosen as narrow"


def test_no_policy_of_ours_grants_a_wildcard_action():
    """Resource "*" stays where the API allows no narrower resource (the Describe calls)."""
    policy = controller_policy("v3.5.0")
    assert sum(len(statement["Action"]) for statement in policy["Statement"]) > 40
    assert wildcard_actions(policy) == []


def test_a_wildcard_action_is_caught_in_a_list_or_alone():
    broken = {
        "Statement": [
            {"Effect": "Allow", "Action": ["elasticloadbalancing:*", "ec2:CreateTags"], "Resource": "*"},
            {"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"},
        ]
    }
    assert wildcard_actions(broken) == ["elasticloadbalancing:*", "ec2:Describe*"]
