"""`make lint` runs mypy, strict, on the public API, the components and the core (pyproject.toml
[tool.mypy]); it follows every gpt_oss_infra.* import to its file through the package's symlinks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import ROOT


@pytest.mark.end_to_end
def test_mypy_follows_a_package_import_to_its_file_and_refuses_a_wrong_type(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("from gpt_oss_infra.core.quantity import parse_quantity\n\nsize: str = parse_quantity('400Gi')\n")
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), str(broken)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    # The import resolved (else: "Cannot find implementation or library stub"), and its type was read.
    assert "Incompatible types in assignment" in checked.stdout and "Decimal" in checked.stdout, checked.stdout
    assert "Cannot find implementation" not in checked.stdout
