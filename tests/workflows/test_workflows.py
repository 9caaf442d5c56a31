"""The GitHub workflows (.github/workflows/) pass the workflow schema and actionlint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from gpt_oss_infra.tools.plan import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True)


def test_workflows_pass_the_github_workflow_schema():
    assert {path.name for path in WORKFLOWS} >= {"preview.yml", "deploy.yml", "deploy-stack.yml", "promote.yml"}
    result = run(str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_pass_actionlint():
    # Expressions, job graph, action inputs and deprecated action runtimes (node20); `run:` scripts
    # too when shellcheck is installed (.ci/run installs it).
    result = run(str(BIN / "actionlint"), "-no-color", "-oneline", *map(str, WORKFLOWS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_fails_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\n"
        "jobs:\n"
        "  deploy:\n"
        "    needs: tests\n"  # no such job
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"  # node20
        "      - run: echo ${{ github.sha + }}\n"  # not an expression
        "      - run: cat $FILE\n"  # unquoted: shellcheck SC2086
    )
    result = run(str(BIN / "actionlint"), "-no-color", "-oneline", str(broken))
    assert result.returncode == 1, result.stdout + result.stderr
    expected = {"[job-needs]", "[expression]", 'runtime "node20" is deprecated'}
    if shutil.which("shellcheck"):
        expected.add("SC2086")
    assert [rule for rule in sorted(expected) if rule not in result.stdout] == [], result.stdout


def test_deploy_runs_dev_then_staging_then_prod_as_jobs():
    jobs = yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text())["jobs"]
    assert [jobs[stack]["needs"] for stack in ("staging", "prod")] == ["dev", "staging"]
    assert set(jobs["dev"]["needs"]) == {"runners", "test"}
    assert [jobs[stack]["with"]["stack"] for stack in ("dev", "staging", "prod")] == ["dev", "staging", "prod"]
