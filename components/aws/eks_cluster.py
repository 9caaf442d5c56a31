"""The EKS control plane: cluster, secrets encryption, logging, access entries, add-ons.

[eks-endpoint] https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html ("you must
               ensure that your Amazon EKS control plane security group contains rules to allow
               ingress traffic on port 443 from your bastion host")
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.aws.iam import role_with_managed_policies
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import crds_provider
from gpt_oss_infra.core.inputs.config import EksClusterConfig
from gpt_oss_infra.core.render.aws import specs as aws_specs


@dataclass(frozen=True)
class EksClusterArgs:
    config: EksClusterConfig
    region: str
    subnet_ids: list[pulumi.Input[str]]
    applies_crds: bool = False  # the release has the program apply Dynamo's CRDs (up to 1.2.1)


class EksCluster(Component):
    """API authentication mode with access entries, private endpoint always on, envelope-encrypted
    secrets, control-plane logs kept `logRetentionDays`, and a Kubernetes provider for the rest."""

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:EksCluster", name, None, opts)
        config = args.config
        role = role_with_managed_policies(
            f"{name}-role",
            aws_specs.service_trust_policy("eks.amazonaws.com"),
            aws_specs.CLUSTER_MANAGED_POLICIES,
            self,
        )
        key = aws.kms.Key(
            f"{name}-secrets",
            description=f"EKS secrets envelope encryption for {config.name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            opts=self.child_opts(),
        )
        # EKS writes to this group by name; creating it first sets the retention.
        logs = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=f"/aws/eks/{config.name}/cluster",
            retention_in_days=config.log_retention_days,
            opts=self.child_opts(),
        )
        self.cluster = aws.eks.Cluster(
            f"{name}-cluster",
            name=config.name,
            version=config.kubernetes_version,
            role_arn=role.arn,
            vpc_config={
                "subnet_ids": args.subnet_ids,
                "endpoint_private_access": True,
                "endpoint_public_access": config.endpoint_public_access,
                "public_access_cidrs": config.public_access_cidrs if config.endpoint_public_access else None,
            },
            access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
            encryption_config={"provider": {"key_arn": key.arn}, "resources": ["secrets"]},
            enabled_cluster_log_types=aws_specs.CONTROL_PLANE_LOG_TYPES,
            opts=self.child_opts(depends_on=[logs]),
        )
        # The private endpoint answers only what the cluster security group admits: its own members
        # by default. Deploy runners and operators inside the VPC (or over a VPN) need HTTPS [eks-endpoint].
        for index, cidr in enumerate(config.resolved_private_access_cidrs):
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-api-{index}",
                security_group_id=self.cluster.vpc_config.cluster_security_group_id,
                cidr_ipv4=cidr,
                ip_protocol="tcp",
                from_port=443,
                to_port=443,
                description=f"Kubernetes API (private endpoint) from {cidr}",
                opts=self.child_opts(),
            )
        for index, principal in enumerate(config.admin_role_arns):
            entry = aws.eks.AccessEntry(
                f"{name}-admin-{index}",
                cluster_name=self.cluster.name,
                principal_arn=principal,
                opts=self.child_opts(),
            )
            aws.eks.AccessPolicyAssociation(
                f"{name}-admin-{index}-policy",
                cluster_name=self.cluster.name,
                principal_arn=principal,
                policy_arn="arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
                access_scope={"type": "cluster"},
                opts=self.child_opts(depends_on=[entry]),
            )
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.endpoint, self.cluster.certificate_authority.data).apply(
                lambda values: json.dumps(aws_specs.kubeconfig(config.name, values[0], values[1], args.region))
            )
        )
        self.provider = k8s.Provider(
            f"{name}-kubernetes",
            kubeconfig=self.kubeconfig,
            # No upsert (pulumi-kubernetes' default since 4.29): creating what exists fails, never adopts it.
            enable_server_side_apply=True,
            opts=self.child_opts(),
        )
        self.crds_provider = (
            crds_provider(f"{name}-kubernetes-crds", self.kubeconfig, None, self.child_opts())
            if args.applies_crds
            else None
        )
        self.register_outputs({"clusterName": self.cluster.name, "kubeconfig": self.kubeconfig})


class EksAddons(Component):
    """EKS managed add-ons; those with AWS permissions get their own Pod Identity role."""

    def __init__(
        self,
        name: str,
        cluster: aws.eks.Cluster,
        addons: list[aws_specs.AddonSpec],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpt-oss-infra:aws:EksAddons", name, None, opts)
        for spec in addons:
            identities = None
            if spec.managed_policy:
                role = role_with_managed_policies(
                    f"{name}-{spec.name}-role", aws_specs.pod_identity_trust_policy(), [spec.managed_policy], self
                )
                identities = [{"role_arn": role.arn, "service_account": spec.service_account}]
            aws.eks.Addon(
                f"{name}-{spec.name}",
                cluster_name=cluster.name,
                addon_name=spec.name,
                addon_version=spec.version,
                configuration_values=json.dumps(spec.configuration, sort_keys=True) if spec.configuration else None,
                pod_identity_associations=identities,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                opts=self.child_opts(),
            )
        self.register_outputs({})
