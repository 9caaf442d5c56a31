"""The commands that take a stack, run in a user's own Pulumi project (not this repository): they plan
the program of the current directory, read its stack files, and write under it (issue 32). The
installed package's command line does the same: tests/test_wheel.py."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from gpt_oss_infra.tools import plan, preflight, promote
from gpt_oss_infra.tools.plan import EXAMPLES, ROOT

EXAMPLE = ROOT / "examples" / "own-cluster"
NO_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")


def stack_project(directory: Path, *stacks: str) -> Path:
    """A user's project whose program is GptOssStack from its stack config (as this repository's
    __main__.py), with copies of this repository's stack files. Named gpt-oss-infra as this one:
    stack_config_args reads the secrets (apiKeys) under the project's name."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Pulumi.yaml").write_text("name: gpt-oss-infra\nruntime: python\n")
    shutil.copy(ROOT / "__main__.py", directory)
    for stack in stacks:
        shutil.copy(ROOT / f"Pulumi.{stack}.yaml", directory)
    return directory


@pytest.fixture(scope="module")
def own_project(tmp_path_factory) -> Path:
    """A copy of examples/own-cluster outside the repository: a user's program of their own."""
    return Path(shutil.copytree(EXAMPLE, tmp_path_factory.mktemp("user") / "own-cluster"))


@pytest.fixture(scope="module")
def planned_here(own_project) -> tuple[int, str, str]:
    """`python -m gpt_oss_infra plan --stack dev` in that project: exit code, stdout, stderr (one plan)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.chdir(own_project)
        code = plan.main(["--stack", "dev"])
    return code, out.getvalue(), err.getvalue()


def test_plan_in_a_users_project_plans_its_program_and_writes_under_it(own_project, planned_here):
    code, out, err = planned_here
    assert code == 0, err
    assert out.startswith("# Plan: gpt-oss-own-cluster / dev")
    assert out.splitlines()[-1] == "wrote build/plan/dev/"  # relative to the current directory, and true
    resources = json.loads((own_project / "build" / "plan" / "dev" / "resources.json").read_text())
    assert "gpt-oss-infra:index:GpuNodePool" in [r["type"] for r in resources]
    assert sorted(path.name for path in (own_project / "build" / "plan").iterdir()) == ["dev"]


def test_plan_without_a_pulumi_project_here_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert plan.main(["--stack", "dev"]) == 2
    err = capsys.readouterr().err
    assert f"plan dev: no Pulumi.yaml in {tmp_path.resolve()}: " in err and "--program-dir" in err
    assert list(tmp_path.iterdir()) == []


def test_a_users_project_does_not_see_this_repositorys_example_stacks(own_project, monkeypatch, capsys):
    monkeypatch.chdir(own_project)
    assert plan.main(["--stack", "b200"]) == 2
    err = capsys.readouterr().err
    assert f"no stack file Pulumi.b200.yaml in {own_project.resolve()}: pass --stack-dir" in err
    assert "configs" not in err
    # In the clone, this repository's program still finds them (make plan STACK=b200).
    assert plan.find_program("b200", ROOT).stack_file == EXAMPLES / "Pulumi.b200.yaml"


def test_the_program_is_the_projects_main_and_its_stack_files_may_be_in_stack_config_dir(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\nmain: src/\nstackConfigDir: config\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__main__.py").write_text("import pulumi\n\npulumi.export('answer', 42)\n")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "Pulumi.dev.yaml").write_text("config: {}\n")
    found = plan.find_program("dev", tmp_path)
    assert found == plan.Program(tmp_path.resolve(), tmp_path.resolve() / "src" / "__main__.py", found.stack_file)
    assert found.stack_file == tmp_path.resolve() / "config" / "Pulumi.dev.yaml"
    files, _ = plan.plan_files("dev", program_dir=tmp_path)
    assert json.loads(files["outputs.json"]) == {"answer": 42}
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\nmain: src/app.py\n")
    assert plan.find_program("dev", tmp_path, tmp_path / "config").main == tmp_path.resolve() / "src" / "app.py"


def test_preflight_reads_the_stack_file_of_the_current_directory(tmp_path, monkeypatch, capsys):
    project = stack_project(tmp_path / "project", "dev")
    dev = project / "Pulumi.dev.yaml"
    dev.write_text(dev.read_text().replace("aws:region: us-east-2", "aws:region: eu-north-1"))
    for variable in NO_AWS:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.chdir(project)
    assert preflight.main(["--stack", "dev"]) == 0
    assert "would check EKS version: EKS in eu-north-1 offers 1.34" in capsys.readouterr().out
    assert preflight.main(["--stack", "b200"]) == 2
    assert f"no stack file Pulumi.b200.yaml in {project.resolve()}: pass --stack-dir" in capsys.readouterr().err


def test_promote_reads_and_writes_the_stack_files_of_the_current_directory(tmp_path, monkeypatch, capsys):
    project = stack_project(tmp_path / "project", "dev")
    dev = project / "Pulumi.dev.yaml"
    dev.write_text(promote.with_release_values(dev.read_text(), dev.name, {"dynamo": "1.5.1"}))
    monkeypatch.chdir(project)
    assert promote.main(["--to", "dev", "--live", "1.2.1"]) == 1
    assert "Pulumi.dev.yaml asks for 1.5.1, 3 minor releases up" in capsys.readouterr().err
    assert promote.main(["--from", "dev", "--to", "staging"]) == 1
    assert f"no stack file Pulumi.staging.yaml in {project.resolve()}: pass --stack-dir" in capsys.readouterr().err


@pytest.mark.end_to_end  # three whole-stack plans of the user's program
def test_a_promotion_in_a_users_project_plans_its_program(tmp_path, monkeypatch, capsys):
    project = stack_project(tmp_path / "project", "dev", "staging")
    staging = project / "Pulumi.staging.yaml"
    staging.write_text(
        promote.with_release_values(
            staging.read_text(),
            staging.name,
            {"dynamo": "1.5.1", "runtimeImage": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.5.1"},
        )
    )
    repository_staging = (ROOT / "Pulumi.staging.yaml").read_text()
    monkeypatch.chdir(project)
    assert promote.main(["--from", "dev", "--to", "staging"]) == 0
    assert capsys.readouterr().out.startswith("staging: Dynamo 1.5.1 -> 1.6.1\n")
    assert promote.release_of(staging.read_text(), "staging")["dynamo"] == "1.6.1"
    assert (ROOT / "Pulumi.staging.yaml").read_text() == repository_staging
