"""The command line explains itself: `make` (= `make help`) lists every target with its
description, and every command of `python -m gpt_oss_infra` has a --help naming what it does and each option."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys

import pytest

from gpt_oss_infra.tools import bench
from gpt_oss_infra.tools.plan import ROOT

MAKEFILE = (ROOT / "Makefile").read_text()
TOOLS = sorted(path.stem for path in (ROOT / "tools").glob("*.py") if "\ndef main(" in path.read_text())


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("args", [("help",), ()], ids=["make help", "make"])
def test_make_help_lists_every_target_with_its_description(args):
    targets = re.findall(r"^([a-z][a-z-]*):", MAKEFILE, re.M)
    described = dict(re.findall(r"^([a-z][a-z-]*):.*?## (.+)$", MAKEFILE, re.M))
    assert sorted(described) == sorted(targets), "a target without a `## description`"
    result = make(*args)
    assert result.returncode == 0, result.stderr
    for target, description in described.items():
        assert re.search(rf"^\s*{target}\s+{re.escape(description)}$", result.stdout, re.M), (target, result.stdout)


def test_first_install_says_what_it_does_and_shows_pip_progress(tmp_path):
    venv = tmp_path / "venv"
    result = make("--dry-run", f"VENV={venv}", f"{venv}/.installed")
    assert result.returncode == 0, result.stderr
    assert f"==> creating {venv}" in result.stdout
    assert "pip install" in result.stdout and "--quiet" not in result.stdout


class Parsed(Exception):
    """Raised in place of parse_args: carries the tool's parser out of its main()."""


def parser_of(tool: str, monkeypatch) -> argparse.ArgumentParser:
    def capture(parser, *_):
        raise Parsed(parser)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(Parsed) as parsed:
        importlib.import_module(f"gpt_oss_infra.tools.{tool}").main([])
    return parsed.value.args[0]


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_has_help_with_a_description_and_each_options_help(tool, monkeypatch, capsys):
    """--help of each command through python -m gpt_oss_infra (of a driver, its own), run in this process."""
    from gpt_oss_infra.__main__ import COMMANDS
    from gpt_oss_infra.__main__ import main as command_line

    command = next((name for name, (module, _) in COMMANDS.items() if module == tool), None)
    with pytest.raises(SystemExit) as exited:
        if command:
            command_line([command, "--help"])
        else:
            importlib.import_module(f"gpt_oss_infra.tools.{tool}").main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    parser = parser_of(tool, monkeypatch)
    assert parser.description and words(parser.description) in words(shown)
    for action in parser._actions:
        assert action.help, f"tools.{tool} {'/'.join(action.option_strings)} has no help text"
        assert words(action.help) in words(shown)


# Tools that run in another venv's Python (AISimulate's, each Dynamo release's), not as a command here.
OTHER_VENV_DRIVERS = {"aisimulate_driver", "dynamo_cli_driver", "planner_driver", "replay_driver", "virtual_scaler"}


def test_every_tool_is_a_command_of_python_m_gpt_oss_infra_and_make_calls_only_that():
    from gpt_oss_infra.__main__ import COMMANDS

    assert sorted(module for module, _ in COMMANDS.values()) == sorted(set(TOOLS) - OTHER_VENV_DRIVERS)
    assert "-m gpt_oss_infra.tools" not in MAKEFILE  # one entry point: python -m gpt_oss_infra <command>
    listed = subprocess.run([sys.executable, "-m", "gpt_oss_infra", "--help"], cwd=ROOT, capture_output=True, text=True)
    for command, (_, about) in COMMANDS.items():
        assert re.search(rf"^\s+{command}\s+{re.escape(about)}$", listed.stdout, re.M), command


def test_a_refused_stack_ends_any_command_with_its_message_and_no_traceback(tmp_path):
    (tmp_path / "Pulumi.broken.yaml").write_text("config:\n  gpt-oss-infra:environment: [\n")
    args = [sys.executable, "-m", "gpt_oss_infra", "plan", "--stack", "broken", "--stack-dir", str(tmp_path)]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and "Pulumi.broken.yaml" in done.stderr and "Traceback" not in done.stderr
    unknown = subprocess.run(
        [sys.executable, "-m", "gpt_oss_infra", "deploy"], cwd=ROOT, capture_output=True, text=True
    )
    assert unknown.returncode == 2 and "unknown command 'deploy'" in unknown.stderr


def venvs_installed_by(target: str) -> set[str]:
    line = re.search(rf"^{target}:([^#\n]*)", MAKEFILE, re.MULTILINE)
    assert line, f"no {target} target"
    return {prerequisite for prerequisite in line.group(1).split() if prerequisite.endswith("/.installed")}


def test_make_bench_installs_every_venv_the_tests_read():
    """make bench runs the tests' fast tier: on a fresh checkout it failed there, at the test of Dynamo's
    mocker flags, for want of the parser venvs make test installs."""
    assert venvs_installed_by("test") <= venvs_installed_by("bench")
    assert "$(VENV_DYNAMO)/.installed" in venvs_installed_by("test")


def test_make_runs_its_commands_with_bytecode_caching_on():
    """A PYTHONDONTWRITEBYTECODE from the environment had every command compile the project's modules again."""
    probe = 'probe: ; @echo "[$$PYTHONDONTWRITEBYTECODE]"'
    shown = subprocess.run(
        ["make", "--no-print-directory", "--eval", probe, "probe"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert (shown.returncode, shown.stdout) == (0, "[]\n"), shown.stderr


def test_make_test_runs_as_many_pytest_workers_as_make_bench_times():
    assert re.search(rf"^\t\$\(PY\) -m pytest -n {bench.TEST_WORKERS} --dist loadgroup$", MAKEFILE, re.MULTILINE)
    assert "--dist loadgroup" in " ".join(bench.PYTEST)
