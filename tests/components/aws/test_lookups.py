"""components/aws/lookups.py: what EC2 reports about the stack's instance types and Capacity Blocks, read once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpt_oss_infra.components.aws.lookups import account_facts
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.tools.pulumi_engine import CAPACITY_BLOCK_TOKEN, INSTANCE_TYPE_TOKEN, instance_type_answer
from tests.components.conftest import BLOCK_END, BLOCK_START, capacity_block_answers


def test_each_instance_type_is_read_once_with_its_cards_in_index_order(engine, example_stack):
    stack = example_stack("dev")
    [instance_type] = {pool.instance_type for pool in stack.pools.values()}
    reported = instance_type_answer(instance_type, [100, 200, 400], None)
    reported["networkCards"].reverse()  # EC2 lists cards in no promised order
    engine.mocks.account.instance_types[instance_type] = reported
    facts = engine.call(lambda: account_facts(stack))
    assert engine.invoked(INSTANCE_TYPE_TOKEN) == [{"instanceType": instance_type}]
    assert engine.invoked(CAPACITY_BLOCK_TOKEN) == []
    assert facts.instance_types[instance_type].network_card_peak_gbps == [100, 200, 400]
    assert facts.instance_types[instance_type].efa_maximum_interfaces == 0  # EC2 leaves it out without EFA
    assert facts.capacity_blocks == {}
    assert abs((datetime.now(UTC) - facts.now).total_seconds()) < 60


def test_the_catalogs_instance_facts_are_what_ec2_reports(engine, example_stack):
    stack = example_stack("b200-disagg")
    facts = engine.call(lambda: account_facts(stack))
    for pool in stack.pools.values():
        assert facts.instance_types[pool.instance_type] == pool.instance.ec2


def test_a_capacity_blocks_window_is_read_from_ec2(engine, example_stack):
    stack = example_stack("gb200")
    engine.mocks.account.capacity_blocks.update(capacity_block_answers(stack))
    facts = engine.call(lambda: account_facts(stack))
    [pool] = stack.pools.values()
    reservation = pool.config.capacity_reservation_id
    assert engine.invoked(CAPACITY_BLOCK_TOKEN) == [{"id": reservation}]
    block = facts.capacity_blocks[reservation]
    assert (block.reservation_id, block.instance_type, block.availability_zone) == (
        reservation,
        pool.instance_type,
        pool.config.availability_zone,
    )
    assert (block.instance_count, block.state, block.upcoming) == (pool.config.nodes, "scheduled", True)
    assert (block.start, block.end) == (datetime.fromisoformat(BLOCK_START), datetime.fromisoformat(BLOCK_END))
    assert block.start.tzinfo is not None


def test_ec2s_z_suffixed_dates_are_read_as_utc(engine, example_stack):
    stack = example_stack("gb200")
    engine.mocks.account.capacity_blocks.update(
        {
            reservation: answer | {"startDate": "2030-01-07T11:30:00Z", "endDate": "2030-01-21T11:30:00Z"}
            for reservation, answer in capacity_block_answers(stack).items()
        }
    )
    [block] = engine.call(lambda: account_facts(stack)).capacity_blocks.values()
    assert (block.start, block.end) == (
        datetime(2030, 1, 7, 11, 30, tzinfo=UTC),
        datetime(2030, 1, 21, 11, 30, tzinfo=UTC),
    )


def test_a_capacity_block_ec2_cannot_read_refuses_the_stack_naming_its_key(engine, example_stack):
    stack = example_stack("gb200")  # no block answered: EC2 says it does not exist
    with pytest.raises(ConfigError) as caught:
        engine.call(lambda: account_facts(stack))
    [problem] = caught.value.problems
    [pool] = stack.pools.values()
    assert problem.key == f"gpt-oss-infra:nodePools.{pool.name}.capacityReservationId"
    assert f"cannot read Capacity Block {pool.config.capacity_reservation_id} from EC2" in problem.message
    assert "no matching EC2 Capacity Block reservation found" in problem.message
    assert engine.invoked(INSTANCE_TYPE_TOKEN) == []  # refused before anything else is read
