"""Shared fixtures: the catalog, the dev stack's config, and runs of the real program."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.inputs.catalog import Catalog, load_catalog
from core.inputs.config import KEY_PREFIX
from tools.mock_engine import ProgramRun, mock_account, run_program
from tools.plan import ROOT, engine_config


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


def stack_entries(stack: str = "dev") -> dict[str, Any]:
    """The `config:` block of Pulumi.<stack>.yaml, as written."""
    return yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]


def namespace_config(entries: dict[str, Any]) -> dict[str, Any]:
    """The `gpt-oss-infra:` keys without their prefix: what the core's parser receives."""
    return {key.removeprefix(KEY_PREFIX): value for key, value in entries.items() if key.startswith(KEY_PREFIX)}


@pytest.fixture
def dev_raw() -> dict[str, Any]:
    return copy.deepcopy(namespace_config(stack_entries("dev")))


def run_entries(entries: dict[str, Any], stack: str = "test") -> ProgramRun:
    """Run the real __main__.py on the mock engine with these stack-file config entries.

    Runs are deterministic, so one run per distinct (entries, stack) serves every test that asks
    for it; tests only read a run."""
    return _run_once(json.dumps(entries, sort_keys=True), stack)


@functools.cache
def _run_once(entries_json: str, stack: str) -> ProgramRun:
    config, secret_keys = engine_config(json.loads(entries_json))
    return run_program(ROOT / "__main__.py", "gpt-oss-infra", stack, config, secret_keys)


def run_in_account(entries: dict[str, Any], change_account, stack: str = "test") -> ProgramRun:
    """Run with the AWS account the stack expects (mock_account), changed by `change_account`
    (a function that edits the MockAccount's dicts in place): what EC2 really reports can differ."""
    config, secret_keys = engine_config(entries)
    account = mock_account(config)
    change_account(account)
    return run_program(ROOT / "__main__.py", "gpt-oss-infra", stack, config, secret_keys, account=account)


def write_stack(directory: Path, stack: str, entries: dict[str, Any]) -> Path:
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": entries}, sort_keys=False))
    return path
