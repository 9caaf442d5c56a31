"""GptOssStack's arguments from a program of the user's (not a stack file): refused by argument, with
the component named, not a stack file the program never had; secrets never in plaintext."""

from __future__ import annotations

import copy

import pulumi
import pytest

from gpt_oss_infra import GptOssStack
from gpt_oss_infra.components.stack_config import StackFileConfig
from gpt_oss_infra.core.inputs.config import namespace_config
from tests.support import example_entries

SECRET = pulumi.Output.secret("k")


def config(stack: str = "existing-cluster") -> dict:
    return copy.deepcopy(namespace_config(example_entries(stack)))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"config": config() | {"deployments": {"gpt-oss": {"recipe": "h200-agg-fastest", "nodePool": "h200"}}}},
            "invalid arguments of GptOssStack 'gpt-oss-infra':\n"
            "config.deployments.gpt-oss.recipe",  # the path in the argument, as the program wrote it
        ),
        (
            {"config": config(), "hf_tokn": pulumi.Output.secret("hf")},
            "hf_tokn: not an argument of GptOssStack: did you mean 'hf_token'?",
        ),
        ({"config": config(), "hf_token": "hf_plain"}, "hf_token: a plain string: pass a secret"),
        # A secret is an argument of its own: named as one, with the argument to give, not a stack-file command.
        (
            {"config": config("staging")},
            "invalid arguments of GptOssStack 'gpt-oss-infra':\napi_keys: required: deployments gpt-oss have a "
            "gateway, which admits only API keys; set one per client with the api_keys argument (Pulumi secrets)",
        ),
        (
            {"config": config("staging"), "api_keys": {"Ci": SECRET}},
            "\napi_keys.Ci: not a client name",
        ),
        ({"config": config(), "api_keys": {"ci": "sk-plain"}}, "api_keys: a plain string (the value of 'ci')"),
    ],
)
def test_a_programs_arguments_are_refused_by_name_before_anything_is_registered(engine, args, expected):
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(lambda: GptOssStack("gpt-oss-infra", args) and None)
    assert expected in str(refused.value), str(refused.value)
    assert "Pulumi.test.yaml" not in str(refused.value) and "gpt-oss-infra:" not in str(refused.value)
    assert engine.mocks.resources == []


def test_the_stack_files_config_is_refused_naming_the_stack_file(engine):
    broken = StackFileConfig(config() | {"namespace": "Not_A_Label"})
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(lambda: GptOssStack("gpt-oss-infra", {"config": broken}) and None)
    assert str(refused.value).startswith("invalid stack config in Pulumi.test.yaml:\ngpt-oss-infra:namespace")
