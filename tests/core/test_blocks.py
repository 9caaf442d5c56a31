"""core/blocks.py: each public block's own pipeline, from its arguments, every problem keyed by the argument
as the caller named it; what it makes is what the stack makes for the same settings."""

from __future__ import annotations

import pytest

from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries

OWNER = "organization/gpt-oss-infra/dev"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"dynamo_release": "9.9.9"}, "dynamo_release: Dynamo 9.9.9 is not supported; one of 1.0.0"),
        ({"dynamo_release": "1.6"}, "dynamo_release: String should match pattern"),
        ({"namespace": "Dynamo_System"}, "namespace: 'Dynamo_System' must be a DNS label"),
        ({"block_storage_class": "GP3"}, "block_storage_class: 'GP3' must be a DNS label"),
        ({"kubernetes_version": "1.99"}, "kubernetes_version: Kubernetes 1.99 is not one this program can validate"),
        # 1.2.1 bundles NATS, whose JetStream volume needs a class an existing cluster names.
        (
            {"dynamo_release": "1.2.1"},
            "block_storage_class: required on an existing cluster while the bundled NATS is "
            "on (Dynamo 1.2.1's default)",
        ),
    ],
)
def test_a_platform_is_refused_by_the_argument_at_fault(catalog, arguments, expected):
    with pytest.raises(ConfigError) as refused:
        blocks.dynamo_platform(arguments, catalog, with_ngc_key=False, owner=OWNER)
    assert str(refused.value).startswith(expected), str(refused.value)


def test_every_bad_argument_is_named_at_once(catalog):
    with pytest.raises(ConfigError) as refused:
        blocks.dynamo_platform({"namespace": "A", "block_storage_class": "B"}, catalog, with_ngc_key=False, owner=OWNER)
    assert [problem.key for problem in refused.value.problems] == ["block_storage_class", "namespace"]


def test_a_platform_is_what_the_stack_makes_for_the_same_settings(catalog):
    """The existing-cluster example stack's platform, from the block's arguments for the same settings."""
    raw = namespace_config(example_entries("existing-cluster"))
    stack = build_stack(raw, catalog, with_hf_token=False, with_ngc_key=True, api_key_clients=["ci"], owner=OWNER)
    block = blocks.dynamo_platform(
        {"dynamo_release": "1.6.1", "block_storage_class": "gp3"},
        catalog,
        with_ngc_key=True,
        owner=OWNER,
    )
    assert block.objects == stack.platform
    assert block.gateway is None
    assert block.guards is not None and block.guards.objects() == stack.teardown.objects()
