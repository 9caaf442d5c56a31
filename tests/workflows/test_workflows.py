"""The GitHub workflows (.github/workflows/) pass the workflow schema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.plan import ROOT


def test_workflows_pass_the_github_workflow_schema():
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {path.name for path in workflows} >= {"preview.yml", "deploy.yml", "promote.yml"}
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "check-jsonschema"),
            "--builtin-schema",
            "vendor.github-workflows",
            *map(str, workflows),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
