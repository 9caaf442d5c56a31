"""The EKS control plane (core/render/aws/resources.py, components/aws/eks_cluster.py), its API access,
kubeconfig and provider, and the add-ons."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pytest

from gpt_oss_infra.components.aws.build import AwsResources
from gpt_oss_infra.components.aws.eks_cluster import EksCluster
from gpt_oss_infra.core.render.aws import resources
from gpt_oss_infra.core.render.aws import specs as aws_specs
from tests.components.conftest import is_secret, unwrap_secret

SUBNETS = ["subnet-1", "subnet-2"]
REGION = "us-east-2"


def build_cluster(engine, config):
    made = {}

    def program():
        control_plane = resources.eks_cluster("eks", config, SUBNETS)
        made["eks"] = eks = EksCluster("eks", control_plane, {}, config.name, REGION)
        return {"kubeconfig": eks.kubeconfig, "secret": is_secret(eks.kubeconfig)}

    values = engine.run(program)
    assert {engine.parent_type(name) for name in engine.children("eks")} == {"gpt-oss-infra:aws:EksCluster"}
    return made["eks"], values


def test_the_control_plane_encrypts_secrets_logs_and_authenticates_through_access_entries(engine, example_stack):
    config = example_stack("dev").config.cluster
    eks, _ = build_cluster(engine, config)
    assert eks.cluster is engine.built["eks-cluster"].resource
    cluster = engine.inputs("eks-cluster")
    assert (cluster["name"], cluster["version"], cluster["roleArn"]) == (
        config.name,
        config.kubernetes_version,
        "arn:aws:mock::eks-role",
    )
    assert cluster["vpcConfig"] == {
        "subnetIds": SUBNETS,
        "endpointPrivateAccess": True,
        "endpointPublicAccess": True,
        "publicAccessCidrs": config.public_access_cidrs,
    }
    assert cluster["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}
    assert cluster["encryptionConfig"] == {
        "provider": {"keyArn": "arn:aws:mock::eks-secrets"},
        "resources": ["secrets"],
    }
    assert cluster["enabledClusterLogTypes"] == aws_specs.CONTROL_PLANE_LOG_TYPES
    assert engine.inputs("eks-secrets")["enableKeyRotation"] is True
    # EKS writes to this log group by name: made first, it sets the retention.
    logs = engine.inputs("eks-logs")
    assert (logs["name"], logs["retentionInDays"]) == (f"/aws/eks/{config.name}/cluster", config.log_retention_days)
    assert engine.waits_for("eks-cluster") == ["eks-logs"]
    assert json.loads(engine.inputs("eks-role")["assumeRolePolicy"]) == aws_specs.service_trust_policy(
        "eks.amazonaws.com"
    )
    assert engine.inputs("eks-role-AmazonEKSClusterPolicy")["role"] == "eks-role-name"


def test_a_private_only_endpoint_takes_no_public_cidrs(engine, example_stack):
    config = example_stack("gb200").config.cluster
    build_cluster(engine, config)
    assert engine.inputs("eks-cluster")["vpcConfig"]["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in engine.inputs("eks-cluster")["vpcConfig"]


@pytest.mark.parametrize("stack_name", ["dev", "h200"])
def test_the_private_endpoint_admits_https_from_each_private_access_cidr(engine, example_stack, stack_name):
    config = example_stack(stack_name).config.cluster
    build_cluster(engine, config)
    rules = [f"eks-api-{index}" for index in range(len(config.resolved_private_access_cidrs))]
    assert engine.names_of("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule") == rules
    for rule, cidr in zip(rules, config.resolved_private_access_cidrs, strict=True):
        inputs = engine.inputs(rule)
        assert (inputs["securityGroupId"], inputs["cidrIpv4"]) == ("eks-cluster-sg-id", cidr)
        assert (inputs["ipProtocol"], inputs["fromPort"], inputs["toPort"]) == ("tcp", 443, 443)


def test_each_admin_role_gets_an_access_entry_with_cluster_admin(engine, example_stack):
    config = example_stack("h200").config.cluster
    build_cluster(engine, config)
    [principal] = config.admin_role_arns
    assert engine.inputs("eks-admin-0") == {"clusterName": config.name, "principalArn": principal}
    assert engine.inputs("eks-admin-0-policy") == {
        "clusterName": config.name,
        "principalArn": principal,
        "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
        "accessScope": {"type": "cluster"},
    }
    # The policy can only be associated with an entry that exists.
    assert engine.waits_for("eks-admin-0-policy") == ["eks-admin-0"]


def test_the_kubeconfig_is_a_secret_that_reaches_the_cluster_the_aws_cli_way(engine, example_stack):
    config = example_stack("dev").config.cluster
    eks, values = build_cluster(engine, config)
    expected = aws_specs.kubeconfig(config.name, "https://eks-cluster.eks.example.com", "eks-cluster-ca-data", REGION)
    assert values["secret"] is True
    assert json.loads(values["kubeconfig"]) == expected
    provider = engine.registered("eks-kubernetes")
    assert provider.typ == "pulumi:providers:kubernetes"
    assert eks.provider is engine.built["eks-kubernetes"].resource
    assert json.loads(unwrap_secret(provider.inputs["kubeconfig"])) == expected
    # Server-side apply, and no upsert: creating what exists fails, never takes it over.
    assert provider.inputs["enableServerSideApply"] == "true" and "upsertExistingObjects" not in provider.inputs


def test_add_ons_are_pinned_and_those_with_aws_permissions_get_a_pod_identity_role(engine, eks_plan):
    addons = eks_plan("dev").eks.addons

    def program():
        cluster = aws.eks.Cluster("cluster", role_arn="arn:role", vpc_config={"subnet_ids": SUBNETS})
        return {
            "urn": AwsResources("EksAddons", "addons", resources.eks_addons("addons", cluster.name, addons), {}).urn
        }

    engine.run(program)
    assert engine.names_of("aws:eks/addon:Addon") == [f"addons-{spec.name}" for spec in addons]
    assert {engine.parent_type(name) for name in engine.children("addons")} == {"gpt-oss-infra:aws:EksAddons"}
    assert [spec.name for spec in addons if spec.managed_policy]
    assert [spec.name for spec in addons if not spec.managed_policy]
    for spec in addons:
        addon = engine.inputs(f"addons-{spec.name}")
        assert (addon["clusterName"], addon["addonName"], addon["addonVersion"]) == (
            "cluster-name",
            spec.name,
            spec.version,
        )
        assert (addon["resolveConflictsOnCreate"], addon["resolveConflictsOnUpdate"]) == ("OVERWRITE", "OVERWRITE")
        role = f"addons-{spec.name}-role"
        if spec.managed_policy:
            assert addon["podIdentityAssociations"] == [
                {"roleArn": f"arn:aws:mock::{role}", "serviceAccount": spec.service_account}
            ]
            assert json.loads(engine.inputs(role)["assumeRolePolicy"]) == aws_specs.pod_identity_trust_policy()
            attachment = f"{role}-{spec.managed_policy.rsplit('/', 1)[-1]}"
            assert engine.inputs(attachment)["policyArn"] == f"arn:aws:iam::aws:policy/{spec.managed_policy}"
        else:
            assert "podIdentityAssociations" not in addon
            assert role not in engine.built


def test_no_add_ons_no_resources(engine):
    def program():
        cluster = aws.eks.Cluster("cluster", role_arn="arn:role", vpc_config={"subnet_ids": SUBNETS})
        made = AwsResources("EksAddons", "addons", [], {}, opts=pulumi.ResourceOptions(depends_on=[cluster]))
        return {"urn": made.urn}

    engine.run(program)
    assert engine.children("addons") == []
