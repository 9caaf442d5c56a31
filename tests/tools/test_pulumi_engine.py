"""tools/pulumi_engine.py: the mock answers only the lookups the program makes, and a run records what
the program registered in the order it constructed it."""

from __future__ import annotations

import pulumi
import pytest

from gpt_oss_infra.tools.plan import engine_config
from gpt_oss_infra.tools.pulumi_engine import AVAILABILITY_ZONES, AccountMocks, mock_account
from tests.support import stack_entries


@pytest.fixture(scope="module")
def mocks():
    config, _ = engine_config(stack_entries("dev"))
    return AccountMocks(mock_account(config))


def call(mocks, token, **args):
    return mocks.call(pulumi.runtime.MockCallArgs(token=token, args=args, provider=""))


def test_a_lookup_the_mock_does_not_answer_fails_the_run(mocks):
    with pytest.raises(NotImplementedError, match="does not answer aws:index/getCallerIdentity:getCallerIdentity"):
        call(mocks, "aws:index/getCallerIdentity:getCallerIdentity")


def test_the_lookups_the_program_makes_are_answered_from_the_catalog(mocks, catalog):
    assert call(mocks, "aws:index/getAvailabilityZones:getAvailabilityZones") == AVAILABILITY_ZONES
    facts = call(mocks, "aws:ec2/getInstanceType:getInstanceType", instanceType="p5en.48xlarge")
    expected = catalog.hardware["h200"].instance_types["p5en.48xlarge"].ec2
    assert facts["efaMaximumInterfaces"] == expected.efa_maximum_interfaces
    assert [card["peakBandwidth"] for card in facts["networkCards"]] == expected.network_card_peak_gbps


def test_an_unknown_capacity_block_is_a_failed_lookup(mocks):
    _, failures = call(mocks, "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation", id="cr-unknown")
    assert failures == [("id", "no matching EC2 Capacity Block reservation found")]


def test_a_run_lists_resources_in_construction_order(dev_run):
    names = [r.name for r in dev_run.resources]
    # __main__.py builds the cluster target first and the serving graph last.
    assert names.index("gptoss-eks") < names.index("dynamo-platform") < names.index("gpt-oss-graph")
