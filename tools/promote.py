"""`make promote FROM=dev TO=staging`: move one tested release to the next environment.

Copies the `gpt-oss-infra:release` block (and only it, comments inside it included) from
Pulumi.<FROM>.yaml into Pulumi.<TO>.yaml; every other line of the target stays byte for byte.
Refuses, writing nothing: a source that does not plan, a target that would not, and environments
that are not adjacent in dev -> staging -> prod (unless --hotfix). Prints the target's plan diff.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import pulumi

from core.yaml_files import YamlFileError, load_stack_yaml
from tools.plan import ROOT, plan_files
from tools.plan_diff import COMPARED, unified_diff

ORDER = ["dev", "staging", "prod"]
RELEASE_KEY = "gpt-oss-infra:release"


class PromotionError(Exception):
    pass


def release_lines(text: str, stack_file: str) -> tuple[int, int]:
    """[start, end) line range of the release block: its key line and every deeper-indented or
    blank line after it."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(rf"^(\s*){re.escape(RELEASE_KEY)}:\s*$", line)), None)
    if start is None:
        raise PromotionError(f"{stack_file} has no block `{RELEASE_KEY}:`")
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():  # trailing blank lines belong to what follows
        end -= 1
    return start, end


def with_release_of(source: str, target: str, target_name: str) -> str:
    source_start, source_end = release_lines(source, "source")
    target_start, target_end = release_lines(target, target_name)
    source_lines, target_lines = source.splitlines(keepends=True), target.splitlines(keepends=True)
    return "".join(target_lines[:target_start] + source_lines[source_start:source_end] + target_lines[target_end:])


def release_of(text: str, file_name: str) -> dict:
    return load_stack_yaml(text, file_name).get(RELEASE_KEY)


def check_order(source: str, target: str, hotfix: bool) -> None:
    for name in (source, target):
        if name not in ORDER:
            raise PromotionError(f"{name!r} is not an environment; the order is {' -> '.join(ORDER)}")
    if ORDER.index(target) != ORDER.index(source) + 1 and not hotfix:
        raise PromotionError(
            f"{source} -> {target} skips or reverses {' -> '.join(ORDER)}; promote one step at a time, "
            "or pass --hotfix (HOTFIX=1) to do it on purpose"
        )


def plan_or_none(stack: str, stack_dir: Path) -> dict[str, str] | None:
    try:
        files, _ = plan_files(stack, stack_dir)
    except pulumi.RunError:
        return None
    return {name: text for name, text in files.items() if name.startswith(COMPARED)}


def promote(source: str, target: str, hotfix: bool = False, root: Path = ROOT) -> str:
    """Promote and return the target's plan diff; 'nothing to promote' when already there."""
    check_order(source, target, hotfix)
    source_file, target_file = root / f"Pulumi.{source}.yaml", root / f"Pulumi.{target}.yaml"
    source_text, target_text = source_file.read_text(), target_file.read_text()
    if release_of(source_text, source_file.name) == release_of(target_text, target_file.name):
        return "nothing to promote"
    if plan_or_none(source, root) is None:
        raise PromotionError(f"{source_file.name} does not validate: fix it (make plan STACK={source}) first")
    promoted = with_release_of(source_text, target_text, target_file.name)
    before = plan_or_none(target, root) or {}
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / target_file.name).write_text(promoted)
        after = plan_or_none(target, Path(scratch))
    if after is None:
        raise PromotionError(f"{target_file.name} with {source}'s release does not validate; nothing written")
    target_file.write_text(promoted)
    return unified_diff(before, after, f"{target}-before", f"{target}-after") or f"{target}: plan unchanged"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", required=True, help="environment to copy the release block from")
    parser.add_argument("--to", dest="target", required=True, help="environment to copy it to (the next one)")
    parser.add_argument("--hotfix", action="store_true", help="allow a non-adjacent promotion")
    args = parser.parse_args(argv)
    try:
        print(promote(args.source, args.target, args.hotfix))
    except (PromotionError, FileNotFoundError, YamlFileError) as error:
        print(f"promote: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
