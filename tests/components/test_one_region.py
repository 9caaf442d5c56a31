"""One region per stack and per pool: what is checked and priced is where it is made. GptOssStack makes
everything in the stack's aws:region (an AWS provider in its opts is refused before anything is
registered); a GpuNodePool whose AWS provider builds in another region than the one it is checked for (its
`region`, else aws:region) is refused before it is registered."""

from __future__ import annotations

from types import SimpleNamespace

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


POOL = {"cluster_name": "lab", "subnet_ids": ["subnet-a"], "hardware": "h200", "nodes": 1}


@pytest.mark.parametrize(
    ("region", "provider_region", "refusal"),
    [
        (REGION, "eu-west-1", f"region is {REGION!r}, but the AWS provider of opts (or its parent) makes the pool in"),
        (
            None,
            "eu-west-1",
            f"aws:region is {REGION!r} (region not given), but the AWS provider of opts (or its parent) makes",
        ),
        ("eu-west-1", None, "region is 'eu-west-1', but the default AWS provider makes the pool in 'us-east-2'"),
        (REGION, REGION, None),
        (None, None, None),
    ],
)
def test_a_gpu_node_pool_whose_provider_builds_in_another_region_is_refused(engine, region, provider_region, refusal):
    """The provider is asked its region (aws:index/getRegion) before the pool registers anything: before, the
    pool checked one region, registered its role, launch template and node group, and failed in the other."""
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}

    def program():
        providers = [aws.Provider("pool-provider", region=provider_region)] if provider_region else []
        pool = GpuNodePool(
            "h200", POOL | ({"region": region} if region else {}), pulumi.ResourceOptions(providers=providers)
        )
        return {"name": pool.node_group_name}

    if refusal is None:
        assert engine.run(program) == {"name": None}  # the mock engine names no node group
        assert engine.names_of("aws:eks/nodeGroup:NodeGroup") == ["h200-nodes"]
        return
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert f"invalid arguments of GpuNodePool 'h200':\nregion: {refusal}" in str(refused.value)
    assert set(engine.built) <= {"pool-provider"}  # the pool registered nothing


def test_a_gpu_node_pool_asks_the_aws_provider_its_parent_passes_down(engine):
    """The SDK gives a child its parent's provider (Resource._get_providers): the pool was checked against the
    default provider's region instead, and refused a pool whose region its parent's provider builds in."""
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}  # the mocks offer instance types in us-east-2's zones

    def program(region):
        west = aws.Provider("west", region="us-west-2")
        parent = pulumi.ComponentResource(
            "test:index:Account", "account", opts=pulumi.ResourceOptions(providers=[west])
        )
        args = POOL | ({"region": region} if region else {})
        GpuNodePool("h200", args, pulumi.ResourceOptions(parent=parent))

    engine.run(lambda: program("us-west-2"))
    assert engine.names_of("aws:eks/nodeGroup:NodeGroup") == ["h200-nodes"]


def test_without_a_region_from_its_parents_provider_the_pool_is_refused(engine):
    def program():
        west = aws.Provider("west", region="us-west-2")
        parent = pulumi.ComponentResource(
            "test:index:Account", "account", opts=pulumi.ResourceOptions(providers=[west])
        )
        GpuNodePool("h200", POOL, pulumi.ResourceOptions(parent=parent))

    with pytest.raises(pulumi.RunError, match=r"region: aws:region is 'us-east-2' \(region not given\), but the AWS "):
        engine.run(program)
    assert engine.names_of("gpt-oss-infra:index:GpuNodePool") == []


def test_a_provider_that_cannot_say_its_region_yet_is_not_refused(monkeypatch):
    """A provider configured from outputs not known yet answers a preview's invokes with nothing (the engine's
    provider_plugin.go): its region is None, not a region to refuse."""
    from gpt_oss_infra.components import gpu_node_pool

    monkeypatch.setattr(gpu_node_pool.aws, "get_region", lambda opts: SimpleNamespace(region=None))
    assert gpu_node_pool._region_problems(REGION, REGION, pulumi.InvokeOptions()) == []
