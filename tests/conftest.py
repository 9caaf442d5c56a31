"""Shared fixtures: the catalog, the dev stack's config, and runs of the real program that many
test files read (each run once per session; tests only read them)."""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest

from gpt_oss_infra.core.inputs.catalog import Catalog, load_catalog
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.stack_objects import Stack
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.process import tune_gc
from gpt_oss_infra.tools.pulumi_engine import ProgramRun
from tests.support import SHARED_RUNS, example_entries, stack_entries, successful_run

pytest_plugins = ["tests.worker_exit"]  # each pytest-xdist worker ends once its reports are sent


def pytest_configure(config: pytest.Config) -> None:
    """Each test process's garbage collector tuned as the command line's is (tools/process.py): the
    whole-stack runs the tests share build hundreds of thousands of objects."""
    tune_gc()


@pytest.fixture(scope="session", autouse=True)
def shared_runs(tmp_path_factory):
    """Under pytest-xdist, the workers of one session share the runs of the program they make
    (tests/support.py: _run_once): a folder beside each worker's own temporary folder. Without
    xdist (no PYTEST_XDIST_WORKER), one process: its own cache is enough."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    folder = tmp_path_factory.getbasetemp().parent / "shared-runs"
    folder.mkdir(exist_ok=True)
    os.environ[SHARED_RUNS] = str(folder)
    yield
    del os.environ[SHARED_RUNS]


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
def dev_raw() -> dict[str, Any]:
    """The dev stack's config as the core receives it; each test gets its own copy to change."""
    return copy.deepcopy(namespace_config(stack_entries("dev")))


@pytest.fixture
def dev_stack(dev_raw, catalog) -> Stack:
    return build_stack(dev_raw, catalog, with_hf_token=True)


@pytest.fixture(scope="session")
def dev_run() -> ProgramRun:
    """The dev stack with both secrets set (the HF token Secret and the NGC pull secrets exist)."""
    return successful_run(
        stack_entries("dev") | {"gpt-oss-infra:hfToken": "hf_x", "gpt-oss-infra:ngcApiKey": "nvapi-x"}
    )


@pytest.fixture(scope="session")
def staging_run() -> ProgramRun:
    """Pulumi.staging.yaml, on Dynamo 1.2.1 until promoted: the release whose CRDs the program applies."""
    return successful_run(stack_entries("staging"), stack="staging")


@pytest.fixture(scope="session")
def disagg_run() -> ProgramRun:
    """configs/examples/Pulumi.b200-disagg.yaml: disaggregated deployments whose KV crosses nodes."""
    return successful_run(example_entries("b200-disagg"), stack="b200-disagg")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest test (the trial's, two minutes of real Dynamo processes) first: over make test's
    workers (-n 3, tools/bench.py) it runs beside the quick ones instead of ending the run alone. Measured with two
    workers: the other slow ones first as well made the run longer (their processes contend for the two cores)."""
    items.sort(key=lambda item: item.nodeid != LONGEST_TEST)


LONGEST_TEST = "tests/tools/test_trial.py::test_the_trial_serves_every_deployment_and_reports_simulated_figures"
