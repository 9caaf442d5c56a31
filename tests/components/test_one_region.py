"""One region per stack and per pool: what is checked and priced is where it is made. GptOssStack makes
everything in the stack's aws:region (an AWS provider in its opts is refused before anything is
registered); a GpuNodePool made through a provider of another region than its `region` fails the run."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pytest

from gpt_oss_infra import GptOssStack, GpuNodePool
from gpt_oss_infra.core.inputs.config import namespace_config
from tests.components.conftest import REGION
from tests.support import example_entries


def test_gpt_oss_stack_refuses_an_aws_provider_of_its_caller(engine):
    config = namespace_config(example_entries("existing-cluster"))

    def program():
        elsewhere = aws.Provider("elsewhere", region="eu-west-1")
        GptOssStack("gpt-oss-infra", {"config": config}, pulumi.ResourceOptions(providers=[elsewhere]))

    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert "GptOssStack makes, checks and prices everything in the stack's aws:region" in str(refused.value)
    assert engine.names_of("gpt-oss-infra:index:GptOssStack") == []  # refused before it was registered


def test_gpt_oss_stack_takes_no_region_argument():
    assert "region" not in GptOssStack.__init__.__annotations__["args"].__annotations__


@pytest.mark.parametrize(("provider_region", "fails"), [("eu-west-1", True), (REGION, False)])
def test_a_gpu_node_pool_fails_when_its_provider_builds_in_another_region(engine, provider_region, fails):
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}

    def program():
        provider = aws.Provider("pool-provider", region=provider_region)
        pool = GpuNodePool(
            "h200",
            {"cluster_name": "lab", "subnet_ids": ["subnet-a"], "hardware": "h200", "nodes": 1, "region": REGION},
            pulumi.ResourceOptions(providers=[provider]),
        )
        return {"name": pool.node_group_name}

    if not fails:
        assert engine.run(program) == {"name": None}  # the mock engine names no node group
        return
    with pytest.raises(Exception) as failed:
        engine.run(program)
    assert f"region is {REGION!r} but the AWS provider in opts makes the pool in 'eu-west-1'" in str(failed.value)
