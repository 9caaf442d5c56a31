"""`make preflight`: each check passes on what a ready account reports and fails, with how to fix
it, on what a not-ready one reports. AWS is botocore's Stubber on real boto3 clients: every
request preflight makes is checked against the service's model, and every canned answer against
the response's; each stubbed answer must be used (assert_no_pending_responses)."""

from __future__ import annotations

import copy
import json
import urllib.parse
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import Stubber

from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import preflight
from gpt_oss_infra.tools.preflight import AwsClients, Finding, Settings, load_quotas
from tests.support import JsonHandler, example_entries, local_kubeconfig, serving, write_stack

REGION = "us-east-2"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
ZONES = ["us-east-2a", "us-east-2b", "us-east-2c"]


class StubbedAws:
    """Real clients whose calls answer from queued responses, in order."""

    def __init__(self):
        credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": REGION}
        self.clients = AwsClients(
            ec2=boto3.client("ec2", **credentials),
            eks=boto3.client("eks", **credentials),
            service_quotas=boto3.client("service-quotas", **credentials),
            logs=boto3.client("logs", **credentials),
        )
        self.ec2, self.eks, self.quotas, self.logs = (
            Stubber(self.clients.ec2),
            Stubber(self.clients.eks),
            Stubber(self.clients.service_quotas),
            Stubber(self.clients.logs),
        )
        for stubber in (self.ec2, self.eks, self.quotas, self.logs):
            stubber.activate()

    def eks_version(self, version: str, status: str = "STANDARD_SUPPORT") -> None:
        entry = {"clusterVersion": version, "versionStatus": status, "endOfStandardSupportDate": datetime(2026, 12, 29)}
        self.eks.add_response("describe_cluster_versions", {"clusterVersions": [entry]}, {"clusterVersions": [version]})

    def live_cluster(self, version: str | None, name: str = "gptoss") -> None:
        """The stack's cluster as EKS has it: `version`, or none yet."""
        if version is None:
            self.eks.add_client_error("describe_cluster", "ResourceNotFoundException", expected_params={"name": name})
            return
        cluster = {"name": name, "version": version, "status": "ACTIVE"}
        self.eks.add_response("describe_cluster", {"cluster": cluster}, {"name": name})

    def log_groups(self, cluster: str, *names: str, retention: int | None = None) -> None:
        """CloudWatch Logs' answer for the cluster's log group name: these groups, kept `retention` days (None:
        forever, as EKS makes one)."""
        group = f"/aws/eks/{cluster}/cluster"
        kept = {"retentionInDays": retention} if retention else {}
        answer = {"logGroups": [{"logGroupName": name} | kept for name in names]}
        self.logs.add_response("describe_log_groups", answer, {"logGroupNamePrefix": group})

    def zones(self) -> None:
        filters = [{"Name": "state", "Values": ["available"]}, {"Name": "zone-type", "Values": ["availability-zone"]}]
        described = {"AvailabilityZones": [{"ZoneName": zone, "State": "available"} for zone in ZONES]}
        self.ec2.add_response("describe_availability_zones", described, {"Filters": filters})

    def offerings(self, offered: dict[str, list[str]]) -> None:
        answer = {
            "InstanceTypeOfferings": [
                {"InstanceType": name, "LocationType": "availability-zone", "Location": zone}
                for name, zones in offered.items()
                for zone in zones
            ]
        }
        request = {
            "LocationType": "availability-zone",
            "Filters": [{"Name": "instance-type", "Values": sorted(offered)}],
        }
        self.ec2.add_response("describe_instance_type_offerings", answer, request)

    def vcpus(self, instance_type: str, count: int) -> None:
        answer = {"InstanceTypes": [{"InstanceType": instance_type, "VCpuInfo": {"DefaultVCpus": count}}]}
        self.ec2.add_response("describe_instance_types", answer, {"InstanceTypes": [instance_type]})

    def quota(self, code: str, value: float, applied: bool = True) -> None:
        request = {"ServiceCode": "ec2", "QuotaCode": code}
        if not applied:
            self.quotas.add_client_error("get_service_quota", "NoSuchResourceException", expected_params=request)
        method = "get_service_quota" if applied else "get_aws_default_service_quota"
        self.quotas.add_response(method, {"Quota": {"QuotaCode": code, "Value": value}}, request)

    def block(self, reservation: str, **fields: Any) -> None:
        described = {
            "CapacityReservationId": reservation,
            "ReservationType": "capacity-block",
            "InstanceType": "p6e-gb200.36xlarge",
            "AvailabilityZone": "us-east-2b",
            "TotalInstanceCount": 9,
            "State": "scheduled",
            "StartDate": datetime(2026, 12, 1, 11, 30, tzinfo=UTC),
            "EndDate": datetime(2026, 12, 8, 11, 30, tzinfo=UTC),
        } | fields
        request = {"CapacityReservationIds": [reservation]}
        self.ec2.add_response("describe_capacity_reservations", {"CapacityReservations": [described]}, request)

    def assert_all_used(self) -> None:
        for stubber in (self.ec2, self.eks, self.quotas, self.logs):
            stubber.assert_no_pending_responses()


def stack_of(name: str, change=None):
    raw = copy.deepcopy(namespace_config(example_entries(name)))
    if change:
        change(raw)
    return build_stack(raw, preflight.load_catalog(), with_hf_token=False)


def run(
    stack, aws: StubbedAws | None = None, cluster=None, region: str | None = REGION, chart_status=None
) -> list[Finding]:
    """preflight() with these stand-ins; no AWS clients or cluster: as without credentials."""
    settings = Settings(region=region, kubeconfig=None, context=None, kubeconfig_encrypted=False)
    return preflight.preflight(
        stack,
        settings,
        preflight.load_catalog(),
        lambda _region: aws.clients if aws else None,
        lambda _settings: cluster,
        NOW,
        chart_status=chart_status,
    )


def by_check(findings: list[Finding]) -> dict[str, Finding]:
    return {finding.check: finding for finding in findings}


def dev_account_up_to_quotas(aws: StubbedAws, gpu_zones=("us-east-2a", "us-east-2b"), eks: bool = True) -> None:
    """The dev stack's answers before the quotas: 2 x m7i.2xlarge system nodes, 1 x p5en.48xlarge
    offered in `gpu_zones` (`eks`: EKS answers its version check)."""
    if eks:
        aws.eks_version("1.34")
    aws.live_cluster(None, name="gptoss-dev")
    aws.log_groups("gptoss-dev")
    aws.zones()
    aws.offerings({"m7i.2xlarge": ZONES, "p5en.48xlarge": list(gpu_zones)})
    aws.vcpus("m7i.2xlarge", 8)
    aws.vcpus("p5en.48xlarge", 192)


def ready_dev_account(aws: StubbedAws, p_quota: float = 192, standard_quota: float = 64) -> None:
    """The dev stack in an account ready for it (On-Demand quotas applied)."""
    dev_account_up_to_quotas(aws)
    aws.quota("L-1216C47A", standard_quota)
    aws.quota("L-417A185B", p_quota)


# --- AWS


def test_a_ready_account_passes_every_check():
    aws = StubbedAws()
    ready_dev_account(aws)
    findings = by_check(run(stack_of("dev"), aws))
    aws.assert_all_used()
    assert {check: finding.status for check, finding in findings.items()} == {
        "EKS version": "ok",
        "EKS upgrade": "ok",
        "control-plane logs": "ok",
        "instance type system": "ok",
        "instance type gpu": "ok",
        "vCPU quota Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances": "ok",
        "vCPU quota Running On-Demand P instances": "ok",
    }
    assert findings["EKS version"].detail == "1.34 is in standard support until 2026-12-29"
    assert findings["instance type gpu"].detail == (
        "p5en.48xlarge is offered in us-east-2a, us-east-2b (not us-east-2c: no node there)"
    )
    p_quota = findings["vCPU quota Running On-Demand P instances"].detail
    assert p_quota.startswith("192 vCPUs (L-417A185B) for the 192 this stack needs (gpu 1 x p5en.48xlarge = 192)")


def test_a_quota_below_what_the_stack_needs_is_a_problem_with_the_request_to_raise_it():
    aws = StubbedAws()
    ready_dev_account(aws, p_quota=96)
    finding = by_check(run(stack_of("dev"), aws))["vCPU quota Running On-Demand P instances"]
    assert finding.status == "problem"
    assert finding.detail.startswith("96 vCPUs (L-417A185B) for the 192 this stack needs")
    assert finding.fix == (
        "ask for at least 192: aws service-quotas request-service-quota-increase --service-code ec2 "
        "--quota-code L-417A185B --desired-value 192"
    )


def test_an_account_without_an_applied_quota_is_read_at_aws_default():
    aws = StubbedAws()
    dev_account_up_to_quotas(aws, gpu_zones=ZONES)
    aws.quota("L-1216C47A", 5, applied=False)  # AWS's default for a new account
    aws.quota("L-417A185B", 0, applied=False)
    findings = by_check(run(stack_of("dev"), aws))
    aws.assert_all_used()
    standard = findings["vCPU quota Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"]
    assert standard.status == "problem" and standard.detail.startswith("5 vCPUs (L-1216C47A) for the 16 ")
    assert findings["vCPU quota Running On-Demand P instances"].status == "problem"


def test_spot_pools_count_against_their_spot_quota_and_an_unlisted_family_is_skipped():
    def spot(raw):
        raw["nodePools"]["gpu"] |= {"capacityType": "SPOT"}

    aws = StubbedAws()
    dev_account_up_to_quotas(aws, gpu_zones=ZONES)
    aws.quota("L-1216C47A", 64)
    aws.quota("L-C4BD4855", 384)  # All P5 Spot Instance Requests
    findings = by_check(run(stack_of("dev", spot), aws))
    aws.assert_all_used()
    assert findings["vCPU quota All P5 Spot Instance Requests"].status == "ok"
    quotas = load_quotas()
    assert quotas.quota_for("p6-b200.48xlarge", "SPOT") is None  # in no published Spot quota
    assert quotas.quota_for("p6-b200.48xlarge", "ON_DEMAND").code == "L-417A185B"
    assert quotas.quota_for("hpc7g.16xlarge", "ON_DEMAND") is None  # "hpc" is not "h"


def test_an_instance_type_not_offered_in_a_pinned_zone_names_the_zones_that_offer_it():
    def pinned(raw):
        raw["nodePools"]["gpu"] |= {"availabilityZone": "us-east-2c"}

    aws = StubbedAws()
    ready_dev_account(aws)
    finding = by_check(run(stack_of("dev", pinned), aws))["instance type gpu"]
    assert finding.status == "problem"
    assert finding.detail == "p5en.48xlarge is offered in none of us-east-2c"
    assert finding.fix == "set gpt-oss-infra:nodePools.gpu.availabilityZone to one of us-east-2a, us-east-2b"


def test_an_eks_version_the_region_does_not_offer_lists_those_it_does():
    aws = StubbedAws()
    aws.eks.add_response("describe_cluster_versions", {"clusterVersions": []}, {"clusterVersions": ["1.33"]})
    offered = [{"clusterVersion": version, "versionStatus": "STANDARD_SUPPORT"} for version in ("1.34", "1.35")]
    aws.eks.add_response("describe_cluster_versions", {"clusterVersions": offered}, {})
    finding = preflight.eks_version_finding("1.33", REGION, aws.clients.eks)
    aws.assert_all_used()
    assert finding == Finding(
        "EKS version",
        "problem",
        "EKS in us-east-2 does not offer 1.33",
        "set gpt-oss-infra:cluster.kubernetesVersion to one of 1.34, 1.35",
    )


@pytest.mark.parametrize(
    ("live", "status", "detail", "fix"),
    [
        (None, "ok", "no cluster gptoss yet: `pulumi up` creates it at 1.36", ""),
        ("1.36", "ok", "gptoss runs 1.36", ""),
        ("1.35", "ok", "gptoss runs 1.35: `pulumi up` updates it to 1.36", ""),
        ("1.33", "problem", "gptoss runs 1.33: EKS updates a control plane one minor version at a time, so "
         "`pulumi up` to 1.36 would fail at the cluster", "set gpt-oss-infra:cluster.kubernetesVersion to 1.34 and "
         "`pulumi up`, then step on one minor version per update"),
        ("1.37", "problem", "gptoss runs 1.37: EKS cannot move a cluster back to 1.36",
         "set gpt-oss-infra:cluster.kubernetesVersion to 1.37"),
    ],
)  # fmt: skip
def test_a_live_cluster_moves_one_minor_version_per_up(live, status, detail, fix):
    aws = StubbedAws()
    aws.live_cluster(live)
    finding = preflight.eks_upgrade_finding("gptoss", "1.36", aws.clients.eks)
    aws.assert_all_used()
    assert (finding.status, finding.detail, finding.fix or "") == (status, detail, fix)


@pytest.mark.parametrize(
    ("groups", "live", "status", "detail", "fix"),
    [
        ((), False, "ok", "no log group /aws/eks/gptoss/cluster yet: `pulumi up` creates it", ""),
        (("/aws/eks/gptoss/cluster-other",), False, "ok", "no log group /aws/eks/gptoss/cluster yet", ""),
        (("/aws/eks/gptoss/cluster",), True, "ok", "/aws/eks/gptoss/cluster is the live cluster gptoss's", ""),
        (("/aws/eks/gptoss/cluster",), False, "problem", "/aws/eks/gptoss/cluster exists, but no cluster gptoss: an "
         "earlier cluster's, which EKS created again after its destroy; `pulumi up` would fail creating the stack's "
         "own", "aws logs delete-log-group --log-group-name /aws/eks/gptoss/cluster"),
    ],
)  # fmt: skip
def test_a_log_group_an_earlier_cluster_of_the_name_left_is_a_problem(groups, live, status, detail, fix):
    """EKS writes a deleted cluster's last control-plane logs after `pulumi destroy` deleted their log group, and
    creates it again; the next `up` of a cluster of that name fails creating its own (ResourceAlreadyExists)."""
    aws = StubbedAws()
    aws.log_groups("gptoss", *groups)
    if "/aws/eks/gptoss/cluster" in groups:
        aws.live_cluster("1.36" if live else None)
    finding = preflight.log_group_finding("gptoss", aws.clients.logs, aws.clients.eks)
    aws.assert_all_used()
    assert (finding.status, finding.fix or "") == (status, fix)
    assert finding.detail.startswith(detail)


def test_the_stacks_own_log_group_without_its_cluster_is_not_a_leftover():
    """An `up` that made the log group and stopped before the cluster leaves the stack's own group, which keeps
    its logs logRetentionDays; the one EKS makes keeps them forever. Deleting the stack's would be wrong."""
    aws = StubbedAws()
    aws.log_groups("gptoss", "/aws/eks/gptoss/cluster", retention=30)
    finding = preflight.log_group_finding("gptoss", aws.clients.logs, aws.clients.eks)
    aws.assert_all_used()
    assert (finding.status, finding.detail) == (
        "ok",
        "/aws/eks/gptoss/cluster keeps its logs 30 days: made by a program, not EKS",
    )


def test_an_eks_version_in_extended_support_passes_and_says_it_costs_more():
    aws = StubbedAws()
    entry = {
        "clusterVersion": "1.31",
        "versionStatus": "EXTENDED_SUPPORT",
        "endOfExtendedSupportDate": datetime(2026, 11, 26),
    }
    aws.eks.add_response("describe_cluster_versions", {"clusterVersions": [entry]}, {"clusterVersions": ["1.31"]})
    finding = preflight.eks_version_finding("1.31", REGION, aws.clients.eks)
    assert finding.status == "ok"
    assert finding.detail == (
        "1.31 is in extended support until 2026-11-26, billed at EKS's extended-support rate per cluster hour"
    )


def test_an_unsupported_eks_version_is_a_problem():
    aws = StubbedAws()
    aws.eks_version("1.28", status="UNSUPPORTED")
    assert preflight.eks_version_finding("1.28", REGION, aws.clients.eks).status == "problem"


# --- Capacity Blocks (the gb200 example: 9 x p6e-gb200.36xlarge in us-east-2b)

RESERVATION = "cr-0a1b2c3d4e5f60718"


def gb200_block(aws: StubbedAws, **fields: Any) -> Finding:
    """The gb200 stack's block finding (its system node group's checks answered as ready)."""
    aws.eks_version("1.36")
    aws.live_cluster(None, name="gptoss-gb200")
    aws.log_groups("gptoss-gb200")
    aws.zones()
    aws.offerings({"m7i.2xlarge": ZONES})
    aws.vcpus("m7i.2xlarge", 8)
    aws.quota("L-1216C47A", 64)
    aws.block(RESERVATION, **fields)
    findings = by_check(run(stack_of("gb200"), aws))
    aws.assert_all_used()
    assert "vCPU quota Running On-Demand P instances" not in findings  # a block uses no On-Demand quota
    return findings["capacity block gb200"]


def test_a_scheduled_block_that_matches_says_when_its_nodes_come_and_go():
    finding = gb200_block(StubbedAws())
    assert finding.status == "ok"
    assert finding.detail == (
        f"{RESERVATION}: 9 x p6e-gb200.36xlarge in us-east-2b, scheduled, 2026-12-01 11:30 UTC to "
        "2026-12-08 11:30 UTC; nodes join when it becomes active (starts 2026-12-01 11:30 UTC), drained at "
        "2026-12-08 10:20 UTC"
    )


@pytest.mark.parametrize(
    ("fields", "message", "key"),
    [
        ({"AvailabilityZone": "us-east-2a"}, f"{RESERVATION} is in us-east-2a, not us-east-2b", "availabilityZone"),
        (
            {"InstanceType": "p6-b200.48xlarge"},
            f"{RESERVATION} reserves p6-b200.48xlarge, not the pool's p6e-gb200.36xlarge",
            "capacityReservationId",
        ),
        ({"TotalInstanceCount": 4}, f"{RESERVATION} holds 4 instances, not 9", "nodes"),
        (
            {"State": "expired", "StartDate": NOW - timedelta(days=8), "EndDate": NOW - timedelta(days=1)},
            f"{RESERVATION} is expired (ended 2026-11-21 12:00 UTC)",
            "capacityReservationId",
        ),
    ],
)
def test_a_block_that_does_not_match_the_pool_is_a_problem_naming_the_key(fields, message, key):
    finding = gb200_block(StubbedAws(), **fields)
    assert finding.status == "problem"
    assert message in finding.detail
    assert f"gpt-oss-infra:nodePools.gb200.{key}" in finding.fix


def test_a_reservation_that_is_not_a_block_or_does_not_exist_is_a_problem():
    finding = gb200_block(StubbedAws(), ReservationType="default")
    assert finding.status == "problem" and "not a block" in finding.detail
    aws = StubbedAws()
    message = f"The capacity reservation ID '{RESERVATION}' does not exist"
    aws.ec2.add_client_error(
        "describe_capacity_reservations",
        "InvalidCapacityReservationId.NotFound",
        message,
        expected_params={"CapacityReservationIds": [RESERVATION]},
    )
    groups = preflight.node_groups(stack_of("gb200"))
    (finding,) = preflight.capacity_block_findings(groups, REGION, aws.clients.ec2, NOW)
    assert finding.status == "problem"
    assert finding.detail == f"{RESERVATION}: {message}"
    assert finding.fix.startswith("set gpt-oss-infra:nodePools.gb200.capacityReservationId to a Capacity Block")


def test_a_cpu_pool_counts_against_the_quota_at_its_most_nodes():
    """The trial's elastic cpu pool (2 x m7i.2xlarge at its most) is a node group preflight checks, beside the
    three system nodes: its offering and its vCPUs in the On-Demand standard quota (40, not 24)."""
    trial = build_stack(
        namespace_config(example_entries("trial")),
        preflight.load_catalog(),
        with_hf_token=False,
        api_key_clients=["ci"],
    )
    groups = {(g.name, g.instance_type, g.nodes, g.pool) for g in preflight.node_groups(trial)}
    assert groups == {("system", "m7i.2xlarge", 3, None), ("workers", "m7i.2xlarge", 2, None)}


# --- an existing cluster (the existing-cluster example: 1 x H200 node, classes gp3 and shared-rwx)


class FakeCluster:
    def __init__(
        self, version="v1.36.2-eks-2b5f6a1", classes=("gp3", "shared-rwx"), nodes=None, down=False, existing=None
    ):
        self._version, self._classes, self._down = version, list(classes), down
        self._nodes = nodes if nodes is not None else [h200_node("gpu-node-1")]
        self._existing = existing or {}  # "<Kind>/<name>" -> its annotations; Helm release name -> namespaces
        self.selectors: list[str] = []

    def annotations(self, claim) -> dict[str, str] | None:
        return self._existing.get(claim.ref)

    def release_namespaces(self, name: str) -> list[str]:
        return self._existing.get(name, [])

    def version(self) -> str:
        if self._down:
            raise ConnectionRefusedError("[Errno 111] Connection refused")
        return self._version

    def nodes(self, label_selector: str) -> list[dict[str, Any]]:
        self.selectors.append(label_selector)
        return self._nodes

    def storage_classes(self) -> list[str]:
        return self._classes


def h200_node(name: str, gpus: str = "8", arch: str = "amd64", ready: str = "True", taints=None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": "NVIDIA-H200", "kubernetes.io/arch": arch}},
        "spec": {"taints": taints or [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"nvidia.com/gpu": gpus}, "conditions": [{"type": "Ready", "status": ready}]},
    }


def test_an_existing_cluster_that_is_ready_passes():
    cluster = FakeCluster()
    findings = by_check(run(stack_of("existing-cluster"), cluster=cluster, region=None))
    assert {check: finding.status for check, finding in findings.items()} == {
        "cluster": "ok",
        "StorageClass gp3": "ok",
        "StorageClass shared-rwx": "ok",
        "nodes h200": "ok",
        "ownership": "ok",
    }
    assert cluster.selectors == ["nvidia.com/gpu.product=NVIDIA-H200"]  # the pool's nodeSelector
    assert findings["nodes h200"].detail == (
        "1 Ready node(s) for the 1 node(s) with nvidia.com/gpu.product=NVIDIA-H200, 8 GPUs, amd64"
    )


def test_an_existing_cluster_that_does_not_answer_is_a_problem():
    (finding,) = run(stack_of("existing-cluster"), cluster=FakeCluster(down=True), region=None)
    assert finding.status == "problem"
    assert finding.detail == "the Kubernetes API does not answer: [Errno 111] Connection refused"


def test_another_kubernetes_version_or_a_missing_storage_class_is_a_problem():
    cluster = FakeCluster(version="v1.31.2", classes=["gp2"])
    findings = by_check(run(stack_of("existing-cluster"), cluster=cluster, region=None))
    assert findings["cluster"].fix == 'set gpt-oss-infra:cluster.kubernetesVersion: "1.31"'
    assert findings["StorageClass shared-rwx"].status == "problem"
    fix = "create it, or set gpt-oss-infra:modelCache.storageClassName to one of gp2"
    assert findings["StorageClass shared-rwx"].fix == fix


@pytest.mark.parametrize(
    ("node", "reason"),
    [
        (h200_node("n1", ready="False"), "n1: not Ready"),
        (h200_node("n1", gpus="4"), "n1: 4 allocatable nvidia.com/gpu, not 8"),
        (h200_node("n1", arch="arm64"), "n1: kubernetes.io/arch=arm64, not amd64"),
        (
            h200_node("n1", taints=[{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]),
            "n1: taint dedicated=training:NoSchedule, which the workers do not tolerate",
        ),
    ],
)
def test_a_node_the_workers_cannot_use_is_a_problem_naming_why(node, reason):
    findings = by_check(run(stack_of("existing-cluster"), cluster=FakeCluster(nodes=[node]), region=None))
    finding = findings["nodes h200"]
    assert finding.status == "problem"
    assert finding.detail == f"0 of the 1 node(s) with nvidia.com/gpu.product=NVIDIA-H200, 8 GPUs, amd64; {reason}"
    assert "gpt-oss-infra:nodePools.h200.nodeSelector" in finding.fix


def test_a_namespace_or_release_name_someone_else_has_is_a_problem_naming_the_key():
    cluster = FakeCluster(existing={"Namespace/dynamo-system": {}, "dynamo-platform": ["team-a"]})
    findings = [f for f in run(stack_of("existing-cluster"), cluster=cluster, region=None) if f.check == "ownership"]
    assert [(f.status, f.detail) for f in findings] == [
        ("problem", "Namespace dynamo-system exists in the cluster and this stack did not make it"),
        ("problem", "a Helm release named dynamo-platform already runs in namespace team-a"),
    ]
    assert findings[0].fix.startswith("gpt-oss-infra:platform.namespace: `pulumi up` would fail to create it")
    adopted = stack_of("existing-cluster", lambda raw: raw["cluster"].update(adopt=["Namespace/dynamo-system"]))
    (finding,) = [f for f in run(adopted, cluster=FakeCluster(existing={"Namespace/dynamo-system": {}}), region=None)
                  if f.check == "ownership"]  # fmt: skip
    assert (finding.status, finding.detail) == (
        "ok",
        "none of the stack's 6 namespaces and cluster-wide objects belongs to someone else "
        "(adopted: Namespace/dynamo-system)",
    )


def test_no_node_with_the_pools_labels_is_a_problem():
    findings = by_check(run(stack_of("existing-cluster"), cluster=FakeCluster(nodes=[]), region=None))
    assert findings["nodes h200"].status == "problem"


# --- the command


def test_without_credentials_it_says_what_it_would_check_and_exits_0(monkeypatch, capsys, tmp_path):
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-role lookup
    monkeypatch.setattr(preflight, "head_status", lambda _url: 200)  # NGC publishes the chart (no network here)
    assert preflight.main(["--stack", "gb200"]) == 0
    out = capsys.readouterr().out
    assert "Dynamo chart 1.6.1: published: https://helm.ngc.nvidia.com/" in out
    assert f"would check capacity block gb200: {RESERVATION} is a block of 9 x p6e-gb200.36xlarge" in out
    assert "would check EKS version: EKS in us-east-2 offers 1.36" in out
    assert "would check EKS upgrade: gptoss-gb200, where it exists, is 1.36 or one minor version before" in out
    assert "the account and the cluster were not read" in out


def test_a_problem_makes_it_exit_1_with_the_fix_on_the_next_line(monkeypatch, capsys):
    aws = StubbedAws()
    ready_dev_account(aws, p_quota=0)
    monkeypatch.setattr(preflight, "aws_clients", lambda _region: aws.clients)
    monkeypatch.setattr(preflight, "head_status", lambda _url: 200)  # NGC publishes the chart (no network here)
    assert preflight.main(["--stack", "dev"]) == 1
    out = capsys.readouterr().out.splitlines()
    index = next(i for i, line in enumerate(out) if line.startswith("problem     vCPU quota Running On-Demand P"))
    assert out[index + 1].strip().startswith("fix: ask for at least 192")
    assert out[-1] == "preflight dev: 1 problem(s)"


def test_an_invalid_stack_is_refused_naming_the_file_and_the_key(tmp_path, capsys):
    entries = copy.deepcopy(example_entries("dev"))
    entries["gpt-oss-infra:nodePools"]["gpu"]["capacityType"] = "RESERVED"
    write_stack(tmp_path, "broken", entries)
    assert preflight.main(["--stack", "broken", "--stack-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Pulumi.broken.yaml: invalid stack config" in err
    assert "gpt-oss-infra:nodePools.gpu.capacityType" in err


def test_the_kubernetes_client_reads_what_the_checks_expect(tmp_path):
    """KubeCluster through the real kubernetes client, against a local stand-in API server: the
    paths and label selector it asks for, and nodes in `kubectl get nodes -o json` form."""
    node = h200_node("gpu-node-1")
    answers = {
        "/version/": {  # every field the client requires, as an EKS API server reports them
            "major": "1",
            "minor": "33",
            "gitVersion": "v1.33.4-eks-2b5f6a1",
            "gitCommit": "2b5f6a1",
            "gitTreeState": "clean",
            "buildDate": "2026-10-01T00:00:00Z",
            "goVersion": "go1.24.6",
            "compiler": "gc",
            "platform": "linux/amd64",
        },
        "/api/v1/nodes": {"apiVersion": "v1", "kind": "NodeList", "metadata": {}, "items": [node]},
        "/apis/storage.k8s.io/v1/storageclasses": {
            "kind": "StorageClassList",
            "metadata": {},
            "items": [{"metadata": {"name": "gp3"}, "provisioner": "ebs.csi.aws.com"}],
        },
    }
    asked = []

    class Api(JsonHandler):
        def do_GET(self):
            path, _, query = self.path.partition("?")
            asked.append((path, urllib.parse.parse_qs(query)))
            self.reply(answers[path])

    with serving(Api) as port:
        kubeconfig = local_kubeconfig(port)
        path = tmp_path / "kubeconfig"
        path.write_text(json.dumps(kubeconfig))
        # A path, or the contents: YAML, or one-line JSON (`pulumi stack output kubeconfig`).
        for source in (str(path), path.read_text(), yaml.safe_dump(kubeconfig)):
            cluster = preflight.KubeCluster(source, "lab")
            assert cluster.version() == "v1.33.4-eks-2b5f6a1"
            assert cluster.storage_classes() == ["gp3"]
            assert cluster.nodes("nvidia.com/gpu.product=NVIDIA-H200") == [node]
    assert ("/api/v1/nodes", {"labelSelector": ["nvidia.com/gpu.product=NVIDIA-H200"]}) in asked


def test_a_kubeconfig_that_cannot_be_loaded_is_a_problem_not_a_skip():
    settings = Settings(region=None, kubeconfig="/nowhere/kubeconfig", context=None, kubeconfig_encrypted=False)
    findings = preflight.preflight(
        stack_of("existing-cluster"), settings, preflight.load_catalog(), lambda _: None, preflight.kube_cluster, NOW
    )
    (finding,) = findings
    assert finding.status == "problem" and finding.detail.startswith(
        "cannot load the kubeconfig: no kubeconfig file at /nowhere/kubeconfig"
    )


def test_a_cluster_that_refuses_to_list_nodes_is_a_problem():
    class Forbidden(FakeCluster):
        def nodes(self, label_selector):
            raise PermissionError("(403) Forbidden: nodes is forbidden")

    findings = by_check(run(stack_of("existing-cluster"), cluster=Forbidden(), region=None))
    assert findings["cluster"].status == "problem"
    assert findings["cluster"].detail == "cannot list nodes or StorageClasses: (403) Forbidden: nodes is forbidden"


def test_aws_refusing_a_call_is_a_problem_of_that_check_and_the_others_still_run():
    aws = StubbedAws()
    aws.eks.add_client_error(
        "describe_cluster_versions", "AccessDeniedException", "not authorized: eks:DescribeClusterVersions"
    )
    dev_account_up_to_quotas(aws, gpu_zones=ZONES, eks=False)  # EKS refused above
    aws.quota("L-1216C47A", 64)
    aws.quotas.add_response(  # 200, but no value: Service Quotas says why in ErrorReason
        "get_service_quota",
        {"Quota": {"QuotaCode": "L-417A185B", "ErrorReason": {"ErrorCode": "SERVICE_QUOTA_NOT_AVAILABLE_ERROR"}}},
        {"ServiceCode": "ec2", "QuotaCode": "L-417A185B"},
    )
    findings = by_check(run(stack_of("dev"), aws))
    aws.assert_all_used()
    assert findings["EKS version"].status == "problem"
    assert "AccessDeniedException" in findings["EKS version"].detail
    assert findings["instance type gpu"].status == "ok"
    assert findings["vCPU quota Running On-Demand P instances"].status == "skipped"


# --- the Dynamo chart `pulumi up` installs


def test_without_credentials_the_chart_is_still_checked_on_every_kind_of_cluster():
    """NGC's answer needs no credentials: it is kept beside what would be checked, on EKS as on an existing cluster."""
    for name in ("gb200", "existing-cluster"):
        findings = run(stack_of(name), chart_status=lambda _url: 404)
        chart = [finding for finding in findings if finding.check.startswith("Dynamo chart")]
        assert [finding.status for finding in chart] == ["problem"], (name, findings)
        assert any(finding.status == "would check" for finding in findings), name
    findings = run(stack_of("gb200"), region=None, chart_status=lambda _url: 404)
    assert [finding.check for finding in findings] == ["Dynamo chart 1.6.1", "region"]


def test_the_platform_chart_is_published_or_the_first_up_would_fail():
    stack = stack_of("dev")
    url = "https://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform-1.6.1.tgz"
    asked: list[str] = []

    def status(code):
        return lambda checked: asked.append(checked) or code

    assert preflight.chart_finding(stack, status(200)) == Finding("Dynamo chart 1.6.1", "ok", f"published: {url}")
    missing = preflight.chart_finding(stack, status(404))
    assert (missing.status, missing.detail) == (
        "problem",
        f"{url} answers HTTP 404: `pulumi up` would fail at the platform's Helm release",
    )
    assert asked == [url, url]

    def unreachable(_url):
        raise OSError("Network is unreachable")

    skipped = preflight.chart_finding(stack, unreachable)
    assert skipped.status == "skipped" and f"helm show chart {url}" in skipped.detail


def test_head_status_reads_what_a_server_answers():
    class Charts(JsonHandler):
        def do_HEAD(self):
            self.send_response(200 if self.path.endswith("-1.6.1.tgz") else 404)
            self.end_headers()

    with serving(Charts) as port:
        assert preflight.head_status(f"http://127.0.0.1:{port}/charts/dynamo-platform-1.6.1.tgz") == 200
        assert preflight.head_status(f"http://127.0.0.1:{port}/charts/dynamo-platform-9.9.9.tgz") == 404
