"""components/pulumi_config.py: the stack config read as the engine's language host hands it to a Python
program (PULUMI_CONFIG, PULUMI_CONFIG_SECRET_KEYS), through the SDK's public API only."""

from __future__ import annotations

import json

from gpt_oss_infra.components import pulumi_config


def test_every_key_and_which_are_stored_encrypted_as_the_language_host_passes_them(monkeypatch):
    config = {"gpt-oss-infra:namespace": "gpt-oss", "gpt-oss-infra:deploymnts": "{}", "gpt-oss-infra:hfToken": "x"}
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", json.dumps(["gpt-oss-infra:hfToken"]))
    assert pulumi_config.all_config() == config  # the misspelt key too: pulumi.Config would never say
    assert pulumi_config.stored_encrypted("gpt-oss-infra:hfToken")
    assert not pulumi_config.stored_encrypted("gpt-oss-infra:namespace")


def test_an_offline_run_says_so_only_while_it_runs():
    assert not pulumi_config.offline()
    with pulumi_config.running_offline():
        assert pulumi_config.offline()
    assert not pulumi_config.offline()
