"""components/api_keys.py: a gateway's API keys as a dict (Python) or as one output (another Pulumi
language, another resource's output), and the client names the render needs before either resolves."""

from __future__ import annotations

import pulumi
import pytest

from gpt_oss_infra.components.api_keys import api_keys
from gpt_oss_infra.core.errors import ConfigError


def test_a_dicts_keys_are_its_clients_and_its_values_one_secret(engine):
    def program():
        keys = api_keys({"bob": "k-bob", "alice": pulumi.Output.secret("k-alice")}, None)
        assert keys.clients == ["alice", "bob"]
        return {"values": keys.values, "secret": keys.values.is_secret()}

    assert engine.run(program) == {"values": {"alice": "k-alice", "bob": "k-bob"}, "secret": True}


def test_an_output_needs_its_client_names_and_each_named_client_needs_a_key(engine):
    with pytest.raises(ConfigError, match="api_clients: required: api_keys is an output"):
        api_keys(pulumi.Output.from_input({"a": "k"}), None)
    with pytest.raises(ConfigError, match="api_keys: required with api_clients"):
        api_keys(None, ["a"])
    with pytest.raises(ConfigError, match="the client names of api_keys are a; leave api_clients out"):
        api_keys({"a": "k"}, ["b"])
    assert api_keys(None, None).values is None

    def program():
        keys = api_keys(pulumi.Output.secret({"a": "k", "extra": "x"}), ["a"])
        return {"values": keys.values}

    assert engine.run(program) == {"values": {"a": "k"}}  # only the named clients' keys
    with pytest.raises(Exception, match="api_keys has no key for the api_clients b"):
        engine.run(lambda: {"values": api_keys(pulumi.Output.secret({"a": "k"}), ["a", "b"]).values})
