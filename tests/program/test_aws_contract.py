"""Every AWS request the real program plans is one the AWS API accepts, as botocore's models state
it (tools/aws_contract.py, configs/aws-api/mapping.yaml); and the mistakes a config or a change
to the program could make in those requests are caught, each named in full."""

from __future__ import annotations

import copy
import dataclasses
import functools
import shutil
from collections.abc import Callable

import pytest

import gpt_oss_infra.core.inputs.catalog as catalog_module
from gpt_oss_infra.components import gpt_oss_stack
from gpt_oss_infra.core.checks.aws_contract import RequestProblem, load_mapping, resource_problems
from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR
from gpt_oss_infra.tools.plan import as_preview
from gpt_oss_infra.tools.pulumi_engine import ProgramRun, run_program
from tests.support import ROOT, eks_stack_names, engine_config, example_entries, run_entries, stack_names

# The stacks whose cluster, network and node groups the program creates in AWS.
EKS_STACKS = eks_stack_names()


def _run(stack: str) -> ProgramRun:
    run = run_entries(example_entries(stack), stack=stack)  # the same run the other tests read
    assert run.error is None, run.error
    return run


@pytest.mark.parametrize("stack", EKS_STACKS)
def test_aws_accepts_every_request_the_stack_plans(stack):
    problems = [str(problem) for resource in as_preview(_run(stack)) for problem in resource_problems(resource)]
    assert problems == []


def test_every_aws_type_a_stack_registers_is_checked_or_listed_with_a_reason():
    mapping = load_mapping()
    types = {resource.type for stack in stack_names() for resource in as_preview(_run(stack))}
    assert types, "no stack registers an AWS resource: the check would check nothing"
    assert sorted(type_ for type_ in types if not mapping.covers(type_)) == []
    assert all(reason.strip() for reason in mapping.not_checked.values())


# --- mistakes, each on a copy of a resource a stack registers


def problems_after(stack: str, name: str, change: Callable[[dict], None]) -> list[RequestProblem]:
    resource = {r.name: r for r in as_preview(_run(stack))}[name]
    inputs = copy.deepcopy(resource.inputs)
    change(inputs)
    return list(resource_problems(dataclasses.replace(resource, inputs=inputs)))


def assert_one(found: list[RequestProblem], resource: str, field: str, member: str, value, allowed: str) -> None:
    """Exactly one problem, whose message names the resource, the field, the value and what is allowed."""
    assert len(found) == 1, [str(problem) for problem in found]
    message = str(found[0])
    shown = "unset" if value is None else repr(value)
    for part in (resource, f"{field} -> {member} = {shown}", allowed):
        assert part in message, (part, message)


def test_an_ami_type_eks_does_not_list():
    found = problems_after("prod", "gptoss-nodes-gpu", lambda inputs: inputs.update(amiType="AL2023_x86_64_GPU"))
    allowed = "one of AMITypes: AL2_x86_64, AL2_x86_64_GPU, AL2_ARM_64, CUSTOM,"
    assert_one(found, "gptoss-nodes-gpu", "amiType", "eks:CreateNodegroup amiType", "AL2023_x86_64_GPU", allowed)


def test_a_capacity_type_eks_does_not_list():
    found = problems_after("gb200", "gptoss-nodes-gb200", lambda inputs: inputs.update(capacityType="RESERVED"))
    allowed = "one of CapacityTypes: ON_DEMAND, SPOT, CAPACITY_BLOCK"
    assert_one(found, "gptoss-nodes-gb200", "capacityType", "eks:CreateNodegroup capacityType", "RESERVED", allowed)


def test_a_throughput_per_tib_fsx_refuses_for_persistent_2():
    """200 MB/s/TiB exists, for PERSISTENT_1; the program's file systems are PERSISTENT_2."""
    found = problems_after(
        "gb200", "gptoss-model-storage-fsx", lambda inputs: inputs.update(perUnitStorageThroughput=200)
    )
    member = "fsx:CreateFileSystem LustreConfiguration.PerUnitStorageThroughput"
    allowed = "one of 125, 250, 500, 1000 when LustreConfiguration.DeploymentType is PERSISTENT_2"
    assert_one(found, "gptoss-model-storage-fsx", "perUnitStorageThroughput", member, 200, allowed)


def test_a_log_retention_cloudwatch_does_not_offer():
    found = problems_after("dev", "gptoss-eks-logs", lambda inputs: inputs.update(retentionInDays=45))
    allowed = "one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827,"
    assert_one(found, "gptoss-eks-logs", "retentionInDays", "logs:PutRetentionPolicy retentionInDays", 45, allowed)


def test_a_launch_template_market_type_outside_the_enum():
    def market(inputs):
        inputs["instanceMarketOptions"]["marketType"] = "capacity_block"

    found = problems_after("gb200", "gptoss-nodes-gb200-template", market)
    member = "ec2:CreateLaunchTemplate LaunchTemplateData.InstanceMarketOptions.MarketType"
    allowed = "one of MarketType: spot, capacity-block, interruptible-capacity-reservation, on-demand"
    assert_one(
        found, "gptoss-nodes-gb200-template", "instanceMarketOptions.marketType", member, "capacity_block", allowed
    )


def test_an_instance_type_ec2_does_not_have_in_the_launch_template_or_the_node_group():
    found = problems_after(
        "gb200", "gptoss-nodes-gb200-template", lambda inputs: inputs.update(instanceType="p6e-gb200.72xlarge")
    )
    member = "ec2:CreateLaunchTemplate LaunchTemplateData.InstanceType"
    allowed = "values of InstanceType (closest: p6e-gb200.36xlarge"
    assert_one(found, "gptoss-nodes-gb200-template", "instanceType", member, "p6e-gb200.72xlarge", allowed)
    found = problems_after(
        "staging", "gptoss-nodes-gpu", lambda inputs: inputs.update(instanceTypes=["p6-b200.4xlarge"])
    )
    member = "eks:CreateNodegroup instanceTypes[0]"
    assert_one(found, "gptoss-nodes-gpu", "instanceTypes[0]", member, "p6-b200.4xlarge", "values of ec2 InstanceType")


def test_a_missing_required_member():
    found = problems_after("prod", "gptoss-nodes-gpu", lambda inputs: inputs.pop("nodeRoleArn"))
    allowed = "nodeRole set: CreateNodegroupRequest requires clusterName, nodegroupName, subnets, nodeRole"
    assert_one(found, "gptoss-nodes-gpu", "nodeRoleArn", "eks:CreateNodegroup nodeRole", None, allowed)


def test_an_efa_interface_type_ec2_does_not_document():
    def interface(inputs):
        inputs["networkInterfaces"][1]["interfaceType"] = "efa_only"

    found = problems_after("b200-disagg", "gptoss-nodes-b200-template", interface)
    member = "ec2:CreateLaunchTemplate LaunchTemplateData.NetworkInterfaces[1].InterfaceType"
    allowed = "one of interface, efa, efa-only ('Valid values: interface | efa | efa-only')"
    assert_one(found, "gptoss-nodes-b200-template", "networkInterfaces[1].interfaceType", member, "efa_only", allowed)


def test_a_subnet_id_from_the_config_is_checked_too():
    """h200 runs in existing subnets: their ids reach the EFS mount targets as written."""
    found = problems_after(
        "h200", "gptoss-model-storage-efs-0", lambda inputs: inputs.update(subnetId="subnet-0AAAAAAAAAAAAAAA1")
    )
    allowed = "SubnetId matching ^subnet-[0-9a-f]{8,40}$"
    assert_one(
        found,
        "gptoss-model-storage-efs-0",
        "subnetId",
        "efs:CreateMountTarget SubnetId",
        "subnet-0AAAAAAAAAAAAAAA1",
        allowed,
    )


@pytest.mark.parametrize(
    ("written", "mistake", "key", "allowed"),
    [
        ("AL2023_ARM_64_NVIDIA", "AL2023_ARM64_NVIDIA", "gb200.amiType", "AMI types botocore's eks model lists"),
        (
            "p6e-gb200.36xlarge:",
            "p6e-gb200.72xlarge:",
            "gb200.instanceTypes.p6e-gb200.72xlarge",
            "EC2 instance types botocore's ec2 model lists (closest: p6e-gb200.36xlarge",
        ),
    ],
)
def test_a_catalog_entry_no_stack_uses_is_checked_before_anything_is_registered(
    tmp_path, monkeypatch, written, mistake, key, allowed
):
    """The mistakes a person makes in configs/hardware.yaml, in an entry the planned stack (dev, on
    B200) does not use: the catalog is refused as it loads, naming the entry."""
    configs = tmp_path / "configs"
    shutil.copytree(CONFIG_DIR, configs)
    hardware = configs / "hardware.yaml"
    hardware.write_text(hardware.read_text().replace(written, mistake))
    # Where the program loads it: GptOssStack.
    monkeypatch.setattr(gpt_oss_stack, "load_catalog", functools.partial(catalog_module.load_catalog, configs))
    run = run_program(ROOT / "__main__.py", "gpt-oss-infra", "dev", *engine_config(example_entries("dev")))
    assert run.resources == []
    assert str(run.error).startswith(f"{hardware}: {key}: {mistake.rstrip(':')!r} is not one of the ")
    assert allowed in str(run.error)
