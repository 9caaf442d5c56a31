"""`make plan-diff` (tools/plan_diff.py): the plan's diff against another git revision."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpt_oss_infra.tools.plan import ROOT

pytestmark = pytest.mark.end_to_end  # the slower tier (pyproject.toml markers)


def snapshot(tmp_path) -> Path:
    """A clone whose HEAD is this working tree as it is now (uncommitted and untracked files too)."""
    git_dir, clone = tmp_path / "snapshot.git", tmp_path / "clone"
    git = ["git", f"--git-dir={git_dir}", f"--work-tree={ROOT}"]
    author = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    for command in (["init", "--quiet"], ["add", "--all"], [*author, "commit", "--quiet", "-m", "now"]):
        subprocess.run([*git, *command], check=True)
    subprocess.run(["git", "clone", "--quiet", str(git_dir), str(clone)], check=True)
    return clone


def test_plan_diff_shows_a_changed_recipe_value_and_no_changes_without_one(tmp_path):
    clone = snapshot(tmp_path)

    def plan_diff(base: str = "HEAD") -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "gpt_oss_infra", "plan-diff", "--stack", "dev", "--base", base],
            cwd=clone,
            capture_output=True,
            text=True,
        )

    unchanged = plan_diff()
    assert (unchanged.returncode, unchanged.stdout) == (0, "no changes\n")
    recipe = clone / "configs/recipes/h200-agg-low-latency.yaml"
    recipe.write_text(recipe.read_text().replace("max_batch_size: 8\n", "max_batch_size: 16\n"))
    changed = plan_diff()
    assert changed.returncode == 0
    assert "--- HEAD/manifests/configmap_gpt-oss_gpt-oss-engine-config.yaml" in changed.stdout
    assert "-      max_batch_size: 8\n+      max_batch_size: 16\n" in changed.stdout
    # A working tree the program refuses: its message, not a traceback.
    stack_file = clone / "Pulumi.dev.yaml"
    stack_file.write_text(stack_file.read_text().replace("b5c939de8f754692c1647ca79fbf85e8c1e70f8a", "main"))
    refused = plan_diff()
    assert refused.returncode == 1
    assert refused.stderr.startswith("plan-diff: plan of dev in the working tree failed:\n")
    assert "modelRevision" in refused.stderr and "Traceback" not in refused.stderr
    # The working tree is planned first: refused, it ends the diff before the base is even checked out.
    assert plan_diff(base="no-such-ref").stderr == refused.stderr


def test_plan_diff_in_a_users_own_git_repository_plans_its_program_at_the_base(tmp_path):
    """The program's folder in a repository of the user's (here a subfolder of it), planned at BASE with
    the package as installed (this tree on PYTHONPATH stands for it)."""
    repository = tmp_path / "user-repo"
    project = shutil.copytree(ROOT / "examples" / "own-cluster", repository / "infra")
    (repository / ".gitignore").write_text("build/\n")
    author = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    for command in (["init", "--quiet"], ["add", "--all"], [*author, "commit", "--quiet", "-m", "infra"]):
        subprocess.run(["git", *command], cwd=repository, check=True)
    (project / "Pulumi.yaml").write_text((project / "Pulumi.yaml").read_text().replace("default: 4", "default: 8"))
    changed = subprocess.run(
        [sys.executable, "-m", "gpt_oss_infra", "plan-diff", "--stack", "dev"],
        cwd=project,
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )
    assert changed.returncode == 0, changed.stderr
    assert "--- HEAD/manifests/configmap_gpt-oss_gpt-oss-engine-config.yaml" in changed.stdout
    assert "\n-    tensor_parallel_size: 4\n" in changed.stdout and "\n+    tensor_parallel_size: 8\n" in changed.stdout
    assert not (ROOT / "infra").exists()
