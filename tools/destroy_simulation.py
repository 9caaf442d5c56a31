"""What `pulumi destroy` of a planned stack does, offline: which resources it deletes, which it leaves
in the account on purpose, and whether it gets to the end.

From what the program registered on the mock engine (tools/pulumi_engine.Registration: options
and dependencies), by Pulumi's rules and the cloud's:
  order        a resource is deleted after every resource that depends on it: the reverse of the
               order resources were registered in, which Pulumi requires to follow dependencies
  protect      Pulumi refuses to delete a protected resource and the destroy fails; what it depends
               on stays too (pulumi/pulumi pkg/resource/deploy/step.go, deleteProtectedError)
  retain       retainOnDelete: Pulumi forgets the resource and leaves it where it is
  in use       the cloud refuses to delete what a resource still there uses (DependencyViolation,
               ResourceInUse, DeleteConflict): a subnet or security group while network interfaces in it
               remain (an FSx file system, an EFS mount target, a node group, a NAT gateway, the EKS
               control plane), a VPC while anything in it remains, an EFS file system while its mount
               targets remain, an EKS cluster while its node groups remain, an IAM role with policies
               attached, an Elastic IP a NAT gateway holds [ec2-delete-sg] [eks-delete-cluster]
A resource the cloud refuses fails the destroy and stays, and so does everything it depends on.
Controller-made resources (load balancers, volumes) are the destroy waits' (core/render/teardown.py).
Karpenter's nodes go with their NodePool only while the controller is there, and once no serving graph's
worker (do-not-disrupt, no termination grace period: core/render/karpenter.py) is on them: else they stay,
billing, their network interfaces in the cluster's subnets and security groups [karpenter-uninstall].

  [ec2-delete-sg]      https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteSecurityGroup.html
  [eks-delete-cluster] https://docs.aws.amazon.com/eks/latest/APIReference/API_DeleteCluster.html
  [efs-delete-fs]      https://docs.aws.amazon.com/efs/latest/ug/API_DeleteFileSystem.html
  [karpenter-uninstall] https://karpenter.sh/v1.14/troubleshooting/ ("Unable to delete nodes after
                       uninstalling Karpenter": their finalizers hold them; aws/karpenter-provider-aws#6870)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpt_oss_infra.core.dynamo_graph import KIND, resource_components
from gpt_oss_infra.core.render.labels import POOL_LABEL
from gpt_oss_infra.tools.dependencies import COMPONENT_PREFIX, direct_waits, transitive_waits
from gpt_oss_infra.tools.pulumi_engine import Registration

SUBNET = "aws:ec2/subnet:Subnet"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
VPC = "aws:ec2/vpc:Vpc"
FSX_LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
EFS = "aws:efs/fileSystem:FileSystem"
MOUNT_TARGET = "aws:efs/mountTarget:MountTarget"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
# A gateway's NLB, which the AWS Load Balancer Controller makes: not one of the plan's resources.
NLB = "aws:elbv2/loadBalancer:LoadBalancer (the AWS Load Balancer Controller's)"
# An elastic pool's nodes, which Karpenter launches: not one of the plan's resources.
KARPENTER_NODES = "aws:ec2/instance:Instance (Karpenter's, of a NodePool)"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
# Resources that put network interfaces in the subnets and security groups they are given.
WITH_NETWORK_INTERFACES = {FSX_LUSTRE, MOUNT_TARGET, EKS_CLUSTER, NODE_GROUP, NAT_GATEWAY, NLB, KARPENTER_NODES}
SECURITY_GROUP_RULES = {
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
    "aws:ec2/securityGroupRule:SecurityGroupRule",
}
ANY = "*"
ENVOY_PROXY = "kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyProxy"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
NLB_CLASS = "service.k8s.aws/nlb"
# The controllers that delete a gateway's NLB: Envoy Gateway deletes its Service, the AWS Load Balancer
# Controller the NLB (aws-load-balancer-controller#3043: if it goes first, the NLB stays).
NLB_CONTROLLERS = {"gateway-helm", "aws-load-balancer-controller"}
# An NLB a controller left behind, as a resource the simulation reports (not one of the plan's).
_NLB = Registration(type=NLB, name="", parent=None, inputs={}, options={})
_KARPENTER_NODES = Registration(type=KARPENTER_NODES, name="", parent=None, inputs={}, options={})
# A resource type -> the types that, while one of them that depends on it is still there, make the cloud
# refuse to delete it (ANY: every type).
IN_USE_BY: dict[str, set[str]] = {
    SUBNET: WITH_NETWORK_INTERFACES,
    SECURITY_GROUP: WITH_NETWORK_INTERFACES | SECURITY_GROUP_RULES,
    VPC: {ANY},
    EFS: {MOUNT_TARGET},  # FileSystemInUse: "Returned if a file system has mount targets" [efs-delete-fs]
    EKS_CLUSTER: {NODE_GROUP, "aws:eks/fargateProfile:FargateProfile"},
    "aws:iam/role:Role": {
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "aws:iam/instanceProfile:InstanceProfile",
    },
    "aws:ec2/eip:Eip": {NAT_GATEWAY},
}


@dataclass(frozen=True)
class DestroyStep:
    name: str
    type: str
    outcome: str  # deleted | retained | refused | in use | not reached | orphaned (a controller's, left behind)
    why: str = ""

    def line(self) -> str:
        return f"{self.outcome:<12}{self.type} {self.name}" + (f": {self.why}" if self.why else "")


@dataclass(frozen=True)
class Destroy:
    steps: list[DestroyStep]  # in the order Pulumi takes them
    kept: list[str] = field(default_factory=list)  # what outlives the resources on purpose (final backups)

    @property
    def complete(self) -> bool:
        """Every resource deleted, or left in place on purpose (retainOnDelete); no controller's left behind."""
        return all(step.outcome in ("deleted", "retained") for step in self.steps)

    def of(self, outcome: str) -> list[DestroyStep]:
        return [step for step in self.steps if step.outcome == outcome]

    def left(self) -> list[DestroyStep]:
        """What stays in the account or cluster: retained on purpose, or where the destroy stopped."""
        return [step for step in self.steps if step.outcome != "deleted"]


def simulate_destroy(resources: Iterable[Registration]) -> Destroy:
    """`pulumi destroy` of the resources the program registered, by the rules in this module's docstring."""
    registered = list(resources)
    waits = direct_waits(registered)
    by_name = {resource.name: resource for resource in registered}
    # Custom resources only: a component is deleted with its children, and has nothing of its own.
    custom = [resource for resource in registered if not resource.type.startswith(COMPONENT_PREFIX)]
    users: dict[str, set[str]] = {resource.name: set() for resource in custom}
    for resource in custom:
        for dependency in waits[resource.name]:
            if dependency in users:
                users[dependency].add(resource.name)
    # What controllers leave behind, decided by the dependency graph alone (Pulumi deletes what does not
    # depend on each other in parallel, in any order): each holds what it stands in, as a resource would.
    transitive = transitive_waits(registered)
    left_behind = _left_behind(custom, transitive) | _karpenter_nodes_left(custom, transitive)
    outcomes: dict[str, str] = {}  # of the resources deleted so far (those that depend on the next)
    steps = []
    for resource in reversed(custom):
        holding = {name for name, thing in left_behind.items() if resource.type in thing.holds}
        blockers = {user: outcomes[user] for user in users[resource.name]} | dict.fromkeys(holding, "orphaned")
        step = _delete(resource, blockers, by_name | {name: left_behind[name].registration for name in holding})
        outcomes[resource.name] = step.outcome
        steps.append(step)
    steps = _gone_with_their_cluster(
        steps, by_name, {name for name, outcome in outcomes.items() if outcome != "deleted"}
    )
    steps += [DestroyStep(name, thing.registration.type, "orphaned", thing.why) for name, thing in left_behind.items()]
    kept = [
        f"a final backup of {resource.name} (FSx for Lustre, SkipFinalBackup false)"
        for resource in custom
        if resource.type == FSX_LUSTRE and resource.inputs.get("skipFinalBackup") is False
    ]
    return Destroy(steps, kept)


@dataclass(frozen=True)
class _LeftBehind:
    """Something a controller made and did not delete, and the types of the stack's it keeps from going."""

    registration: Registration  # its stand-in, for the rules of IN_USE_BY
    why: str
    holds: frozenset[str]


def _left_behind(resources: list[Registration], waits: dict[str, frozenset[str]]) -> dict[str, _LeftBehind]:
    """Each gateway's NLB (an EnvoyProxy whose Service is of the NLB class, and the Gateway beside it) that
    no teardown guard saves: one is saved when its Gateway is deleted before the guard (depends on it)
    and the guard before every controller of the stack's (depends on them); else, where the stack
    deletes a controller, the NLB stays, holding the cluster's subnets and VPC."""
    gateways = {resource.parent: resource.name for resource in resources if resource.type == GATEWAY}
    controller_namespace = next((r.inputs["namespace"] for r in resources if _chart(r) == "gateway-helm"), "")
    controllers = [r.name for r in resources if _chart(r) in NLB_CONTROLLERS]
    guards = [r.name for r in resources if controller_namespace in _guarded_namespaces(r, "LOAD_BALANCER_NAMESPACES")]
    left = {}
    for proxy in resources:
        service = proxy.inputs.get("spec", {}).get("provider", {}).get("kubernetes", {}).get("envoyService", {})
        if proxy.type != ENVOY_PROXY or service.get("loadBalancerClass") != NLB_CLASS or not controllers:
            continue
        gateway = gateways[proxy.parent]
        saved = any(guard in waits[gateway] and set(controllers) <= waits[guard] for guard in guards)
        if not saved:
            name = f"NLB of Service {controller_namespace}/{service['name']}"
            why = (
                f"no teardown guard holds {', '.join(controllers)} until it is gone after {gateway}: it stays, "
                "billing, and holds the cluster's subnets"
            )
            left[name] = _LeftBehind(_NLB, why, frozenset({SUBNET, VPC}))
    return left


def _karpenter_nodes_left(resources: list[Registration], waits: dict[str, frozenset[str]]) -> dict[str, _LeftBehind]:
    """Each NodePool's nodes, unless the NodePool is deleted before the Karpenter controller (depends on it)
    and after every serving graph whose workers run on its nodes (each depends on it)."""
    controllers = {r.name for r in resources if _chart(r) == "karpenter"}
    left = {}
    for node_pool in (r for r in resources if r.type == NODE_POOL):
        pool = node_pool.inputs["metadata"]["name"]
        reasons = []
        if not controllers <= waits[node_pool.name]:
            reasons.append(
                f"{node_pool.name} may be deleted after the Karpenter controller, whose finalizers then hold them"
            )
        on_it = [r.name for r in resources if pool in _graph_pools(r) and node_pool.name not in waits[r.name]]
        if on_it:
            reasons.append(
                f"{', '.join(on_it)} may still serve on them when {node_pool.name} goes, and its workers' "
                "do-not-disrupt holds them until the delete times out"
            )
        if reasons:
            why = "; ".join(reasons) + ": they stay, billing, holding the cluster's subnets and security groups"
            left[f"nodes of Karpenter NodePool {pool}"] = _LeftBehind(
                _KARPENTER_NODES, why, frozenset({SUBNET, SECURITY_GROUP, VPC})
            )
    return left


def _graph_pools(resource: Registration) -> set[str]:
    """The pools a DynamoGraphDeployment's components run on (their nodeSelector's pool label)."""
    if not resource.type.endswith(f":{KIND}"):
        return set()
    return {
        selector[POOL_LABEL]
        for component in resource_components(resource.type, resource.inputs)
        if POOL_LABEL in (selector := component.pod.get("nodeSelector") or {})
    }


def _chart(resource: Registration) -> str | None:
    """A Helm release's chart name (an OCI chart is named by its reference)."""
    return resource.inputs.get("chart", "").rsplit("/", 1)[-1] if resource.type == HELM_RELEASE else None


def _guarded_namespaces(resource: Registration, variable: str) -> list[str]:
    """The namespaces a teardown guard's Deployment waits on (its container's `variable`)."""
    if resource.type != DEPLOYMENT:
        return []
    containers = resource.inputs.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
    values = [env["value"] for container in containers for env in container.get("env", []) if env["name"] == variable]
    return [namespace for value in values for namespace in value.split(",")]


def _gone_with_their_cluster(
    steps: list[DestroyStep], by_name: dict[str, Registration], still_there: set[str]
) -> list[DestroyStep]:
    """A Kubernetes object Pulumi leaves in place (retainOnDelete) goes all the same with an EKS cluster
    the stack deletes (its provider's kubeconfig comes from that cluster)."""

    def deleted_cluster(resource: Registration) -> str | None:
        providers = [by_name[name] for name in resource.waits_for if by_name[name].type == KUBERNETES_PROVIDER]
        clusters = [name for p in providers for name in p.waits_for if by_name[name].type == EKS_CLUSTER]
        return next((cluster for cluster in clusters if cluster not in still_there), None)

    return [
        dataclasses.replace(step, outcome="deleted", why=f"retainOnDelete, and gone with the cluster {cluster}")
        if step.outcome == "retained"
        and step.type.startswith("kubernetes:")
        and (cluster := deleted_cluster(by_name[step.name]))
        else step
        for step in steps
    ]


def _delete(resource: Registration, users: dict[str, str], by_name: dict[str, Registration]) -> DestroyStep:
    """The step of one resource, given what became of each resource that depends on it."""

    def step(outcome: str, why: str = "") -> DestroyStep:
        return DestroyStep(resource.name, resource.type, outcome, why)

    if resource.options.get("protect"):
        return step("refused", "protected: Pulumi refuses to delete it and the destroy fails")
    # A resource still in the state (refused, failed, not reached) keeps what it depends on there too.
    held = sorted(user for user, outcome in users.items() if outcome in ("refused", "in use", "not reached"))
    if resource.options.get("retainOnDelete") and not held:
        return step("retained", "retainOnDelete: left in place, no longer managed")
    blockers = IN_USE_BY.get(resource.type, set())
    in_use = sorted(
        user
        for user, outcome in users.items()
        if outcome != "deleted" and (ANY in blockers or by_name[user].type in blockers)
    )
    if in_use:  # the more telling reason where both hold
        return step("in use", f"the cloud refuses while {', '.join(in_use)} remains (DependencyViolation)")
    if held:
        return step("not reached", f"{', '.join(held)} still depends on it")
    return step("deleted")


def summary_lines(destroy: Destroy) -> list[str]:
    """The plan summary's account of `pulumi destroy`."""
    counted = len(destroy.of("deleted"))
    if not destroy.complete:
        stops = [step for step in destroy.steps if step.outcome in ("refused", "in use")]
        return [
            f"`pulumi destroy` would NOT complete (simulated): {len(stops)} resource(s) refused, "
            f"{len(destroy.of('not reached'))} not reached:",
            "",
            *[f"- {step.line()}" for step in [*stops, *destroy.of("retained")]],
        ]
    lines = [
        f"`pulumi destroy` deletes all {counted} resources the stack registered (simulated from the plan's "
        "dependencies, with what controllers made for them)"
    ]
    kept = [f"{step.type} {step.name} (retainOnDelete)" for step in destroy.of("retained")] + destroy.kept
    if kept:
        lines[0] += "; it leaves, on purpose:"
        lines += ["", *[f"- {what}" for what in kept]]
    else:
        lines[0] += "; nothing is left."
    return lines
