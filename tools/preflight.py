"""`make preflight STACK=<name>`: read-only checks of the real account, before the first `pulumi up`.

What the offline plan cannot know, read from AWS with the caller's credentials (botocore) and, for an
existing cluster, from the cluster (its kubeconfig):
  instance types   each node group's type is offered in the AZs its subnets are in
  vCPU quota       the account's EC2 vCPU quotas (On-Demand or Spot, per family) cover the stack's
                   node groups (configs/aws-quotas.yaml)
  capacity block   each CAPACITY_BLOCK pool's reservation exists, is a Capacity Block of the pool's
                   type, AZ and size, and when its nodes come and go
  EKS version      EKS offers cluster.kubernetesVersion in the region, and in which support
  EKS upgrade      the stack's cluster, where it exists, moves one minor version at most
  control-plane    no log group of the cluster's name is left from an earlier cluster, which EKS recreates
    logs           after a destroy: creating the stack's own would fail
  cluster          an existing cluster answers, runs the Kubernetes version the objects are
                   validated for, has the StorageClasses the stack names, and nodes with each
                   pool's labels, GPUs, CPU architecture and no taint its workers do not tolerate

One line per check: ok, problem (with how to fix it), or skipped (why). Exit 1 on any problem.
Nothing is created or changed. Without AWS credentials (or, for an existing cluster, a kubeconfig)
it says what it would check and exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

import botocore.exceptions
import botocore.session
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from gpt_oss_infra.components.cluster_ownership import LiveCluster, ownership_problems
from gpt_oss_infra.components.kubeconfig import api_client
from gpt_oss_infra.core.checks.scheduling import ARCH_LABEL, GPU_RESOURCE, KUBERNETES_ARCH, graph_pods, tolerates
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import Catalog, load_catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, EksClusterConfig, namespace_config
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.render import ownership
from gpt_oss_infra.core.render.aws.account import CapacityBlock
from gpt_oss_infra.core.render.aws.capacity import block_plan
from gpt_oss_infra.core.render.aws.specs import availability_zone_order
from gpt_oss_infra.core.render.stack_objects import Stack, node_selector
from gpt_oss_infra.core.resolve.recipes import NodePool
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.core.yaml_files import YamlFileError, read_yaml
from gpt_oss_infra.tools.plan import add_program_arguments, find_program, stack_config_entries

QUOTAS_FILE = CONFIG_DIR / "aws-quotas.yaml"

# --- what a check found


@dataclass(frozen=True)
class Finding:
    check: str  # e.g. "vCPU quota P On-Demand"
    status: Literal["ok", "problem", "skipped", "would check"]
    detail: str
    fix: str | None = None

    def lines(self) -> list[str]:
        lines = [f"{self.status:<12}{self.check}: {self.detail}"]
        if self.fix:
            lines.append(f"{'':<12}fix: {self.fix}")
        return lines


def ok(check: str, detail: str) -> Finding:
    return Finding(check, "ok", detail)


def problem(check: str, detail: str, fix: str) -> Finding:
    return Finding(check, "problem", detail, fix)


# --- the stack's node groups, as AWS sees them


@dataclass(frozen=True)
class NodeGroup:
    name: str  # the pool's name, or "system"
    instance_type: str
    nodes: int
    capacity_type: str  # ON_DEMAND, SPOT or CAPACITY_BLOCK
    zone: str | None  # pinned AZ, else every AZ of the cluster's subnets
    pool: NodePool | None  # None for the system node group and a cpu pool


SYSTEM_GROUP = "system"  # the system node group's name (a cpu pool's group has no GpuNodePool either)


def node_groups(stack: Stack) -> list[NodeGroup]:
    cluster = stack.config.cluster
    groups = []
    if isinstance(cluster, EksClusterConfig):
        system = cluster.system_nodes
        groups.append(NodeGroup(SYSTEM_GROUP, system.instance_type, system.nodes, "ON_DEMAND", None, None))
    for pool in stack.pools.values():
        config = pool.config
        groups.append(
            NodeGroup(
                pool.name, pool.instance_type, config.most_nodes, config.capacity_type, config.availability_zone, pool
            )
        )
    for name, config in stack.config.node_pools.items():  # cpu pools, at their most (Karpenter's)
        if name not in stack.pools:
            instance_type = config.instance_type or ""
            groups.append(
                NodeGroup(name, instance_type, config.most_nodes, config.capacity_type, config.availability_zone, None)
            )
    return groups


# --- AWS


@dataclass(frozen=True)
class AwsClients:
    ec2: Any
    eks: Any
    service_quotas: Any
    logs: Any


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)


class Quota(_Data):
    families: tuple[str, ...]  # instance families (p5en) or the letters a family starts with (p)
    code: str
    name: str

    def covers(self, instance_type: str) -> bool:
        family = instance_type.split(".")[0]
        letters = re.match(r"[a-z]+", family)
        return family in self.families or (letters is not None and letters[0] in self.families)


class QuotaData(_Data):
    on_demand: list[Quota]
    spot: list[Quota]
    capacity_blocks_use_on_demand_quota: bool

    def quota_for(self, instance_type: str, capacity_type: str) -> Quota | None:
        quotas = self.spot if capacity_type == "SPOT" else self.on_demand
        return next((quota for quota in quotas if quota.covers(instance_type)), None)


def load_quotas(path: Path = QUOTAS_FILE) -> QuotaData:
    return QuotaData.model_validate(read_yaml(path))


def aws_findings(stack: Stack, region: str, aws: AwsClients, quotas: QuotaData, now: datetime) -> list[Finding]:
    cluster = stack.config.cluster
    groups = node_groups(stack)
    checks: list[tuple[str, Callable[[], list[Finding]]]] = []
    if isinstance(cluster, EksClusterConfig):
        checks += [
            ("EKS version", lambda: [eks_version_finding(cluster.kubernetes_version, region, aws.eks)]),
            ("EKS upgrade", lambda: [eks_upgrade_finding(cluster.name, cluster.kubernetes_version, aws.eks)]),
            ("control-plane logs", lambda: [log_group_finding(cluster.name, aws.logs, aws.eks)]),
            ("instance types", lambda: offering_findings(groups, stack_zones(stack, aws.ec2), region, aws.ec2)),
            ("vCPU quota", lambda: quota_findings(groups, quotas, aws)),
        ]
    checks.append(("capacity blocks", lambda: capacity_block_findings(groups, region, aws.ec2, now)))
    return [finding for check, run in checks for finding in _unless_unreadable(check, run)]


def _unless_unreadable(check: str, run: Callable[[], list[Finding]]) -> list[Finding]:
    """The check's findings, or one problem when AWS refuses to answer (a missing permission,
    expired credentials): said as AWS said it, never a traceback."""
    try:
        return run()
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as error:
        fix = "allow the read-only calls docs/first-deploy.md's make preflight table lists, or refresh the credentials"
        return [problem(check, f"AWS did not answer: {error}", fix)]


def stack_zones(stack: Stack, ec2) -> list[str]:
    """The AZs of the cluster's subnets: the existing ones, or those the program picks (AZs node
    pools pin first, then the region's others, as many as network.availabilityZones)."""
    config = stack.config
    existing = config.cluster.network.existing_private_subnets
    if existing is not None:
        return config.pinned_zones + [zone for zone in existing if zone not in config.pinned_zones]
    described = ec2.describe_availability_zones(
        Filters=[{"Name": "state", "Values": ["available"]}, {"Name": "zone-type", "Values": ["availability-zone"]}]
    )
    return availability_zone_order(config, [zone["ZoneName"] for zone in described["AvailabilityZones"]])


def eks_version_finding(version: str, region: str, eks) -> Finding:
    check, key = "EKS version", f"{KEY_PREFIX}cluster.kubernetesVersion"
    described = eks.describe_cluster_versions(clusterVersions=[version])["clusterVersions"]
    if not described:
        pages = eks.get_paginator("describe_cluster_versions").paginate()
        offered = sorted({v["clusterVersion"] for page in pages for v in page["clusterVersions"]}, key=_version_key)
        return problem(check, f"EKS in {region} does not offer {version}", f"set {key} to one of {', '.join(offered)}")
    (entry,) = described
    status = entry.get("versionStatus") or entry["status"].upper().replace("-", "_")
    if status == "UNSUPPORTED":
        return problem(check, f"{version} is no longer supported by EKS", f"set {key} to a supported version")
    detail = f"{version} is in {status.lower().replace('_', ' ')}"
    if status == "EXTENDED_SUPPORT":
        end = entry.get("endOfExtendedSupportDate")
        detail += f" until {end:%Y-%m-%d}" if end else ""
        detail += ", billed at EKS's extended-support rate per cluster hour"
    elif entry.get("endOfStandardSupportDate"):
        detail += f" until {entry['endOfStandardSupportDate']:%Y-%m-%d}"
    return ok(check, detail)


def eks_upgrade_finding(name: str, version: str, eks) -> Finding:
    """Where the stack's cluster exists already: EKS updates a control plane one minor version at a time,
    and never back (docs.aws.amazon.com/eks/latest/userguide/update-cluster.html), so `up` would fail at
    the cluster after changing what comes before it."""
    check, key = "EKS upgrade", f"{KEY_PREFIX}cluster.kubernetesVersion"
    try:
        live = eks.describe_cluster(name=name)["cluster"]["version"]
    except eks.exceptions.ResourceNotFoundException:
        return ok(check, f"no cluster {name} yet: `pulumi up` creates it at {version}")
    (wanted_major, wanted), (live_major, running) = _version_key(version)[:2], _version_key(live)[:2]
    if (wanted_major, wanted) == (live_major, running):
        return ok(check, f"{name} runs {live}")
    if (wanted_major, wanted) < (live_major, running):
        return problem(
            check, f"{name} runs {live}: EKS cannot move a cluster back to {version}", f"set {key} to {live}"
        )
    if wanted_major != live_major or wanted > running + 1:
        step = f"{live_major}.{running + 1}"
        return problem(
            check,
            f"{name} runs {live}: EKS updates a control plane one minor version at a time, so `pulumi up` to "
            f"{version} would fail at the cluster",
            f"set {key} to {step} and `pulumi up`, then step on one minor version per update",
        )
    return ok(check, f"{name} runs {live}: `pulumi up` updates it to {version}")


def log_group_finding(name: str, logs, eks) -> Finding:
    """The stack's log group of control-plane logs, /aws/eks/<cluster>/cluster, left by an earlier cluster of
    this name: after `pulumi destroy` deletes it, EKS writes the cluster's last logs and creates it again
    (aws-ia/terraform-aws-eks-blueprints' FAQ, "Leaked CloudWatch Logs Group"), so the next `up` fails
    creating it (ResourceAlreadyExistsException)."""
    check, group = "control-plane logs", f"/aws/eks/{name}/cluster"
    found = logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]
    entry = next((entry for entry in found if entry["logGroupName"] == group), None)
    if entry is None:
        return ok(check, f"no log group {group} yet: `pulumi up` creates it")
    if "retentionInDays" in entry:  # one EKS makes keeps its logs forever; the stack's keeps logRetentionDays
        return ok(check, f"{group} keeps its logs {entry['retentionInDays']} days: made by a program, not EKS")
    try:
        eks.describe_cluster(name=name)
    except eks.exceptions.ResourceNotFoundException:
        return problem(
            check,
            f"{group} exists, but no cluster {name}: an earlier cluster's, which EKS created again after its "
            "destroy; `pulumi up` would fail creating the stack's own",
            f"aws logs delete-log-group --log-group-name {group}",
        )
    return ok(check, f"{group} is the live cluster {name}'s")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def offering_findings(groups: list[NodeGroup], zones: list[str], region: str, ec2) -> list[Finding]:
    """Each node group's type is offered where its subnets are. A Capacity Block pool is checked
    against its block instead (the block is in one AZ, the pool's)."""
    checked = [group for group in groups if group.capacity_type != "CAPACITY_BLOCK"]
    types = sorted({group.instance_type for group in checked})
    offered: dict[str, set[str]] = {name: set() for name in types}
    if types:
        pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
            LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": types}]
        )
        for page in pages:
            for offering in page["InstanceTypeOfferings"]:
                offered[offering["InstanceType"]].add(offering["Location"])
    findings = []
    for group in checked:
        check = f"instance type {group.name}"
        wanted = [group.zone] if group.zone else zones
        have = [zone for zone in wanted if zone in offered[group.instance_type]]
        others = sorted(offered[group.instance_type] - set(wanted))
        if have:
            missing = [zone for zone in wanted if zone not in have]
            detail = f"{group.instance_type} is offered in {', '.join(have)}"
            findings.append(ok(check, detail + (f" (not {', '.join(missing)}: no node there)" if missing else "")))
            continue
        where = f"{group.instance_type} is offered in none of {', '.join(wanted)}"
        if not others:
            fix = f"pick another region or instance type: {region} offers {group.instance_type} in no AZ"
        elif group.pool is None and group.name == SYSTEM_GROUP:
            fix = f"set {KEY_PREFIX}cluster.systemNodes.instanceType to a type offered there"
        else:
            fix = f"set {KEY_PREFIX}nodePools.{group.name}.availabilityZone to one of {', '.join(others)}"
        findings.append(problem(check, where, fix))
    return findings


def quota_findings(groups: list[NodeGroup], quotas: QuotaData, aws: AwsClients) -> list[Finding]:
    """Per vCPU quota the stack's node groups count against: its value against their vCPUs."""
    counted = [
        group
        for group in groups
        if group.nodes > 0 and (group.capacity_type != "CAPACITY_BLOCK" or quotas.capacity_blocks_use_on_demand_quota)
    ]
    findings, needs = [], {}
    vcpus = {name: _default_vcpus(aws.ec2, name) for name in sorted({group.instance_type for group in counted})}
    for group in counted:
        quota = quotas.quota_for(group.instance_type, group.capacity_type)
        if quota is None or vcpus[group.instance_type] is None:
            market = "Spot" if group.capacity_type == "SPOT" else "On-Demand"
            why = f"under no {market} quota of configs/aws-quotas.yaml" if quota is None else "not described by EC2"
            findings.append(Finding(f"vCPU quota {group.name}", "skipped", f"{group.instance_type} is {why}"))
            continue
        total, users = needs.get(quota, (0, []))
        used = group.nodes * vcpus[group.instance_type]
        needs[quota] = (total + used, [*users, f"{group.name} {group.nodes} x {group.instance_type} = {used}"])
    for quota, (need, users) in needs.items():
        value = _quota_value(aws.service_quotas, quota.code)
        check = f"vCPU quota {quota.name}"
        if value is None:
            findings.append(Finding(check, "skipped", f"Service Quotas returned no value for {quota.code}"))
            continue
        detail = f"{value:g} vCPUs ({quota.code}) for the {need} this stack needs ({'; '.join(users)})"
        if value >= need:
            findings.append(ok(check, detail + "; what already runs in the region counts too"))
        else:
            fix = (
                f"ask for at least {need}: aws service-quotas request-service-quota-increase --service-code ec2 "
                f"--quota-code {quota.code} --desired-value {need}"
            )
            findings.append(problem(check, detail, fix))
    return findings


def _default_vcpus(ec2, instance_type: str) -> int | None:
    try:
        (described,) = ec2.describe_instance_types(InstanceTypes=[instance_type])["InstanceTypes"]
    except botocore.exceptions.ClientError:
        return None  # e.g. p6e-gb200, which DescribeInstanceTypes may not list
    return described["VCpuInfo"]["DefaultVCpus"]


def _quota_value(service_quotas, code: str) -> float | None:
    """The account's applied value, else AWS's default (GetServiceQuota has none to return)."""
    try:
        quota = service_quotas.get_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]
    except service_quotas.exceptions.NoSuchResourceException:
        quota = service_quotas.get_aws_default_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]
    return quota.get("Value")  # absent when Service Quotas cannot read it (its ErrorReason says why)


def capacity_block_findings(groups: list[NodeGroup], region: str, ec2, now: datetime) -> list[Finding]:
    findings = []
    for group in groups:
        if group.capacity_type != "CAPACITY_BLOCK" or group.pool is None:
            continue
        reservation = group.pool.config.capacity_reservation_id
        check, key = f"capacity block {group.name}", f"{KEY_PREFIX}nodePools.{group.name}.capacityReservationId"
        try:
            (described,) = ec2.describe_capacity_reservations(CapacityReservationIds=[reservation])[
                "CapacityReservations"
            ]
        except botocore.exceptions.ClientError as error:
            fix = f"set {key} to a Capacity Block of this account in {region} (aws ec2 describe-capacity-reservations)"
            findings.append(problem(check, f"{reservation}: {error.response['Error']['Message']}", fix))
            continue
        if described.get("ReservationType") != "capacity-block":
            fix = f"set {key} to a Capacity Block's reservation, or {KEY_PREFIX}nodePools.{group.name}.capacityType"
            findings.append(problem(check, f"{reservation} is an On-Demand Capacity Reservation, not a block", fix))
            continue
        block = CapacityBlock(
            reservation_id=reservation,
            instance_type=described["InstanceType"],
            availability_zone=described["AvailabilityZone"],
            instance_count=described["TotalInstanceCount"],
            start=described["StartDate"],
            end=described["EndDate"],
            state=described["State"],
        )
        window = (
            f"{reservation}: {block.instance_count} x {block.instance_type} in {block.availability_zone}, "
            f"{block.state}, {_utc(block.start)} to {_utc(block.end)}"
        )
        plan, problems = block_plan(group.pool, block, now)
        if problems:
            detail = window + "; " + "; ".join(each.message for each in problems)
            fix = f"make {', '.join(each.key for each in problems)} match the block, or use a block that matches"
            findings.append(problem(check, detail, fix))
        elif plan.nodes_now:
            findings.append(ok(check, f"{window}; nodes run now, drained at {_utc(plan.drained_at)}"))
        else:
            joins = f"nodes join when it becomes active (starts {_utc(block.start)})"
            findings.append(ok(check, f"{window}; {joins}, drained at {_utc(plan.drained_at)}"))
    return findings


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


# --- an existing cluster


class Cluster(Protocol):
    """What preflight reads from a cluster (KubeCluster on a real one)."""

    def version(self) -> str: ...  # the API server's gitVersion, e.g. v1.33.4-eks-1234567

    def nodes(self, label_selector: str) -> list[dict[str, Any]]: ...  # as `kubectl get nodes -o json` items

    def storage_classes(self) -> list[str]: ...

    # What already exists of the stack's namespaces, cluster-wide objects and Helm release names
    # (components/cluster_ownership.py).
    def annotations(self, claim: ownership.Claim) -> dict[str, str] | None: ...

    def release_namespaces(self, name: str) -> list[str]: ...


class KubeCluster:
    """A cluster through the kubernetes client, from a kubeconfig (a path or its contents)."""

    def __init__(self, kubeconfig: str | None, context: str | None):
        import kubernetes

        self._client = api_client(kubeconfig, context)
        self._kubernetes = kubernetes
        live = LiveCluster(self._client)
        self.annotations, self.release_namespaces = live.annotations, live.release_namespaces

    def version(self) -> str:
        return self._kubernetes.client.VersionApi(self._client).get_code().git_version

    def nodes(self, label_selector: str) -> list[dict[str, Any]]:
        listed = self._kubernetes.client.CoreV1Api(self._client).list_node(label_selector=label_selector)
        return self._client.sanitize_for_serialization(listed)["items"]

    def storage_classes(self) -> list[str]:
        listed = self._kubernetes.client.StorageV1Api(self._client).list_storage_class()
        return [item.metadata.name for item in listed.items]


def cluster_findings(stack: Stack, cluster: Cluster, catalog: Catalog, owner: str) -> list[Finding]:
    config = stack.config
    try:
        version = cluster.version()
    except Exception as error:  # whatever the client raises, said as it is
        fix = "check kubernetes:kubeconfig and kubernetes:context (else KUBECONFIG): `kubectl get nodes` must work"
        return [problem("cluster", f"the Kubernetes API does not answer: {error}", fix)]
    findings = []
    minor = ".".join(version.lstrip("v").split("-")[0].split(".")[:2])
    expected = config.cluster.kubernetes_version
    if minor == expected:
        findings.append(ok("cluster", f"answers, Kubernetes {version}"))
    else:
        key = f"{KEY_PREFIX}cluster.kubernetesVersion"
        detail = f"runs Kubernetes {version}; the objects are validated for {expected}"
        findings.append(problem("cluster", detail, f'set {key}: "{minor}"'))
    try:
        classes = set(cluster.storage_classes())
        pools = [pool_nodes_finding(stack, pool, cluster, catalog) for pool in stack.pools.values()]
    except Exception as error:  # e.g. 403: a user limited to one namespace cannot list cluster-scoped objects
        fix = "use credentials that may list nodes and storageclasses (cluster-scoped, read-only)"
        return [*findings, problem("cluster", f"cannot list nodes or StorageClasses: {error}", fix)]
    for key, name in _storage_classes_named(stack):
        if name in classes:
            findings.append(ok(f"StorageClass {name}", f"exists ({key})"))
        else:
            fix = f"create it, or set {key} to one of {', '.join(sorted(classes)) or '(none)'}"
            findings.append(problem(f"StorageClass {name}", f"not in the cluster ({key})", fix))
    return [*findings, *pools, *ownership_findings(stack, cluster, owner)]


def ownership_findings(stack: Stack, cluster: Cluster, owner: str) -> list[Finding]:
    """What the stack would take from someone else: the check the program runs at `up` (core/render/ownership.py)."""
    check = "ownership"
    try:
        taken = ownership_problems(stack, cluster, owner)
    except Exception as error:  # e.g. 403 listing Secrets cluster-wide, where Helm keeps its releases
        fix = "use credentials that may get namespaces and cluster-scoped objects and list Secrets (read-only)"
        return [problem(check, f"cannot read what exists: {error}", fix)]
    if not taken:
        adopted = getattr(stack.config.cluster, "adopt", [])
        claims = ownership.claims(stack)
        detail = f"none of the stack's {len(claims)} namespaces and cluster-wide objects belongs to someone else"
        return [ok(check, detail + (f" (adopted: {', '.join(adopted)})" if adopted else ""))]
    return [
        problem(check, each.message.split(": ", 1)[0], f"{each.key}: {each.message.split(': ', 1)[-1]}")
        for each in taken
    ]


def _storage_classes_named(stack: Stack) -> list[tuple[str, str]]:
    config, named = stack.config, []
    if config.cluster.block_storage_class:
        named.append((f"{KEY_PREFIX}cluster.blockStorageClassName", config.cluster.block_storage_class))
    if config.model_cache.storage == "existing" and config.model_cache.storage_class_name:
        named.append((f"{KEY_PREFIX}modelCache.storageClassName", config.model_cache.storage_class_name))
    return named


def pool_nodes_finding(stack: Stack, pool: NodePool, cluster: Cluster, catalog: Catalog) -> Finding:
    """The pool's nodes as its workers' pods select them: Ready, schedulable, with the GPUs and CPU
    architecture the plan placed the workers with, and no taint the workers do not tolerate."""
    selector_text = _selector_text(pool)
    workers = [
        pod
        for serving in stack.serving
        if serving.deployment.pool is not None and serving.deployment.pool.name == pool.name
        for pod in graph_pods(serving.graph)
        if pod.requests.gpus
    ]
    arch = KUBERNETES_ARCH[pool.hardware.cpu_architecture]
    refusals = {}
    nodes = cluster.nodes(selector_text)
    for node in nodes:
        reason = _node_refusal(node, pool.instance.gpus_per_node, arch, workers)
        if reason:
            refusals[node["metadata"]["name"]] = reason
    usable = len(nodes) - len(refusals)
    check = f"nodes {pool.name}"
    expects = f"{pool.config.most_nodes} node(s) with {selector_text}, {pool.instance.gpus_per_node} GPUs, {arch}"
    if usable >= pool.config.most_nodes:
        return ok(check, f"{usable} Ready node(s) for the {expects}")
    found = f"{usable} of the {expects}" + "".join(f"; {name}: {why}" for name, why in sorted(refusals.items()))
    fix = (
        f"label the GPU nodes {selector_text} (or set {KEY_PREFIX}nodePools.{pool.name}.nodeSelector to labels "
        f"they carry), make their GPUs allocatable, or set {KEY_PREFIX}nodePools.{pool.name}.nodes"
    )
    return problem(check, found, fix)


def _selector_text(pool: NodePool) -> str:
    return ",".join(f"{key}={value}" for key, value in node_selector(pool).items())


def _node_refusal(node: dict[str, Any], gpus: int, arch: str, workers: list) -> str | None:
    status, spec = node.get("status", {}), node.get("spec", {})
    conditions = {condition["type"]: condition["status"] for condition in status.get("conditions", [])}
    if conditions.get("Ready") != "True":
        return "not Ready"
    if spec.get("unschedulable"):
        return "cordoned"
    allocatable = int(status.get("allocatable", {}).get(GPU_RESOURCE, 0))
    if allocatable < gpus:
        return f"{allocatable} allocatable {GPU_RESOURCE}, not {gpus}"
    node_arch = node["metadata"].get("labels", {}).get(ARCH_LABEL)
    if node_arch != arch:
        return f"{ARCH_LABEL}={node_arch}, not {arch}"
    for taint in spec.get("taints", []):
        if taint["effect"] in ("NoSchedule", "NoExecute") and not all(
            any(tolerates(toleration, taint) for toleration in worker.tolerations) for worker in workers
        ):
            return f"taint {taint['key']}={taint.get('value', '')}:{taint['effect']}, which the workers do not tolerate"
    return None


# --- without credentials


def would_check(stack: Stack, region: str | None) -> list[Finding]:
    """What preflight reads when it can: said plainly, with the stack's values."""
    cluster, groups = stack.config.cluster, node_groups(stack)
    if not isinstance(cluster, EksClusterConfig):
        lines = [
            ("cluster", f"answers, and runs Kubernetes {cluster.kubernetes_version}"),
            *((f"StorageClass {name}", f"exists ({key})") for key, name in _storage_classes_named(stack)),
            *(
                (f"nodes {p.name}", f"{p.config.most_nodes} Ready node(s) with {_selector_text(p)}")
                for p in stack.pools.values()
            ),
        ]
    else:
        lines = [
            ("EKS version", f"EKS in {region} offers {cluster.kubernetes_version}"),
            (
                "EKS upgrade",
                f"{cluster.name}, where it exists, is {cluster.kubernetes_version} or one minor version before",
            ),
            ("control-plane logs", f"no log group /aws/eks/{cluster.name}/cluster is left without its cluster"),
            *(
                (f"instance type {g.name}", f"{g.instance_type} is offered in {g.zone or 'the cluster AZs'}")
                for g in groups
                if g.capacity_type != "CAPACITY_BLOCK"
            ),
            ("vCPU quota", "the EC2 vCPU quotas of configs/aws-quotas.yaml cover the node groups"),
        ]
    lines += [
        (
            f"capacity block {g.name}",
            f"{g.pool.config.capacity_reservation_id} is a block of {g.nodes} x {g.instance_type}",
        )
        for g in groups
        if g.capacity_type == "CAPACITY_BLOCK" and g.pool is not None
    ]
    return [Finding(check, "would check", detail) for check, detail in lines]


# --- the command


@dataclass(frozen=True)
class Settings:
    """What the stack file says about where to look, besides the stack config."""

    region: str | None  # aws:region
    kubeconfig: str | None  # kubernetes:kubeconfig (a path or contents); None when unset or encrypted
    context: str | None  # kubernetes:context
    kubeconfig_encrypted: bool


def settings_of(entries: dict[str, Any]) -> Settings:
    kubeconfig = entries.get("kubernetes:kubeconfig")
    encrypted = isinstance(kubeconfig, dict) and set(kubeconfig) == {"secure"}
    return Settings(
        region=entries.get("aws:region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"),
        kubeconfig=None if encrypted else kubeconfig,
        context=entries.get("kubernetes:context"),
        kubeconfig_encrypted=encrypted,
    )


def chart_finding(stack: Stack, status_of: Callable[[str], int]) -> Finding:
    """Whether NGC publishes the stack's dynamo-platform chart version, which `pulumi up` installs: its
    package in NGC's Helm repository answers (`status_of(url)`: the HTTP status of a HEAD request)."""
    dynamo = stack.platform.dynamo
    check, url = f"Dynamo chart {dynamo.version}", dynamo.chart_url
    try:
        status = status_of(url)
    except OSError as error:
        return Finding(check, "skipped", f"NGC did not answer ({error}): check by hand with helm show chart {url}")
    if status == 200:
        return ok(check, f"published: {url}")
    fix = f"set {KEY_PREFIX}release.dynamo to a release whose chart NGC publishes (make check-versions lists them)"
    return problem(check, f"{url} answers HTTP {status}: `pulumi up` would fail at the platform's Helm release", fix)


def head_status(url: str) -> int:
    """The HTTP status of a HEAD request (an error status too; OSError when nothing answers)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=20) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def preflight(
    stack: Stack,
    settings: Settings,
    catalog: Catalog,
    aws: Callable[[str], AwsClients | None],
    cluster: Callable[[Settings], Cluster | None],
    now: datetime,
    owner: str = "",
    chart_status: Callable[[str], int] | None = None,
) -> list[Finding]:
    """Every check the stack calls for. `aws(region)` and `cluster(settings)` give None when there
    are no credentials: the checks they would feed are then said, not run. `chart_status(url)`: how
    NGC answers for the platform chart (None: not asked, as offline)."""
    findings = [chart_finding(stack, chart_status)] if chart_status is not None else []
    # Only a created cluster needs AWS: an existing cluster's pools take no capacity type (core/inputs/rules.py).
    if isinstance(stack.config.cluster, EksClusterConfig):
        if settings.region is None:
            fix = "set aws:region in the stack file (or AWS_REGION)"
            return [*findings, problem("region", "no AWS region: the stack file sets no aws:region", fix)]
        clients = aws(settings.region)
        if clients is None:
            return findings + would_check(stack, settings.region)
        return findings + aws_findings(stack, settings.region, clients, load_quotas(), now)
    try:
        reader = cluster(settings)
    except Exception as error:  # the client's own message says what is wrong with the kubeconfig
        fix = "set kubernetes:kubeconfig (a path or the contents) and kubernetes:context, or KUBECONFIG"
        return [*findings, problem("cluster", f"cannot load the kubeconfig: {error}", fix)]
    if reader is None:
        return findings + would_check(stack, settings.region)
    return findings + cluster_findings(stack, reader, catalog, owner)


def aws_clients(region: str) -> AwsClients | None:
    """botocore's clients (boto3 is not a dependency of the package), or None without credentials."""
    session = botocore.session.get_session()
    if session.get_credentials() is None:
        return None
    names = ("ec2", "eks", "service-quotas", "logs")
    return AwsClients(*(session.create_client(name, region_name=region) for name in names))


def kube_cluster(settings: Settings) -> Cluster | None:
    """The cluster, or None when there is no kubeconfig at all (a broken one raises: a problem)."""
    default = Path(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]).expanduser()
    if settings.kubeconfig is None and not default.exists():
        return None
    return KubeCluster(settings.kubeconfig, settings.context)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev", help="the stack to check: Pulumi.<stack>.yaml (default: dev)")
    parser.add_argument(
        "--organization",
        default=os.environ.get("PULUMI_ORGANIZATION", ownership.SELF_MANAGED_ORGANIZATION),
        help="the stack's Pulumi organization, part of the owner its objects are marked with (default: "
        "PULUMI_ORGANIZATION, else `organization`, a self-managed backend's)",
    )
    add_program_arguments(parser)
    args = parser.parse_args(argv)
    try:
        program = find_program(args.stack, args.program_dir, args.stack_dir)
    except FileNotFoundError as error:
        print(f"preflight {args.stack}: {error}", file=sys.stderr)
        return 2
    stack_file = program.stack_file
    try:
        entries = stack_config_entries(stack_file, program.directory)
    except YamlFileError as error:
        print(f"preflight {args.stack}: {error}", file=sys.stderr)
        return 1
    raw = namespace_config(entries)
    catalog = load_catalog()
    try:
        stack = build_stack(raw, catalog, with_hf_token=False)
    except ConfigError as error:
        print(f"preflight {args.stack}: {stack_file.name}: invalid stack config:\n{error}", file=sys.stderr)
        return 1
    settings = settings_of(entries)
    project = read_yaml(program.directory / "Pulumi.yaml")["name"]
    owner = ownership.owner_of(args.organization, project, args.stack)
    findings = preflight(stack, settings, catalog, aws_clients, kube_cluster, datetime.now(UTC), owner, head_status)
    if settings.kubeconfig_encrypted:
        print("kubernetes:kubeconfig is encrypted in the stack file: using KUBECONFIG or ~/.kube/config")
    for finding in findings:
        print("\n".join(finding.lines()))
    problems = sum(finding.status == "problem" for finding in findings)
    if any(finding.status == "would check" for finding in findings):
        print(
            "no credentials (AWS, or a kubeconfig): the account and the cluster were not read; the lines above say "
            "what would be checked there"
        )
    print(f"preflight {args.stack}: {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
