"""The GitHub workflows (.github/workflows/) pass the workflow schema and actionlint."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
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


def test_the_promotion_pull_request_is_opened_with_a_token_that_starts_its_preview():
    """GitHub starts no workflow run for what GITHUB_TOKEN does: with the promotion App set up, the branch is
    pushed and the pull request opened with the App's token; without it, the run says the preview will not start."""
    steps = yaml.safe_load((ROOT / ".github/workflows/promote.yml").read_text())["jobs"]["promote"]["steps"]
    uses = [step.get("uses", "") for step in steps]
    app = [i for i, action in enumerate(uses) if action.startswith("actions/create-github-app-token@")]
    checkout = [i for i, action in enumerate(uses) if action.startswith("actions/checkout@")]
    assert len(app) == 1 and len(checkout) == 1 and app[0] < checkout[0], uses
    assert steps[app[0]]["if"] == "vars.PROMOTION_APP_CLIENT_ID != ''"
    assert steps[checkout[0]]["with"]["persist-credentials"] is False  # no token while make promote runs
    (opening,) = [step for step in steps if "gh pr create" in step.get("run", "")]
    assert opening["env"]["GH_TOKEN"].startswith("${{ steps.app.outputs.token ||")
    assert 'git push "https://x-access-token:${GH_TOKEN}@' in opening["run"]  # pushed as the App too
    assert 'if [ -z "$AS_APP" ]' in opening["run"] and "::warning::" in opening["run"]


def test_a_make_targets_output_kept_in_a_file_is_the_commands_alone():
    """promote.yml puts promote.txt in the pull request's body, and preview.yml posts plan-diff.txt: on a fresh
    runner the make target would print the venv's install ahead of the diff (which the body cuts at its end),
    so the venv is made in an earlier step, and make runs silent (-s: no command lines echoed)."""
    kept = []
    for path in WORKFLOWS:
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            runs = [step.get("run", "") for step in job.get("steps", [])]
            for index, run in enumerate(runs):
                for line in run.splitlines():
                    if re.match(r"\s*make .*(\| tee |> )", line):
                        kept.append(line.split()[1:3])
                        assert line.split()[1] == "-s", (path.name, line)
                        assert any("make .venv/.installed" in earlier for earlier in runs[:index]), (path.name, line)
    assert sorted(kept) == [["-s", "plan-diff"], ["-s", "promote"]]


def test_deploy_runs_dev_then_staging_then_prod_as_jobs():
    jobs = yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text())["jobs"]
    assert [jobs[stack]["needs"] for stack in ("staging", "prod")] == ["dev", "staging"]
    assert set(jobs["dev"]["needs"]) == {"runners", "test"}
    assert [jobs[stack]["with"]["stack"] for stack in ("dev", "staging", "prod")] == ["dev", "staging", "prod"]
    # One up per stack at a time, and no run-wide lock: a run waiting for prod's reviewers holds up no dev.
    assert "concurrency" not in yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text())
    up = yaml.safe_load((ROOT / ".github/workflows/deploy-stack.yml").read_text())["jobs"]["up"]
    assert up["concurrency"] == {"group": "deploy-${{ inputs.stack }}", "cancel-in-progress": False}


def affected_stacks(tmp_path: Path, changed: dict[str, str], base: str = "main") -> str:
    """preview.yml's affected-stacks step, run as GitHub runs it, on a pull request changing `changed`."""
    preview = yaml.safe_load((ROOT / ".github/workflows/preview.yml").read_text())
    (step,) = [step for step in preview["jobs"]["stacks"]["steps"] if step.get("id") == "affected"]
    repository = tmp_path / "repository"
    repository.mkdir(parents=True)

    def git(*command: str) -> None:
        author = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]
        subprocess.run(["git", *author, *command], cwd=repository, check=True)

    (repository / "Pulumi.dev.yaml").write_text("config: {}\n")
    git("init", "--quiet", "--initial-branch=main")
    git("add", "--all")
    git("commit", "--quiet", "-m", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")  # the base branch as the workflow's checkout has it
    for path, text in changed.items():
        (repository / path).parent.mkdir(parents=True, exist_ok=True)
        (repository / path).write_text(text)
    git("add", "--all")
    git("commit", "--quiet", "-m", "change")
    output = tmp_path / "github-output"
    env = {"PATH": os.environ["PATH"], "BASE_REF": base, "GITHUB_OUTPUT": str(output)}
    subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repository, env=env, check=True)
    return output.read_text()


def test_a_markdown_change_is_tested_and_previews_no_stack(tmp_path):
    """A pull request of Markdown alone runs the tests (they build the docs site strictly): the workflow
    ignores no path. No stack is previewed for it; a stack file's change previews that stack, code every one."""
    on = yaml.safe_load((ROOT / ".github/workflows/preview.yml").read_text())[True]  # YAML 1.1 reads `on` as True
    assert on == {"pull_request": None}
    assert affected_stacks(tmp_path / "docs", {"docs/config.md": "x\n", "README.md": "y\n"}) == "list=[]\n"
    stack_and_docs = {"Pulumi.dev.yaml": "config: {a: 1}\n", "docs/config.md": "x\n"}
    assert affected_stacks(tmp_path / "stack", stack_and_docs) == 'list=["dev"]\n'
    code = {"tools/plan.py": "x = 1\n", "docs/config.md": "x\n"}
    assert affected_stacks(tmp_path / "code", code) == 'list=["dev","staging","prod"]\n'
    # A base the diff cannot reach fails the step, not "no stack affected" (which would skip every preview).
    with pytest.raises(subprocess.CalledProcessError):
        affected_stacks(tmp_path / "no-base", code, base="no-such-branch")
