"""python -m gpt_oss_infra <command> [options]: every command of the project, each with --help.

The Makefile's targets call these. Each command is a module of gpt_oss_infra.tools with a main(argv);
a refused stack config or stack file ends any of them the same way, with its message and exit code 1.
"""

from __future__ import annotations

import importlib
import sys

from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.yaml_files import YamlFileError
from gpt_oss_infra.tools.process import run_command

# command -> (its module under gpt_oss_infra.tools, what it does)
COMMANDS = {
    "plan": ("plan", "what a stack deploys, offline: build/plan/<stack>/ and its summary"),
    "plan-diff": ("plan_diff", "the plan's diff against another commit"),
    "promote": ("promote", "copy the release block from one stack to the next, or check an upgrade"),
    "preflight": ("preflight", "read-only checks of the real AWS account before `pulumi up`"),
    "check-versions": ("check_versions", "read the chart repositories' live indexes again"),
    "estimate": ("estimate", "model every recipe with NVIDIA AISimulate"),
    "recommend": ("recommend", "a recipe from AISimulate's best configuration"),
    "trial": ("trial", "the trial stack's graphs served by real Dynamo here, no GPU"),
    "mocker-timing": ("mocker_timing", "model the trial recipes' timing tables"),
    "simulate": ("simulate", "replay every shipped deployment's traffic with and without the Planner (dynamo.replay)"),
    "dynamo-parsers": ("dynamo_parsers", "install or run each Dynamo release's own argument parsers"),
    "vendor-json": (
        "vendor_json",
        "write the JSON the program reads vendored data from: CRD twins, botocore's AWS models",
    ),
    "config-reference": (
        "config_reference",
        "write the stack config reference (docs/config.md) from the config models",
    ),
    "bench": ("bench", "time make plan, the tests and make estimate"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:{width}}  {about}" for name, (_, about) in COMMANDS.items()]
    return "usage: python -m gpt_oss_infra <command> [options]  (<command> --help for its options)\n\n" + "\n".join(
        lines
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0
    command, *rest = args
    if command not in COMMANDS:
        print(f"unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"gpt_oss_infra.tools.{COMMANDS[command][0]}")
    try:
        return module.main(rest) or 0
    except (ConfigError, YamlFileError) as error:  # a stack config or file refused: what and where, no traceback
        print(f"{command}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    run_command(main)  # the collector tuned before main imports the command: importing builds most of a plan's objects
