"""make bench's generated stacks must plan: the 20-deployment stack stopped fitting its two system nodes once
every pod asked for CPU (issue 32), and make bench failed at that step."""

from __future__ import annotations

import pytest

from gpt_oss_infra.tools import bench, plan


@pytest.mark.end_to_end
def test_the_scaled_stacks_plan(tmp_path, capsys):
    for deployments in (1, 20):
        stack = bench.scaled_stack(tmp_path, deployments)
        assert plan.main(["--stack", stack, "--stack-dir", str(tmp_path), "--out", str(tmp_path / "out")]) == 0, (
            capsys.readouterr().err
        )
        assert capsys.readouterr().out.endswith(f"wrote {tmp_path / 'out' / stack}/\n")
