"""make bench's generated stacks must plan: the 20-deployment stack stopped fitting its two system nodes once
every pod asked for CPU (issue 32), and make bench failed at that step."""

from __future__ import annotations

import json
import subprocess

import pytest

from gpt_oss_infra.tools import bench, plan
from gpt_oss_infra.tools.process import GC_THRESHOLDS


@pytest.mark.end_to_end
def test_the_scaled_stacks_plan(tmp_path, capsys):
    for deployments in (1, 20):
        stack = bench.scaled_stack(tmp_path, deployments)
        assert plan.main(["--stack", stack, "--stack-dir", str(tmp_path), "--out", str(tmp_path / "out")]) == 0, (
            capsys.readouterr().err
        )
        assert capsys.readouterr().out.endswith(f"wrote {tmp_path / 'out' / stack}/\n")


@pytest.mark.end_to_end
def test_the_floor_imports_the_sdk_classes_of_the_plans_resources_and_nothing_of_ours(tmp_path):
    resources = tmp_path / "resources.json"
    types = [
        "aws:eks/cluster:Cluster",
        "kubernetes:core/v1:Namespace",
        "kubernetes:karpenter.sh/v1:NodePool",
    ]
    resources.write_text(json.dumps([{"type": kind} for kind in [*types, "gpt-oss-infra:index:GptOssStack"]]))
    command = bench.floor_command(resources)
    imported = command[-1].split("; ")
    assert [line for line in imported if line.startswith("from")] == [
        "from pulumi_aws.eks import Cluster",
        "from pulumi_kubernetes.apiextensions import CustomResource",
        "from pulumi_kubernetes.core.v1 import Namespace",
    ]
    assert "gpt_oss_infra" not in command[-1]
    # Timed as the command line runs: its collector's thresholds, and no teardown at exit.
    assert imported[:2] == ["import gc", f"gc.set_threshold(*{GC_THRESHOLDS})"]
    assert imported[-2:] == ["import os", "os._exit(0)"]
    assert subprocess.run(command, capture_output=True, timeout=120).returncode == 0
