"""The EKS control plane (core/render/aws/resources.py: eks_cluster) and the Kubernetes providers that
reach it.

[eks-endpoint] https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html ("you must
               ensure that your Amazon EKS control plane security group contains rules to allow
               ingress traffic on port 443 from your bastion host")
"""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.aws.build import Built, register
from gpt_oss_infra.components.base import Component, secret
from gpt_oss_infra.components.kubernetes import crds_provider
from gpt_oss_infra.core.render.aws import specs as aws_specs
from gpt_oss_infra.core.render.aws.resources import AwsResource


class EksCluster(Component):
    """API authentication mode with access entries, private endpoint always on, envelope-encrypted
    secrets, control-plane logs kept `logRetentionDays`, and a Kubernetes provider for the rest (and one
    of its own for Dynamo's CRDs where the release has the program apply them, up to 1.2.1)."""

    def __init__(
        self,
        name: str,
        resources: list[AwsResource],
        built: Built,
        cluster_name: str,
        region: str,
        applies_crds: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpt-oss-infra:aws:EksCluster", name, None, opts)
        register(self, resources, built)
        cluster = built[f"{name}-cluster"]
        assert isinstance(cluster, aws.eks.Cluster)
        self.cluster = cluster
        self.kubeconfig = secret(
            pulumi.Output.all(cluster.endpoint, cluster.certificate_authority.data).apply(
                lambda values: json.dumps(aws_specs.kubeconfig(cluster_name, values[0], values[1], region))
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
            crds_provider(f"{name}-kubernetes-crds", self.kubeconfig, None, self.child_opts()) if applies_crds else None
        )
        self.register_outputs({"clusterName": cluster.name, "kubeconfig": self.kubeconfig})
