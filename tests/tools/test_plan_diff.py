"""`make plan-diff` (tools/plan_diff.py): the plan's diff against another git revision."""

from __future__ import annotations

import subprocess
import sys

from tools.plan import ROOT


def test_plan_diff_shows_a_changed_recipe_value_and_nothing_without_a_change(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)

    def plan_diff() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "tools.plan_diff", "--stack", "dev", "--base", "HEAD"],
            cwd=clone,
            capture_output=True,
            text=True,
        )

    unchanged = plan_diff()
    assert (unchanged.returncode, unchanged.stdout) == (0, "")
    recipe = clone / "configs/recipes/h200-agg-low-latency.yaml"
    recipe.write_text(recipe.read_text().replace("max_batch_size: 8\n", "max_batch_size: 16\n"))
    changed = plan_diff()
    assert changed.returncode == 0
    assert "--- HEAD/manifests/configmap_gpt-oss_gpt-oss-engine-config.yaml" in changed.stdout
    assert "-      max_batch_size: 8\n+      max_batch_size: 16\n" in changed.stdout
