"""The command line's process (tools/process.py): tuned as mypy's is, and ended with no teardown, yet with
everything it printed and its exit code."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

from gpt_oss_infra.tools.plan import ROOT
from gpt_oss_infra.tools.process import GC_THRESHOLDS


def python(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter whose output is buffered (PYTHONUNBUFFERED, set on some machines,
    would write every print at once and hide a missing flush)."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)


def test_a_hard_exit_keeps_what_was_printed_and_the_code_and_skips_the_teardown():
    ended = python(
        "import atexit, sys\n"
        "from gpt_oss_infra.tools.process import hard_exit\n"
        "atexit.register(print, 'teardown ran')\n"
        "print('unflushed output', end='')\n"
        "print('unflushed error', end='', file=sys.stderr)\n"
        "hard_exit(3)\n"
    )
    assert (ended.returncode, ended.stdout, ended.stderr) == (3, "unflushed output", "unflushed error")


def test_the_command_line_runs_with_the_tuned_collector():
    """`python -m gpt_oss_infra` tunes the collector before it imports the command; so does this test session."""
    shown = python(
        "import gc, runpy, sys\n"
        "sys.argv = ['gpt_oss_infra', '--help']\n"
        "import gpt_oss_infra.tools.process as process\n"
        "process.hard_exit = lambda code: print(gc.get_threshold())\n"  # where the command line would end
        "runpy.run_module('gpt_oss_infra', run_name='__main__')\n"
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-1] == str(GC_THRESHOLDS)
    assert gc.get_threshold() == GC_THRESHOLDS  # tests/conftest.py's pytest_configure
