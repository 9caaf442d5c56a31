"""make bench's generated stacks must plan: the 20-deployment stack stopped fitting its two system nodes once
every pod asked for CPU (issue 32), and make bench failed at that step."""

from __future__ import annotations

import json
import subprocess
import sys

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


@pytest.mark.end_to_end
def test_the_registration_floor_registers_each_resource_under_its_parent_with_nothing_of_ours(tmp_path):
    resources = [
        {"type": "gpt-oss-infra:index:GptOssStack", "name": "stack", "parent": None, "inputs": {}},
        {"type": "pulumi:providers:kubernetes", "name": "k8s", "parent": "stack", "inputs": {"kubeconfig": "{}"}},
        {
            "type": "kubernetes:core/v1:Namespace",
            "name": "ns",
            "parent": "stack",
            "inputs": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dynamo-system"}},
        },
    ]
    resources_json = tmp_path / "resources.json"
    resources_json.write_text(json.dumps(resources))
    command = bench.registration_floor_command(resources_json)
    script = str(bench.REGISTRATION_FLOOR)
    floor = bench.floor_command(resources_json)[-1].split("; ")
    assert command[-1].split("; ") == [
        *floor[:-2],
        "import sys",
        f"sys.argv = [{script!r}, {str(resources_json)!r}]",
        "import runpy",
        f"runpy.run_path({script!r}, run_name='__main__')",
        *floor[-2:],
    ]
    # Before its exit, the process lists what it imported of ours: nothing.
    ours = "import sys; print(sorted(m for m in sys.modules if m.startswith('gpt_oss_infra'))); import os; os._exit(0)"
    checked = [*command[:-1], command[-1].removesuffix("import os; os._exit(0)") + ours]
    finished = subprocess.run(checked, capture_output=True, text=True, timeout=120)
    prefix = "urn:pulumi:bench::registration-floor::"
    assert (finished.returncode, finished.stdout.splitlines()) == (
        0,
        [
            f"component {prefix}pulumi:pulumi:Stack$gpt-oss-infra:index:GptOssStack::stack",
            f"custom {prefix}gpt-oss-infra:index:GptOssStack$pulumi:providers:kubernetes::k8s",
            f"custom {prefix}gpt-oss-infra:index:GptOssStack$kubernetes:core/v1:Namespace::ns",
            "[]",
        ],
    ), finished.stderr


def test_the_registration_floor_refuses_two_resources_of_one_name(tmp_path):
    resources_json = tmp_path / "resources.json"
    twice = {"type": "kubernetes:core/v1:Namespace", "name": "ns", "parent": None, "inputs": {}}
    resources_json.write_text(json.dumps([twice, twice | {"type": "kubernetes:core/v1:ConfigMap"}]))
    finished = subprocess.run(
        [sys.executable, str(bench.REGISTRATION_FLOOR), str(resources_json)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (finished.returncode, finished.stderr.strip().splitlines()[-1]) == (
        1,
        "registration_floor: more than one resource is named ns",
    )


def test_the_plans_ratio_is_the_median_of_pairs_run_back_to_back_taking_turns_to_go_first(monkeypatch):
    # The machine changes speed between pairs: the pairs' ratios are 3, 1, 1.5, 1.5, 4, 1 and 2 (median 1.5x),
    # while the ratio of the two medians would be 2 / 1 = 2x.
    times = {"floor": iter([1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 2.0]), "plan": iter([3.0, 2.0, 1.5, 1.5, 8.0, 1.0, 4.0])}
    ran = []

    def seconds(command):
        ran.append(command[0])
        return next(times[command[0]])

    monkeypatch.setattr(bench, "seconds", seconds)
    monkeypatch.setattr(bench, "REPEATS", 7)
    plan_seconds, floor_seconds, ratios = bench.paired_ratios(["plan"], ["floor"])
    assert ran == ["floor", "plan", "plan", "floor"] * 3 + ["floor", "plan"]
    assert (plan_seconds, floor_seconds, ratios) == (2.0, 1.0, [1.0, 1.0, 1.5, 1.5, 2.0, 3.0, 4.0])
    assert bench.ratio_text(ratios) == "1.50x the floor (pairs 1.00-4.00x)"


def test_a_failing_test_run_is_timed_and_names_what_failed(tmp_path):
    """make bench times a test run that fails, and names its failed tests (it had printed only "FAILED", and one
    run's failure could not be found afterwards)."""
    (tmp_path / "test_example.py").write_text("def test_passes():\n    pass\n\ndef test_fails():\n    assert 1 == 2\n")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_example.py")]
    log = tmp_path / "bench" / "whole-pytest.log"
    seconds, outcome, (failed, kept) = bench.seconds_and_outcome(command, log)
    assert seconds > 0 and outcome == "FAILED"
    # pytest adds the failure's message where the terminal is wide enough (CI's is).
    assert failed.startswith("FAILED ") and "test_example.py::test_fails" in failed
    assert kept == f"its output: {log}" and "assert 1 == 2" in log.read_text()  # the traceback, kept
    log.unlink()
    (tmp_path / "test_example.py").write_text("def test_passes():\n    pass\n")
    assert bench.seconds_and_outcome(command, log)[1:] == ("passed", []) and not log.exists()
