"""No dead code: vulture finds nothing unused outside its whitelist (tests/vulture_whitelist.py),
where each remaining finding says why it stays."""

from __future__ import annotations

import subprocess
import sys

from gpt_oss_infra.tools.plan import ROOT

CODE = ["__main__.py", "gpt_oss_infra/__main__.py", "core", "components", "tools", "policy", "tests", "jobs"]


def vulture(*paths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vulture", *map(str, paths)], capture_output=True, text=True, cwd=ROOT)


def test_no_code_is_unused():
    result = vulture(*CODE)
    assert result.returncode == 0, result.stdout


def test_vulture_finds_what_it_is_here_for(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def used():\n    return 1\n\n\ndef forgotten():\n    return 2\n\n\nused()\n")
    result = vulture(module)
    assert result.returncode != 0
    assert "unused function 'forgotten'" in result.stdout
    assert "'used'" not in result.stdout
