"""The policy pack as `pulumi preview --policy-pack policy` runs it in CI: in a venv holding what the workflows
install (policy/requirements.txt, nothing else; installed here with uv, which installs its two pins as the
workflows' pip does and resolves their dependencies from the same index: 2 s here, 22 s with pip), started as
the Pulumi CLI starts a Python pack (its __main__.py, which serves the analyzer on a port it prints), and asked
over gRPC, as the engine asks it, for its policies and to analyze resources and a whole stack."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from policy.gpt_oss_policies import POLICIES
from tests.support import UV, example_entries, next_line, run_entries

# The slower tier (pyproject.toml markers), on one worker: its tests share one venv and one pack process.
pytestmark = [pytest.mark.end_to_end, pytest.mark.xdist_group("policy-venv")]

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
POLICY_VENV_INSTALL = "python -m venv policy/venv && policy/venv/bin/pip install -r policy/requirements.txt"
STARTUP_SECONDS = 60


def test_the_workflows_make_the_policy_venv_from_its_requirements_alone():
    """What the test below builds is what CI builds: every workflow that runs the pack installs it so."""
    using_the_pack = [path for path in WORKFLOWS.glob("*.yml") if "policyPacks: policy" in path.read_text()]
    assert sorted(path.name for path in using_the_pack) == ["deploy-stack.yml", "preview.yml"]
    for path in using_the_pack:
        assert POLICY_VENV_INSTALL in path.read_text(), path.name


@pytest.fixture(scope="module")
def policy_python(tmp_path_factory) -> Path:
    """A venv with policy/requirements.txt only (no project package, no providers)."""
    folder = tmp_path_factory.mktemp("policy") / "venv"
    python = folder / "bin" / "python"
    for command in (
        ["venv", "--quiet", "--seed", "--python", sys.executable, folder],  # --seed: pip too, as python -m venv
        ["pip", "install", "--quiet", "--python", python, "-r", "requirements.txt"],
    ):
        done = subprocess.run([*UV, *command], cwd=ROOT / "policy", capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    listed = [*UV, "pip", "list", "--python", python]
    installed = subprocess.run(listed, capture_output=True, text=True, timeout=60).stdout
    assert "pulumi-aws" not in installed and "pulumi_kubernetes" not in installed.replace("-", "_")
    return python


@pytest.fixture(scope="module")
def analyzer(policy_python) -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    """The pack, started from its own venv as the Pulumi CLI starts it, and a client of its analyzer; stopped
    after the module's tests."""
    pack = subprocess.Popen(
        [policy_python, "-u", "__main__.py"],
        cwd=ROOT / "policy",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port_line = _first_line(pack)
        assert re.fullmatch(r"\d+", port_line), port_line + pack.stderr.read()
        with grpc.insecure_channel(f"127.0.0.1:{port_line}") as channel:
            yield analyzer_pb2_grpc.AnalyzerStub(channel)
    finally:
        pack.kill()
        pack.wait(timeout=30)


def test_the_pack_serves_every_policy_and_finds_a_violation_from_its_own_venv(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
    assert info.name == "gpt-oss-infra"
    assert sorted(policy.name for policy in info.policies) == sorted(policy.name for policy in POLICIES)
    # A GPU node group without the GPU taint, as the engine sends it.
    gpu_group = {"amiType": "AL2023_x86_64_NVIDIA", "labels": {"nvidia.com/gpu.present": "true"}}
    assert _violations(analyzer, "aws:eks/nodeGroup:NodeGroup", "gpu", gpu_group) == ["gpu-node-groups-tainted"]


NON_ROOT = {"securityContext": {"runAsNonRoot": True}}  # so that pods-have-security-context passes
# Violations deep inside a resource's properties, which the analyzer hands the policies as nested read-only
# views (pulumi-policy's proxy), not as dicts and lists.
NESTED_VIOLATIONS = [
    ("images-pinned", "kubernetes:batch/v1:Job",
     {"spec": {"template": {"spec": {**NON_ROOT, "containers": [{"name": "a", "image": "python:latest"}]}}}}),
    ("hf-token-through-secret", "kubernetes:batch/v1:Job",
     {"spec": {"template": {"spec": {**NON_ROOT, "containers": [
         {"name": "a", "image": "python:3.12", "env": [{"name": "HF_TOKEN", "value": "hf_plain"}]}]}}}}),
    ("model-cache-rwx", "kubernetes:core/v1:PersistentVolumeClaim",
     {"metadata": {"name": "model-cache"}, "spec": {"accessModes": ["ReadWriteOnce"]}}),
]  # fmt: skip


@pytest.mark.parametrize("policy, type_, props", NESTED_VIOLATIONS, ids=[case[0] for case in NESTED_VIOLATIONS])
def test_the_pack_finds_a_violation_deep_in_a_resource(analyzer, policy, type_, props):
    assert _violations(analyzer, type_, "x", props) == [policy]


def test_the_pack_passes_every_resource_of_a_stack_and_the_stack(analyzer):
    """prod's every resource, one by one and as a whole stack, as the engine sends them at `pulumi up`."""
    run = run_entries(example_entries("prod"), stack="prod")
    assert run.error is None, run.error
    found = {
        registration.name: violations
        for registration in run.resources
        if (violations := _violations(analyzer, registration.type, registration.name, registration.inputs))
    }
    assert found == {}
    stack = analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(
                type=registration.type,
                properties=_struct(registration.inputs),
                urn=f"urn:pulumi:prod::gpt-oss-infra::{registration.type}::{registration.name}",
                name=registration.name,
            )
            for registration in run.resources
        ]
    )
    assert [d.policyName for d in analyzer.AnalyzeStack(stack, timeout=60).diagnostics] == []
    assert len(run.resources) > 100  # the whole stack was sent


def _violations(analyzer, type_: str, name: str, props: dict[str, Any]) -> list[str]:
    """The policies a resource violates, asked of the pack as the engine asks it."""
    request = analyzer_pb2.AnalyzeRequest(
        type=type_, properties=_struct(props), urn=f"urn:pulumi:dev::gpt-oss-infra::{type_}::{name}", name=name
    )
    return [diagnostic.policyName for diagnostic in analyzer.Analyze(request, timeout=30).diagnostics]


def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    properties = struct_pb2.Struct()
    properties.update(props)
    return properties


def _first_line(process: subprocess.Popen) -> str:
    """The pack's first line of output (its port), or what it printed before it died."""
    line = next_line(process, STARTUP_SECONDS)
    if line is None:
        raise AssertionError(f"the pack printed no port within {STARTUP_SECONDS} s")
    line = line.strip()
    if not line:
        raise AssertionError(f"the pack exited ({process.wait(timeout=10)}): {process.stderr.read()[-3000:]}")
    return line
