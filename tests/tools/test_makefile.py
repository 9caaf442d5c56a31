"""The command line explains itself: `make` (= `make help`) lists every target with its
description, and every `python -m gpt_oss_infra.tools.<name>` has a --help naming what it does and each option."""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys

import pytest

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
def test_every_tool_has_help_with_a_description_and_each_options_help(tool, monkeypatch):
    result = subprocess.run(
        [sys.executable, "-m", f"gpt_oss_infra.tools.{tool}", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    parser = parser_of(tool, monkeypatch)
    assert parser.description and words(parser.description) in words(result.stdout)
    for action in parser._actions:
        assert action.help, f"tools.{tool} {'/'.join(action.option_strings)} has no help text"
        assert words(action.help) in words(result.stdout)
