"""components/stack_config.py: the stack's Pulumi config handed to the core, its refusal, and the secret keys."""

from __future__ import annotations

import json
import logging

import pulumi
import pytest

from gpt_oss_infra.components.stack_config import raw_namespace_config, refused, secret_config, secret_map_config
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.plan import engine_config
from tests.components.conftest import STACK, is_secret
from tests.support import refused as config_error
from tests.support import stack_entries

HF_TOKEN = "hf_component_test_token"


def test_the_core_receives_the_stack_file_as_written(engine):
    entries = stack_entries("dev")
    engine.configure(*engine_config(entries))
    assert engine.call(raw_namespace_config) == namespace_config(entries)


def test_secrets_and_other_namespaces_stay_out(engine):
    engine.configure(
        {
            "aws:region": "us-east-2",
            "kubernetes:context": "lab",
            "gpt-oss-infra:environment": "dev",
            "gpt-oss-infra:hfToken": HF_TOKEN,
            "gpt-oss-infra:ngcApiKey": "nvapi-x",
        },
        ["gpt-oss-infra:hfToken", "gpt-oss-infra:ngcApiKey"],
    )
    assert engine.call(raw_namespace_config) == {"environment": "dev"}


def test_a_string_that_only_looks_like_json_stays_a_string(engine, dev_raw, catalog):
    engine.configure({"gpt-oss-infra:environment": "[dev", "gpt-oss-infra:namespace": "{gpt-oss"})
    assert engine.call(raw_namespace_config) == {"environment": "[dev", "namespace": "{gpt-oss"}
    (problem,) = config_error(dev_raw | {"environment": "[dev"}, catalog).problems  # the core names the key
    assert problem.key == "gpt-oss-infra:environment"


def test_config_set_by_the_program_wins_over_the_environment(engine, monkeypatch):
    """An Automation API program run in-process sets its config in the SDK, not in the environment:
    pulumi.Config reads it, and a key only the language host's environment has is read there."""
    engine.configure({"gpt-oss-infra:environment": "dev"})
    monkeypatch.setenv(
        "PULUMI_CONFIG",
        json.dumps({"gpt-oss-infra:environment": "from-env", "gpt-oss-infra:nodePools": '{"gpu": {"nodes": 1}}'}),
    )
    assert engine.call(raw_namespace_config) == {"environment": "dev", "nodePools": {"gpu": {"nodes": 1}}}


def test_refused_turns_every_config_problem_into_one_run_error(dev_raw, catalog):
    dev_raw["nodePool"] = dev_raw.pop("nodePools")  # a misspelt top-level key
    error = config_error(dev_raw, catalog)
    with pytest.raises(pulumi.RunError) as caught:
        refused(lambda: build_stack(dev_raw, catalog, with_hf_token=False))
    assert str(caught.value) == f"invalid stack config in Pulumi.{pulumi.get_stack()}.yaml:\n{error}"
    assert "nodePool" in str(caught.value)


def test_refused_returns_what_was_decided_and_lets_other_errors_through():
    assert refused(lambda: 42) == 42
    with pytest.raises(KeyError):
        refused(lambda: {}["missing"])


def test_an_encrypted_secret_key_is_a_secret(engine, caplog):
    engine.configure({"gpt-oss-infra:hfToken": HF_TOKEN}, ["gpt-oss-infra:hfToken"])

    def program():
        token = secret_config("hfToken")
        return {"token": token, "secret": is_secret(token)}

    with caplog.at_level(logging.WARNING):
        values = engine.run(program)
    assert values == {"token": HF_TOKEN, "secret": True}
    assert not [record for record in caplog.records if record.levelno == logging.WARNING]


@pytest.mark.parametrize(
    ("key", "read", "command"),
    [
        ("hfToken", secret_config, "pulumi config set --secret gpt-oss-infra:hfToken <value>"),
        ("ngcApiKey", secret_config, "pulumi config set --secret gpt-oss-infra:ngcApiKey <value>"),
        ("apiKeys", secret_map_config, "pulumi config set --secret --path 'gpt-oss-infra:apiKeys.<client>' <key>"),
    ],
)
def test_a_secret_key_stored_in_plaintext_is_refused_with_the_command_that_stores_it(engine, key, read, command):
    value = json.dumps({"team-a": "k-1"}) if key == "apiKeys" else "plaintext-value-123"
    engine.configure({f"gpt-oss-infra:{key}": value}, [])
    with pytest.raises(pulumi.RunError) as refused_run:
        engine.call(lambda: read(key))
    message = str(refused_run.value)
    assert message == (
        f"invalid stack config in Pulumi.{STACK}.yaml:\n"
        f"gpt-oss-infra:{key}: a secret stored in plaintext in the stack file: remove it and set it with {command}"
    )
    assert "plaintext-value-123" not in message and "k-1" not in message


def test_a_key_listed_secret_in_the_environment_counts_as_encrypted(engine, caplog, monkeypatch):
    engine.configure({"gpt-oss-infra:ngcApiKey": "nvapi-x"})
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", json.dumps(["gpt-oss-infra:ngcApiKey"]))
    with caplog.at_level(logging.WARNING):
        values = engine.run(lambda: {"key": secret_config("ngcApiKey")})
    assert values == {"key": "nvapi-x"}
    assert not [record for record in caplog.records if record.levelno == logging.WARNING]


def test_an_unset_secret_is_none_and_only_secret_keys_are_read_so(engine):
    assert engine.call(lambda: secret_config("ngcApiKey")) is None
    with pytest.raises(KeyError):
        engine.call(lambda: secret_config("environment"))


def test_the_secrets_are_read_under_gpt_oss_infra_in_a_project_of_any_name(engine):
    """A user's own project (not named gpt-oss-infra) sets them as gpt-oss-infra:<key> too, as README says."""
    engine.context.run(pulumi.runtime.set_mocks, engine.mocks, project="my-inference", stack=STACK, preview=False)
    engine.configure({"gpt-oss-infra:hfToken": HF_TOKEN}, ["gpt-oss-infra:hfToken"])
    token = engine.call(lambda: secret_config("hfToken"))
    assert token is not None
    assert engine.call(lambda: pulumi.get_project()) == "my-inference"
