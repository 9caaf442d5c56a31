"""core/render/aws/resources.py's role: its trust policy and one attachment per AWS-managed policy,
registered under its owner."""

from __future__ import annotations

import json

from gpt_oss_infra.components.aws.build import register
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.core.render.aws import resources
from gpt_oss_infra.core.render.aws import specs as aws_specs


def test_a_role_gets_its_trust_policy_and_each_managed_policy(engine):
    made = {}
    trust = aws_specs.pod_identity_trust_policy()

    def program():
        owner = Component("gpt-oss-infra:test:Owner", "owner", None, None)
        policies = ["AmazonEKS_CNI_Policy", "service-role/AmazonEBSCSIDriverPolicy"]
        made["role"] = register(owner, resources.role("owner-role", trust, policies), {})["owner-role"]
        return {"name": made["role"].name}

    values = engine.run(program)
    assert made["role"] is engine.built["owner-role"].resource
    assert values["name"] == "owner-role-name"
    assert engine.children("owner") == [
        "owner-role",
        "owner-role-AmazonEKS_CNI_Policy",
        "owner-role-AmazonEBSCSIDriverPolicy",
    ]
    assert {engine.parent_type(name) for name in engine.children("owner")} == {"gpt-oss-infra:test:Owner"}
    role = engine.registered("owner-role")
    assert role.typ == "aws:iam/role:Role"
    assert json.loads(role.inputs["assumeRolePolicy"]) == trust
    assert engine.inputs("owner-role-AmazonEKS_CNI_Policy") == {
        "role": "owner-role-name",
        "policyArn": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    }
    # The path before the name stays in the ARN (AWS-managed service roles live under service-role/).
    assert engine.inputs("owner-role-AmazonEBSCSIDriverPolicy")["policyArn"] == (
        "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
    )


def test_the_trust_policy_is_written_the_same_way_every_run(engine):
    """Key order changes nothing to IAM, but a different text would be a diff on every `pulumi up`."""
    shuffled = {"Statement": aws_specs.service_trust_policy("eks.amazonaws.com")["Statement"], "Version": "2012-10-17"}

    def program():
        owner = Component("gpt-oss-infra:test:Owner", "owner", None, None)
        register(owner, resources.role("first", aws_specs.service_trust_policy("eks.amazonaws.com"), []), {})
        register(owner, resources.role("second", shuffled, []), {})
        return {}

    engine.run(program)
    assert engine.inputs("first")["assumeRolePolicy"] == engine.inputs("second")["assumeRolePolicy"]
