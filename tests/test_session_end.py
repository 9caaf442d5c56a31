"""How make test's workers end (tests/worker_exit.py, which tests/conftest.py loads): at once, as the command
line does, yet with every report and the session's exit code already with the controller."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

from gpt_oss_infra.tools.plan import ROOT
from tests import worker_exit

# A module whose import registers an exit handler: under pytest-xdist only the worker imports it.
TESTS = """
import atexit
import pathlib

atexit.register(pathlib.Path({marker!r}).touch)


def test_passes():
    pass


def test_fails():
    assert False
"""


def test_a_worker_ends_once_its_reports_are_sent(tmp_path):
    marker = tmp_path / "the worker's exit handlers ran"
    (tmp_path / "test_two.py").write_text(TESTS.format(marker=str(marker)))
    session = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-n", "1", "-p", "no:cacheprovider", "-p", "tests.worker_exit"),
            *("--rootdir", str(tmp_path), "--basetemp", str(tmp_path / "basetemp"), str(tmp_path / "test_two.py")),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        # As under make test's own workers, which this variable names: the controller it reaches still ends
        # with the session's exit code.
        env=os.environ | {"PYTEST_XDIST_WORKER": "gw0"},
    )
    assert session.returncode == 1, session.stdout + session.stderr
    assert "1 failed, 1 passed" in session.stdout
    assert "test_two.py::test_fails" in session.stdout
    assert not marker.exists()  # the worker ended before its exit handlers
    for crash in ("crashed", "Not properly terminated", "replacing crashed worker"):  # pytest-xdist's words
        assert crash not in session.stdout + session.stderr


def test_only_a_worker_that_has_sent_its_sessions_end_ends_early():
    """Not the controller, and not a worker whose configuration or session start failed: pytest-xdist would
    get a bare end from it instead of the error."""
    controller = SimpleNamespace()
    failed_early = SimpleNamespace(workerinput={"workerid": "gw0"}, workeroutput={})
    finished = SimpleNamespace(workerinput={"workerid": "gw0"}, workeroutput={"exitstatus": 1})
    assert [worker_exit.reported_all(config) for config in (controller, failed_early, finished)] == [False, False, True]


def test_make_tests_conftest_loads_it():
    from tests import conftest

    assert conftest.pytest_plugins == ["tests.worker_exit"]
