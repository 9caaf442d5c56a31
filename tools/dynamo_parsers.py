"""Every command line a graph runs, parsed by Dynamo's own argument parsers of the graph's release.

A flag Dynamo does not know fails a worker only at start-up, after a tens-of-GB image pull and a
60 GiB model load; here it fails `make test`. Each release in configs/dynamo/versions.yaml gets a
small venv of its own under .venv-dynamo/<release>/ (`install`): its ai-dynamo and ai-dynamo-runtime
wheels from PyPI, without their dependencies, and the few packages the parsers import
(requirements-dynamo-parsers.txt). tools/dynamo_cli_driver.py runs there and calls the release's
parsers (`dynamo.frontend`, `dynamo.trtllm`, `dynamo.mocker`) on each line, with the environment the
pod's main container lists (not what the operator injects, nor an envFrom Secret's keys, which are
not known here) and nothing of this process's environment. A line that would make the process print
and exit (--help, --version) fails. `dynamo.trtllm` imports TensorRT-LLM for four flag defaults only:
a stand-in answers that import (tools/trtllm_standin/, which says so).

    python -m gpt_oss_infra dynamo-parsers install [--into .venv-dynamo]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.core.paths import VENDOR_DIR

ROOT = Path(__file__).resolve().parents[1]
VENVS = ROOT / ".venv-dynamo"
DRIVER = ROOT / "tools" / "dynamo_cli_driver.py"
STANDIN = ROOT / "tools" / "trtllm_standin"
REQUIREMENTS = ROOT / "requirements-dynamo-parsers.txt"
FIELD_LIST = VENDOR_DIR / "trtllm" / "llm_args_fields.json"
TIMEOUT_SECONDS = 300


@dataclass(frozen=True)
class CommandLine:
    """What one component's main container runs: its command and arguments, and its environment."""

    where: str  # a reader's name for it, e.g. "b200-disagg/disagg-4p4d TrtllmPrefillWorker"
    argv: list[str]
    env: dict[str, str]


def graph_command_lines(graph: dict[str, Any], where: str) -> list[CommandLine]:
    return [
        CommandLine(
            f"{where} {component.name}",
            [*component.main.get("command", []), *component.main.get("args", [])],
            {item["name"]: item["value"] for item in component.main.get("env", []) if "value" in item},
        )
        for component in graph_components(graph)
    ]


def python_of(release: DynamoVersion, venvs: Path = VENVS) -> Path:
    return venvs / release.version / "bin" / "python"


def parse(release: DynamoVersion, lines: list[CommandLine], venvs: Path = VENVS) -> dict[str, str]:
    """The lines the release's parsers refuse, each with what the parser said ({} when all parse)."""
    with tempfile.TemporaryDirectory() as scratch:
        requests, results = Path(scratch) / "requests.json", Path(scratch) / "results.json"
        requests.write_text(json.dumps([{"id": line.where, "argv": line.argv, "env": line.env} for line in lines]))
        # Nothing of this process's environment: each line is parsed with its own pod's variables only.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(STANDIN)}
        env["GPT_OSS_TRTLLM_FIELDS"] = str(FIELD_LIST)
        # Dynamo's entry points leave files in the temporary directory as they start (dynamo.runtime.logging
        # writes SGLang's logging config with delete=False, one a dynamo.frontend): in scratch, they go with it.
        env["TMPDIR"] = scratch
        subprocess.run(
            [str(python_of(release, venvs)), str(DRIVER), str(requests), str(results)],
            env=env,
            cwd=scratch,  # the parsers may write a log or a config dump: never into the checkout
            check=True,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
        )
        return {where: said for where, said in json.loads(results.read_text()).items() if said is not None}


def install(venvs: Path = VENVS) -> None:
    """A venv per release of the table: its two wheels, without dependencies, and what the parsers import."""
    for release in load_catalog().dynamo_versions.values():
        python = python_of(release, venvs)
        marker = python.parent.parent / ".installed"
        if marker.exists() and marker.read_text() == release.wheel:
            continue
        print(f"==> {python.parent.parent}: ai-dynamo {release.wheel} (its argument parsers)", flush=True)
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
        subprocess.run([*pip, f"ai-dynamo=={release.wheel}", f"ai-dynamo-runtime=={release.wheel}"], check=True)
        subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
        marker.write_text(release.wheel)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["install"], help="install: make each release's parser venv")
    parser.add_argument("--into", type=Path, default=VENVS, help="where the venvs go (default: .venv-dynamo)")
    args = parser.parse_args(argv)
    install(args.into)
    return 0


if __name__ == "__main__":
    sys.exit(main())
