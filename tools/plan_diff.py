"""`make plan-diff STACK=<s> BASE=<git ref>`: what a change does to a stack's plan, offline.

Renders the plan at BASE (from `git archive`: its own code, run with this checkout's venv in a
process of its own) and at the working tree (in this process), and prints a unified diff of
resources.json and manifests/, or "no changes". Exit 0 either way; exit 1 when either side cannot
be planned. Works for forks and with no cloud.
"""

from __future__ import annotations

import argparse
import difflib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pulumi

from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.yaml_files import YamlFileError
from gpt_oss_infra.tools.plan import ROOT, plan_files

COMPARED = ("resources.json", "manifests/")
# Vendored CRDs run to thousands of lines of schema: one whose file comes or goes is named, not
# printed (a change to one is still diffed line by line).
CRD_MANIFEST = "manifests/customresourcedefinition_"


def render(tree: Path, stack: str, out: Path) -> dict[str, str]:
    """Plan `stack` with the code and stack files of another commit's `tree`; the compared files by
    relative path. `gpt_oss_infra.tools.plan` is the plan command of every commit since the package."""
    result = subprocess.run(
        [sys.executable, "-m", "gpt_oss_infra.tools.plan", "--stack", stack, "--out", str(out)],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"plan of {stack} in {tree} failed:\n{result.stderr.strip()}")
    root = out / stack
    return compared(
        {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*")) if path.is_file()}
    )


def compared(files: dict[str, str]) -> dict[str, str]:
    return {name: text for name, text in files.items() if name.startswith(COMPARED)}


def checkout(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=ROOT, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def unified_diff(before: dict[str, str], after: dict[str, str], base: str, head: str = "working-tree") -> str:
    chunks = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, ""), after.get(name, "")
        if name.startswith(CRD_MANIFEST) and not (old and new):
            added = name in after
            lines = len((new or old).splitlines())
            chunks.append(
                f"{'+++' if added else '---'} {head if added else base}/{name}: a CustomResourceDefinition "
                f"({lines} lines) {'applied by the program' if added else 'no longer applied by the program'}\n"
            )
        elif old != new:
            chunks += difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"{base}/{name}" if name in before else "/dev/null",
                tofile=f"{head}/{name}" if name in after else "/dev/null",
            )
    return "".join(chunks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev", help="the stack to plan on both sides (default: dev)")
    parser.add_argument("--base", default="HEAD", help="git ref to compare the working tree with (default: HEAD)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        try:
            before = render(checkout(args.base, work / "base"), args.stack, work / "base-plan")
        except (RuntimeError, subprocess.CalledProcessError) as error:
            print(f"plan-diff: {error}", file=sys.stderr)
            return 1
        try:
            after = compared(plan_files(args.stack)[0])
        except (pulumi.RunError, ConfigError, YamlFileError, FileNotFoundError) as error:
            print(f"plan-diff: plan of {args.stack} in the working tree failed:\n{error}", file=sys.stderr)
            return 1
    sys.stdout.write(unified_diff(before, after, args.base) or "no changes\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
