"""Karpenter on a created cluster with elastic pools: its AWS side (core/render/aws/karpenter.py), its chart
on the system nodes, and each elastic pool's EC2NodeClass and NodePool (core/render/karpenter.py).

The order is `pulumi destroy`'s as much as `up`'s. Each NodePool waits for its EC2NodeClass, which waits for
the controller; the pool's serving graphs wait for the NodePool (the cluster target's `gpu_ready`). So destroy
deletes the graphs first (their workers drain), then each NodePool, whose nodes Karpenter drains and
terminates, then each EC2NodeClass, whose finalizer holds it until no node of it is left; the Kubernetes
provider waits for each to be gone. Only then does the controller go, and after it its IAM, queue and rules,
and last the cluster. The other way round, the controller would be gone before its nodes, and their finalizers
would hold them (and their instances) forever.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.aws.build import Built, register
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import chart_release, custom_resource
from gpt_oss_infra.core.render.aws.resources import AwsResource
from gpt_oss_infra.core.render.karpenter import CHART, CRD_CHART, NODE_ROLE, KarpenterObjects

# A NodePool's nodes drain and terminate, and an EC2NodeClass waits for them: GPU instances take minutes to
# terminate, past the Kubernetes provider's 10-minute default.
DELETE_TIMEOUT = "30m"


class Karpenter(Component):
    """The controller and the elastic pools' NodePools; `node_pools`: what each pool's graphs wait for."""

    def __init__(
        self,
        name: str,
        resources: list[AwsResource],
        built: Built,
        objects: KarpenterObjects,
        node_classes_wait_for: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`node_classes_wait_for`: what the EC2NodeClasses select that is made elsewhere (the EFA peers'
        security group)."""
        super().__init__("gpt-oss-infra:aws:Karpenter", name, None, opts)
        register(self, resources, built)
        node_role = built[f"{name}-node-role"]
        assert isinstance(node_role, aws.iam.Role)
        # Its identity with every policy attached, and its queue's policy, before the controller starts (and
        # after it stops, at destroy).
        waited = (f"{name}-identity", f"{name}-interruption-queue-policy")
        identity = [built[r.name] for r in resources if r.name.endswith("-attachment") or r.name in waited]
        crds = chart_release(self, f"{name}-crds", objects.crds, release_name=CRD_CHART, create_namespace=False)
        release = chart_release(
            self, f"{name}-release", objects.release, [crds, *identity], release_name=CHART, create_namespace=False
        )
        deleting = pulumi.CustomTimeouts(delete=DELETE_TIMEOUT)
        self.node_pools: dict[str, pulumi.Resource] = {}
        for pool, node_class in objects.node_classes.items():
            spec = node_class["spec"]
            assert spec["role"] == NODE_ROLE, "the node role's name is put in here"
            placement = [built[key] for key in (f"{name}-{pool}-placement",) if key in built]  # EFA pools only
            made_class = custom_resource(
                self,
                f"{name}-{pool}-node-class",
                node_class | {"spec": spec | {"role": node_role.name}},
                depends_on=[release, built[f"{name}-node-access"], *placement, *node_classes_wait_for],
                custom_timeouts=deleting,
            )
            self.node_pools[pool] = custom_resource(
                self,
                f"{name}-{pool}-node-pool",
                objects.node_pools[pool],
                depends_on=[made_class],
                custom_timeouts=deleting,
            )
        self.register_outputs({})
