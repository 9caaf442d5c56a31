"""The package as a user gets it: the wheel built from this tree, installed with its dependencies in a
fresh venv (nothing of the repository on its path), plans a stack through GptOssStack offline, and the
example program that adds the public building blocks to a cluster of its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml

import gpt_oss_infra

pytestmark = pytest.mark.end_to_end  # the slower tier (pyproject.toml markers)

ROOT = Path(__file__).resolve().parent.parent


def run(command: list, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def test_the_built_wheel_installs_in_a_fresh_venv_and_plans_a_stack_and_the_example_program(tmp_path):
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(tmp_path / "dist"), str(ROOT)], tmp_path)
    (wheel,) = (tmp_path / "dist").glob("gpt_oss_infra-*.whl")
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    # The tested pins as constraints: the same dependency versions as this tree's own venv.
    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line]
    (tmp_path / "constraints.txt").write_text("\n".join(pins) + "\n")
    run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-c", "constraints.txt", wheel], tmp_path)

    where = run(
        [python, "-c", "import gpt_oss_infra; print(gpt_oss_infra.__file__, gpt_oss_infra.__version__)"], tmp_path
    )
    assert where.stdout.split() == [
        str(
            tmp_path
            / "venv"
            / "lib"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages"
            / "gpt_oss_infra"
            / "__init__.py"
        ),
        gpt_oss_infra.__version__,
    ]
    # The offline plan GptOssStack runs before registering anything, from the installed package alone:
    # an example stack's config as the engine hands it over, and a broken one refused with its key.
    entries = yaml.safe_load((ROOT / "configs" / "examples" / "Pulumi.existing-cluster.yaml").read_text())["config"]
    config = {key: value if isinstance(value, str) else json.dumps(value) for key, value in entries.items()}
    check = [python, "-m", "gpt_oss_infra.tools.plan", "--check", "--stack", "existing-cluster"]
    given = {"project": "gpt-oss-infra", "config": config, "secretKeys": []}
    assert run(check, tmp_path, input=json.dumps(given)).stdout == ""
    broken = config | {
        "gpt-oss-infra:deployments": json.dumps({"gpt-oss": {"recipe": "no-such-recipe", "nodePool": "h200"}})
    }
    refused = subprocess.run(
        check, cwd=tmp_path, input=json.dumps(given | {"config": broken}), capture_output=True, text=True, timeout=300
    )
    assert refused.returncode == 1
    assert "gpt-oss-infra:deployments.gpt-oss.recipe" in refused.stdout, refused.stdout + refused.stderr

    # The example program, copied out of the repository, planned with the installed package alone.
    example = shutil.copytree(ROOT / "examples" / "own-cluster", tmp_path / "own-cluster")
    plan = [python, "-m", "gpt_oss_infra.tools.plan", "--program-dir", example, "--stack", "dev", "--out", "out"]
    assert run(plan, tmp_path).stdout.startswith("# Plan: gpt-oss-own-cluster / dev")
    resources = json.loads((tmp_path / "out" / "dev" / "resources.json").read_text())
    assert [r["type"] for r in resources if r["type"].startswith("gpt-oss-infra:")] == [
        f"gpt-oss-infra:index:{block}" for block in ("GpuNodePool", "DynamoPlatform", "ModelCache", "GptOssDeployment")
    ]
