"""The package as a user gets it: the wheel built from this tree, installed with its dependencies in a
fresh venv (nothing of the repository on its path), plans a stack through GptOssStack offline, and the
example program that adds the public building blocks to a cluster of its own; and its command line,
run in a user's own project outside the clone, plans that project and writes under it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpt_oss_infra
from tests.support import UV

# The slower tier (pyproject.toml markers), on one worker: setuptools builds the wheel in the tree's own build/, and
# two workers building it at once failed ("File exists: build/bdist.linux-x86_64/wheel/...dist-info").
pytestmark = [pytest.mark.end_to_end, pytest.mark.xdist_group("wheel")]

ROOT = Path(__file__).resolve().parent.parent


def run(command: list, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> Path:
    """The python of a fresh venv with the wheel built from this tree installed (built once per module)."""
    build = tmp_path_factory.mktemp("wheel")
    # Built as `pip wheel` would build it (setuptools, in an isolated build environment), by uv: 2 s, pip's 5 s.
    run([*UV, "build", "--quiet", "--wheel", "--out-dir", build / "dist", ROOT], build)
    (wheel,) = (build / "dist").glob("gpt_oss_infra-*.whl")
    run([*UV, "venv", "--quiet", "--python", sys.executable, build / "venv"], build)
    python = build / "venv" / "bin" / "python"
    # The tested pins as constraints: the same dependency versions as this tree's own venv.
    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line]
    (build / "constraints.txt").write_text("\n".join(pins) + "\n")
    run([*UV, "pip", "install", "--quiet", "--python", python, "-c", "constraints.txt", wheel], build)
    return python


def site_packages(python: Path) -> Path:
    return python.parent.parent / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def test_the_built_wheel_installs_in_a_fresh_venv_and_plans_a_stack_and_the_example_program(python, tmp_path):
    where = run(
        [python, "-c", "import gpt_oss_infra; print(gpt_oss_infra.__file__, gpt_oss_infra.__version__)"], tmp_path
    )
    assert where.stdout.split() == [
        str(site_packages(python) / "gpt_oss_infra" / "__init__.py"),
        gpt_oss_infra.__version__,
    ]
    # A stack of GptOssStack, in a project of its own, planned with the installed package alone (the
    # checks `pulumi up` runs in-process with it); and a broken one refused with its key.
    project = tmp_path / "whole-stack"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: gpt-oss-infra\nruntime: python\n")
    (project / "__main__.py").write_text(
        "from gpt_oss_infra import GptOssStack, stack_config_args\n"
        'GptOssStack("gpt-oss-infra", stack_config_args()).export_stack_outputs()\n'
    )
    stack_file = (ROOT / "configs" / "examples" / "Pulumi.existing-cluster.yaml").read_text()
    (project / "Pulumi.existing-cluster.yaml").write_text(stack_file)
    whole = [python, "-m", "gpt_oss_infra", "plan", "--stack", "existing-cluster", "--out", "out"]
    assert run(whole, project).stdout.startswith("# Plan: gpt-oss-infra / existing-cluster")
    (project / "Pulumi.existing-cluster.yaml").write_text(stack_file.replace("recipe: h200-", "recipe: no-such-"))
    refused = subprocess.run(whole, cwd=project, capture_output=True, text=True, timeout=300, check=False)
    assert refused.returncode == 1
    assert "gpt-oss-infra:deployments.gpt-oss.recipe" in refused.stderr, refused.stdout + refused.stderr

    # The example program, copied out of the repository, planned with the installed package alone.
    example = shutil.copytree(ROOT / "examples" / "own-cluster", tmp_path / "own-cluster")
    plan = [python, "-m", "gpt_oss_infra", "plan", "--program-dir", example, "--stack", "dev", "--out", "out"]
    assert run(plan, tmp_path).stdout.startswith("# Plan: gpt-oss-own-cluster / dev")
    resources = json.loads((tmp_path / "out" / "dev" / "resources.json").read_text())
    assert [r["type"] for r in resources if r["type"].startswith("gpt-oss-infra:index:")] == [
        f"gpt-oss-infra:index:{block}" for block in ("GpuNodePool", "DynamoPlatform", "ModelCache", "GptOssDeployment")
    ]


def test_the_command_line_in_a_users_own_project_plans_it_and_writes_under_it(python, tmp_path):
    """`python -m gpt_oss_infra plan --stack dev` in a project outside the clone (no --program-dir, no
    --out): that project's program and stack file, its build/plan/dev/, nothing inside site-packages."""
    project = shutil.copytree(ROOT / "examples" / "own-cluster", tmp_path / "my-project")
    site = site_packages(python)
    installed = sorted(path for path in site.rglob("*") if path.suffix != ".pyc" and "__pycache__" not in path.parts)
    planned = run([python, "-m", "gpt_oss_infra", "plan", "--stack", "dev"], project)
    assert planned.stdout.startswith("# Plan: gpt-oss-own-cluster / dev")
    assert planned.stdout.splitlines()[-1] == "wrote build/plan/dev/"
    resources = json.loads((project / "build" / "plan" / "dev" / "resources.json").read_text())
    assert "gpt-oss-infra:index:GptOssDeployment" in [r["type"] for r in resources]
    after = sorted(path for path in site.rglob("*") if path.suffix != ".pyc" and "__pycache__" not in path.parts)
    assert after == installed  # nothing written inside site-packages

    # preflight finds the stack file of a project whose program is GptOssStack from its stack config,
    # and, without AWS credentials (none leak in from this environment), says what it would check.
    stack_project = tmp_path / "my-stack"
    stack_project.mkdir()
    (stack_project / "Pulumi.yaml").write_text("name: gpt-oss-infra\nruntime: python\n")
    shutil.copy(ROOT / "__main__.py", stack_project)
    dev = (ROOT / "Pulumi.dev.yaml").read_text()
    (stack_project / "Pulumi.dev.yaml").write_text(dev.replace("aws:region: us-east-2", "aws:region: eu-north-1"))
    no_aws = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")} | {
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    checked = run([python, "-m", "gpt_oss_infra", "preflight", "--stack", "dev"], stack_project, env=no_aws)
    assert "would check EKS version: EKS in eu-north-1 offers 1.34" in checked.stdout
    assert checked.stdout.splitlines()[-1] == "preflight dev: 0 problem(s)"
    # A stack only this repository has is not found there: the message names the folder searched.
    missing = subprocess.run(
        [python, "-m", "gpt_oss_infra", "plan", "--stack", "b200"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 2
    assert f"no stack file Pulumi.b200.yaml in {project}: pass --stack-dir" in missing.stderr


def test_the_component_providers_venv_gets_the_tested_versions():
    """What Pulumi installs for the component provider (`pip install -r requirements.txt` in provider/, after
    `pulumi package add`) resolves every package of the root requirements.txt to the version tested here."""
    resolved = run([*UV, "pip", "compile", "--quiet", "--no-header", "requirements.txt"], ROOT / "provider").stdout
    versions = dict(line.split(" ", 1)[0].lower().split("==") for line in resolved.splitlines() if "==" in line)
    pins = [line.split()[0].lower() for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line]
    assert len(pins) == 10
    assert {pin.split("==")[0]: versions.get(pin.split("==")[0]) for pin in pins} == dict(
        pin.split("==") for pin in pins
    )
