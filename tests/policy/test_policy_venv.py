"""The policy pack as `pulumi preview --policy-pack policy` runs it in CI: in a venv holding what the workflows
install (policy/requirements.txt, nothing else; installed here with uv, which installs its two pins as the
workflows' pip does and resolves their dependencies from the same index: 2 s here, 22 s with pip), started as
the Pulumi CLI starts a Python pack (its __main__.py, which serves the analyzer on a port it prints), and asked
over gRPC, as the engine asks it, for its policies and to analyze a resource."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from policy.gpt_oss_policies import POLICIES
from tests.support import UV, next_line

pytestmark = pytest.mark.end_to_end  # the slower tier (pyproject.toml markers)

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


def test_the_pack_serves_every_policy_and_finds_a_violation_from_its_own_venv(policy_python):
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
            analyzer = analyzer_pb2_grpc.AnalyzerStub(channel)
            info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
            assert info.name == "gpt-oss-infra"
            assert sorted(policy.name for policy in info.policies) == sorted(policy.name for policy in POLICIES)
            # A GPU node group without the GPU taint, as the engine sends it.
            properties = struct_pb2.Struct()
            properties.update({"amiType": "AL2023_x86_64_NVIDIA", "labels": {"nvidia.com/gpu.present": "true"}})
            request = analyzer_pb2.AnalyzeRequest(
                type="aws:eks/nodeGroup:NodeGroup",
                properties=properties,
                urn="urn:pulumi:dev::gpt-oss-infra::aws:eks/nodeGroup:NodeGroup::gpu",
                name="gpu",
            )
            found = analyzer.Analyze(request, timeout=30)
        assert [d.policyName for d in found.diagnostics] == ["gpu-node-groups-tainted"]
    finally:
        pack.kill()
        pack.wait(timeout=30)


def _first_line(process: subprocess.Popen) -> str:
    """The pack's first line of output (its port), or what it printed before it died."""
    line = next_line(process, STARTUP_SECONDS)
    if line is None:
        raise AssertionError(f"the pack printed no port within {STARTUP_SECONDS} s")
    line = line.strip()
    if not line:
        raise AssertionError(f"the pack exited ({process.wait(timeout=10)}): {process.stderr.read()[-3000:]}")
    return line
