"""Karpenter's AWS side on a created cluster with elastic pools, as its v1.14.1 getting-started CloudFormation
template makes it (vendored in vendor/aws-iam/, with SOURCES.md): the controller's six policies on an EKS Pod
Identity role for its service account (kube-system/karpenter); the role its nodes join with, admitted by an
EC2_LINUX access entry (its own: one IAM principal has one access entry, and EKS makes the managed node
groups' role one itself); the interruption queue and the five EventBridge rules that feed it; and each EFA
pool's cluster placement group, which Karpenter selects but never makes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.render.aws import specs as aws_specs
from gpt_oss_infra.core.render.aws.resources import AwsResource, ClusterNetwork, Ref, node_role
from gpt_oss_infra.core.render.aws.specs import ElasticPoolSpec
from gpt_oss_infra.core.render.karpenter import SERVICE_ACCOUNT, interruption_queue_name, placement_group_name

VERSION = "v1.14.1"  # the chart's (configs/charts.yaml karpenter), whose template these policies are
PARTITION = "aws"  # as every ARN of the program's (core/render/aws/resources.py CLUSTER_ADMIN_POLICY)
_TARGET_ID = "KarpenterInterruptionQueueTarget"  # the template's; the API requires one per target


def _vendored(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VENDOR_DIR / "aws-iam" / f"karpenter-{VERSION}-{kind}.json").read_text())
    return data


def controller_policies(cluster_name: str, region: str, node_role_arn: str) -> dict[str, dict[str, Any]]:
    """The controller's policies by their template name, with the template's parameters put in: the account
    is the node role's (one account), the queue the cluster's."""
    account = node_role_arn.split(":")[4]
    values = {
        "${AWS::Partition}": PARTITION,
        "${AWS::Region}": region,
        "${AWS::AccountId}": account,
        "${ClusterName}": cluster_name,
        "${KarpenterNodeRole.Arn}": node_role_arn,
        "${KarpenterInterruptionQueue.Arn}": _queue_arn(region, account, cluster_name),
    }
    text = json.dumps(_vendored("controller-policies"), sort_keys=True)
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    policies: dict[str, dict[str, Any]] = json.loads(text)
    return policies


def _queue_arn(region: str, account: str, cluster_name: str) -> str:
    return f"arn:{PARTITION}:sqs:{region}:{account}:{interruption_queue_name(cluster_name)}"


def karpenter_resources(
    name: str, cluster_name: str, region: str, cluster: ClusterNetwork, pools: list[ElasticPoolSpec]
) -> list[AwsResource]:
    """Everything AWS that Karpenter needs for `pools`, named under `name` (<name>-node-role, ...)."""
    node = f"{name}-node-role"
    made = node_role(node)
    made.append(
        AwsResource(
            "aws:eks/accessEntry:AccessEntry",
            f"{name}-node-access",
            {"cluster_name": cluster.name, "principal_arn": Ref(node, "arn"), "type": "EC2_LINUX"},
        )
    )
    made += _interruption_queue(name, cluster_name)
    controller = f"{name}-controller-role"
    made.append(
        AwsResource(
            "aws:iam/role:Role",
            controller,
            {"assume_role_policy": json.dumps(aws_specs.pod_identity_trust_policy(), sort_keys=True)},
        )
    )
    for policy in _vendored("controller-policies"):
        made += [
            AwsResource(
                "aws:iam/policy:Policy",
                f"{name}-{policy}",
                {
                    "policy": Ref(node, "arn", _policy_document(cluster_name, region, policy)),
                    "description": f"Karpenter {VERSION}: its {policy} (its getting-started CloudFormation template)",
                },
            ),
            AwsResource(
                "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
                f"{name}-{policy}-attachment",
                {"role": Ref(controller, "name"), "policy_arn": Ref(f"{name}-{policy}", "arn")},
            ),
        ]
    made.append(
        AwsResource(
            "aws:eks/podIdentityAssociation:PodIdentityAssociation",
            f"{name}-identity",
            {
                "cluster_name": cluster.name,
                "namespace": "kube-system",
                "service_account": SERVICE_ACCOUNT,
                "role_arn": Ref(controller, "arn"),
            },
        )
    )
    made += [
        AwsResource(
            "aws:ec2/placementGroup:PlacementGroup",
            f"{name}-{spec.pool}-placement",
            {"name": placement_group_name(cluster_name, spec.pool), "strategy": "cluster"},
        )
        for spec in pools
        if spec.network_interfaces
    ]
    return made


def _policy_document(cluster_name: str, region: str, policy: str) -> Callable[[str], str]:
    """The controller's policy `policy`, once the node role's ARN is known."""
    return lambda arn: json.dumps(controller_policies(cluster_name, region, arn)[policy], sort_keys=True)


def _interruption_queue(name: str, cluster_name: str) -> list[AwsResource]:
    """The queue of Spot interruption, rebalance, scheduled-change, state-change and reservation events,
    which Karpenter reads (settings.interruptionQueue) to drain a node before EC2 takes it."""
    interruption = _vendored("interruption")
    queue, settings = f"{name}-interruption-queue", interruption["queue"]
    made = [
        AwsResource(
            "aws:sqs/queue:Queue",
            queue,
            {
                "name": interruption_queue_name(cluster_name),
                "message_retention_seconds": settings["MessageRetentionPeriod"],
                "sqs_managed_sse_enabled": settings["SqsManagedSseEnabled"],
            },
        ),
        AwsResource(
            "aws:sqs/queuePolicy:QueuePolicy",
            f"{queue}-policy",
            {
                "queue_url": Ref(queue, "url"),
                "policy": Ref(
                    queue,
                    "arn",
                    lambda arn: json.dumps(interruption["queuePolicy"]["PolicyDocument"], sort_keys=True).replace(
                        "${KarpenterInterruptionQueue.Arn}", arn
                    ),
                ),
            },
        ),
    ]
    for rule, pattern in interruption["rules"].items():
        made += [
            AwsResource(
                "aws:cloudwatch/eventRule:EventRule",
                f"{name}-{rule}",
                {"event_pattern": json.dumps(pattern, sort_keys=True), "description": f"Karpenter: {rule}"},
            ),
            AwsResource(
                "aws:cloudwatch/eventTarget:EventTarget",
                f"{name}-{rule}-target",
                {"rule": Ref(f"{name}-{rule}", "name"), "arn": Ref(queue, "arn"), "target_id": _TARGET_ID},
            ),
        ]
    return made
