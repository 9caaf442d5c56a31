"""The Jobs' shell scripts (jobs/*.sh) and .ci/run pass shellcheck."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from gpt_oss_infra.core.paths import JOB_SCRIPTS_DIR
from gpt_oss_infra.tools.plan import ROOT

SHELL_SCRIPTS = sorted(JOB_SCRIPTS_DIR.glob("*.sh"))


def test_the_jobs_shell_scripts_are_files():
    assert [path.name for path in SHELL_SCRIPTS] == ["benchmark.sh", "model-download.sh"]


SHELLCHECK = shutil.which("shellcheck")


needs_shellcheck = pytest.mark.skipif(
    SHELLCHECK is None, reason="shellcheck is not installed (apt-get install shellcheck): shell scripts NOT linted"
)


def shellcheck(*paths) -> subprocess.CompletedProcess:
    """shellcheck with the dialect each file's shebang names (the Jobs' scripts: POSIX sh)."""
    return subprocess.run([SHELLCHECK, *map(str, paths)], capture_output=True, text=True)


@needs_shellcheck
def test_every_shell_script_passes_shellcheck():
    assert all(path.read_text().startswith("#!/bin/sh\n") for path in SHELL_SCRIPTS)  # what the Jobs run them with
    result = shellcheck(*SHELL_SCRIPTS, ROOT / ".ci" / "run")
    assert result.returncode == 0, result.stdout


@needs_shellcheck
def test_shellcheck_catches_what_it_is_here_for(tmp_path):
    """An unquoted variable (word splitting) and a bash-only test in a POSIX sh script."""
    broken = tmp_path / "broken.sh"
    broken.write_text("#!/bin/sh\nset -eu\nif [[ -f $MARKER ]]; then cat $MARKER; fi\n")
    result = shellcheck(broken)
    assert result.returncode != 0
    assert "SC2086" in result.stdout  # double quote to prevent globbing and word splitting
    assert "SC3010" in result.stdout  # in POSIX sh, [[ ]] is undefined
