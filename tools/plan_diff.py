"""`make plan-diff STACK=<s> BASE=<git ref>`: what a change does to a stack's plan, offline.

Renders the plan at BASE (from `git archive` of the git repository the program's folder is in, in a
process of its own: in a clone of this repository with BASE's own code, run with this checkout's venv;
in a user's repository with the installed package) and at the working tree (in this process), and
prints a unified diff of resources.json and manifests/, or "no changes". Exit 0 either way; exit 1 when
either side cannot be planned. Works for forks and with no cloud.
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
from gpt_oss_infra.tools.plan import ROOT, add_program_arguments, find_program, plan_files

COMPARED = ("resources.json", "manifests/")
# Vendored CRDs run to thousands of lines of schema: one whose file comes or goes is named, not
# printed (a change to one is still diffed line by line).
CRD_MANIFEST = "manifests/customresourcedefinition_"


def render(
    tree: Path, stack: str, out: Path, program_dir: Path | None = None, stack_dir: Path | None = None
) -> dict[str, str]:
    """Plan `stack` with the program (default: the tree's root) and stack files of another commit's
    `tree`; the compared files by relative path. Run in `tree`, whose own gpt_oss_infra is imported
    when it has one (a clone of this repository): `gpt_oss_infra.tools.plan` is the plan command of
    every commit since the package, and --program-dir of every commit since examples/own-cluster."""
    command = [sys.executable, "-m", "gpt_oss_infra.tools.plan", "--stack", stack, "--out", str(out)]
    if program_dir is not None and program_dir != tree:
        command += ["--program-dir", str(program_dir)]
    if stack_dir is not None:
        command += ["--stack-dir", str(stack_dir)]
    result = subprocess.run(command, cwd=tree, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"plan of {stack} in {tree} failed:\n{result.stderr.strip()}")
    root = out / stack
    return compared(
        {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*")) if path.is_file()}
    )


def compared(files: dict[str, str]) -> dict[str, str]:
    return {name: text for name, text in files.items() if name.startswith(COMPARED)}


def repository(directory: Path) -> Path:
    """The root folder of the git repository `directory` is in."""
    found = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=directory, capture_output=True, text=True, check=True
    )
    return Path(found.stdout.strip()).resolve()


def checkout(ref: str, into: Path, repo: Path = ROOT) -> Path:
    """The tree of `ref` in the git repository `repo`, extracted into `into`."""
    archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=repo, capture_output=True, check=True)
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


def _refusal(error: Exception) -> str:
    """Why a side could not be planned; for git (not a git repository, an unknown ref), what git said."""
    if not isinstance(error, subprocess.CalledProcessError):
        return str(error)
    said = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else error.stderr or ""
    return f"{' '.join(map(str, error.cmd))}: {said.strip() or f'exit status {error.returncode}'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev", help="the stack to plan on both sides (default: dev)")
    parser.add_argument("--base", default="HEAD", help="git ref to compare the working tree with (default: HEAD)")
    add_program_arguments(parser)
    args = parser.parse_args(argv)
    try:
        program = find_program(args.stack, args.program_dir, args.stack_dir)
    except FileNotFoundError as error:
        print(f"plan-diff {args.stack}: {error}", file=sys.stderr)
        return 2
    # The working tree first: a plan it refuses ends the diff before the base is checked out and planned.
    try:
        after = compared(plan_files(args.stack, args.stack_dir, program.directory)[0])
    except (pulumi.RunError, ConfigError, YamlFileError, FileNotFoundError) as error:
        print(f"plan-diff: plan of {args.stack} in the working tree failed:\n{error}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        try:
            repo = repository(program.directory)
            tree = checkout(args.base, work / "base", repo)

            def at_base(path: Path) -> Path:  # a path of the working tree, in the base's tree
                path = path.resolve()
                return tree / path.relative_to(repo) if path.is_relative_to(repo) else path

            stack_dir = args.stack_dir and at_base(args.stack_dir)
            before = render(tree, args.stack, work / "base-plan", at_base(program.directory), stack_dir)
        except (RuntimeError, subprocess.CalledProcessError) as error:
            print(f"plan-diff: {_refusal(error)}", file=sys.stderr)
            return 1
    sys.stdout.write(unified_diff(before, after, args.base) or "no changes\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
