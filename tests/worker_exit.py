"""A pytest plugin (tests/conftest.py loads it) that ends each pytest-xdist worker as the command line ends
(tools/process.py). By unconfigure the worker has sent its last report (pytest-xdist sends it at session
finish), and all it has left to do is five full garbage collections of the whole-stack runs it holds, for
unraisable-exception warnings it could only print to its own stderr, and freeing them. Measured with make
test's three workers: they took 5-8 s after their last test, and the run waited for them."""

from __future__ import annotations

import pytest

from gpt_oss_infra.tools.process import hard_exit


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if reported_all(config):
        hard_exit(0)


def reported_all(config: pytest.Config) -> bool:
    """Whether this is a pytest-xdist worker that has sent its session's end: xdist gives a worker's config
    its workerinput (not PYTEST_XDIST_WORKER, which a pytest that a test starts inherits, and whose exit code
    must stay its own), and puts the exit status in its workeroutput just before it sends the end. A worker
    that failed before that (its configuration, its session start) ends as pytest ends it, so that
    pytest-xdist gets its error."""
    return hasattr(config, "workerinput") and "exitstatus" in getattr(config, "workeroutput", {})
