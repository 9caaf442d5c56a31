"""`make lint` runs mypy, strict, on the public API (with the component schema and the provider), the components
and the core (pyproject.toml [tool.mypy]); it follows every gpt_oss_infra.* import to its file through the
package's symlinks."""

from __future__ import annotations

import subprocess
import sys
import tomllib

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


def test_mypy_checks_every_public_module_and_the_provider():
    """What a user imports or runs: the package's own modules (its command line, gpt_oss_infra/__main__.py,
    runs the offline tools and is left out) and the provider other Pulumi languages start."""
    checked = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"])
    public = {
        str(path.relative_to(ROOT)) for path in (ROOT / "gpt_oss_infra").glob("*.py") if path.name != "__main__.py"
    }
    assert public == {"gpt_oss_infra/__init__.py", "gpt_oss_infra/component_schema.py"}
    assert public | {"gpt_oss_infra/core", "gpt_oss_infra/components", "provider/__main__.py"} <= checked
