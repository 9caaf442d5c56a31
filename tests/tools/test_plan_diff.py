"""`make plan-diff` (tools/plan_diff.py): the plan's diff against another git revision."""

from __future__ import annotations

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

    def plan_diff() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "gpt_oss_infra", "plan-diff", "--stack", "dev", "--base", "HEAD"],
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
