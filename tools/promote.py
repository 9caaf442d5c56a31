"""`make promote FROM=dev TO=staging`: move one tested release to the next environment.

Copies the `gpt-oss-infra:release` block (and only it, comments inside it included) from
Pulumi.<FROM>.yaml into Pulumi.<TO>.yaml, indented as the target's and with its line endings; every
other line of the target stays byte for byte. Refuses, writing nothing: a source that does not plan, a
target that would not, environments that are not adjacent in dev -> staging -> prod (unless --hotfix),
and a Dynamo release older than the target's (unless --downgrade: after a hotfix took the target ahead,
the next ordinary promotion would undo it). Prints what the target's
`pulumi up` would keep, create or forget (tools/urns.py) and its plan diff.

Dynamo upgrades one minor release at a time ("Apply every intermediate minor release in order",
configs/dynamo/versions.yaml [dynamo-upgrade-path]), and the release in the target's stack file is
the one live there. A promotion across more than one minor is refused with the path spelled out;
`--step` (STEP=1) moves the target to the next release of that path instead (its own runtime image,
the target's model and revision kept): `pulumi up` it, then promote again.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import pulumi

from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.inputs.catalog import Catalog, load_catalog
from gpt_oss_infra.core.yaml_files import YamlFileError, load_stack_yaml
from gpt_oss_infra.tools.plan import ROOT, add_program_arguments, find_program, plan_files
from gpt_oss_infra.tools.plan_diff import COMPARED, unified_diff
from gpt_oss_infra.tools.pulumi_engine import ProgramRun
from gpt_oss_infra.tools.urns import transition

ORDER = ["dev", "staging", "prod"]
RELEASE_KEY = "gpt-oss-infra:release"


class PromotionError(Exception):
    pass


def release_lines(text: str, stack_file: str) -> tuple[int, int]:
    """[start, end) line range of the release block: its key line and every deeper-indented line after it,
    with the blank and comment lines among them (a comment at any indentation, when a line of the block
    follows it); what trails the block, but a deeper comment, is what follows it."""
    lines = text.splitlines(keepends=True)
    key_line = rf"^(\s*){re.escape(RELEASE_KEY)}:\s*(#.*)?$"  # a comment may follow the key
    start = next((i for i, line in enumerate(lines) if re.match(key_line, line)), None)
    if start is None:
        raise PromotionError(f"{stack_file} has no block `{RELEASE_KEY}:`")
    indent = _indent(lines[start])
    last = start
    for index in range(start + 1, len(lines)):
        text = lines[index].strip()
        if not text:
            continue
        if _indent(lines[index]) > indent:
            last = index
        elif not text.startswith("#"):
            break
    return start, last + 1


def with_release_of(source: str, target: str, target_name: str) -> str:
    """The target with the source's release block, indented as the target's key and ending its lines as the
    target does."""
    source_start, source_end = release_lines(source, "source")
    target_start, target_end = release_lines(target, target_name)
    source_lines, target_lines = source.splitlines(keepends=True), target.splitlines(keepends=True)
    shift = _indent(target_lines[target_start]) - _indent(source_lines[source_start])
    newline = "\r\n" if target_lines[target_start].endswith("\r\n") else "\n"
    block = [_moved(line, shift, newline) for line in source_lines[source_start:source_end]]
    return "".join(target_lines[:target_start] + block + target_lines[target_end:])


def _moved(line: str, shift: int, newline: str) -> str:
    """`line` indented by `shift` more spaces (fewer, when negative, as far as it has them), ending in `newline`."""
    if not line.strip():
        return newline
    body = line.rstrip("\r\n")
    return (" " * shift + body if shift > 0 else body[min(-shift, _indent(body)) :]) + newline


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def with_release_values(target: str, target_name: str, values: dict[str, str]) -> str:
    """The target with these keys of its release block set (each line's indentation and comment kept)."""
    start, end = release_lines(target, target_name)
    lines = target.splitlines(keepends=True)
    for index in range(start + 1, end):
        match = re.match(r"^(\s*)([\w]+):(\s*)(\S+)(.*)$", lines[index], re.DOTALL)
        if match and match[2] in values:
            lines[index] = f"{match[1]}{match[2]}:{match[3]}{values[match[2]]}{match[5]}"
    return "".join(lines)


def release_of(text: str, file_name: str) -> dict:
    return load_stack_yaml(text, file_name).get(RELEASE_KEY)


def upgrade_path(catalog: Catalog, live: str, wanted: str) -> list[DynamoVersion]:
    """The releases to deploy, in order, from `live` to `wanted`: one per minor release crossed (the
    table's newest release of that minor; upgrade steps included), `wanted` last. Down as well as up
    ("downgrade in the reverse direction")."""
    releases = catalog.dynamo_versions
    for version, role in ((live, "live"), (wanted, "wanted")):
        if version not in releases:
            raise PromotionError(f"the {role} Dynamo {version} is not in configs/dynamo/versions.yaml")
    start, end = releases[live].minor, releases[wanted].minor
    if start[0] != end[0]:
        raise PromotionError(f"Dynamo {live} -> {wanted} crosses a major release: no supported path is known")
    if abs(start[1] - end[1]) <= 1:
        return [releases[wanted]]
    direction = 1 if end > start else -1
    path = []
    for minor in range(start[1] + direction, end[1], direction):
        found = [r for r in releases.values() if r.minor == (start[0], minor)]
        if not found:
            raise PromotionError(
                f"Dynamo moves one minor release at a time, and no {start[0]}.{minor} release is in "
                "configs/dynamo/versions.yaml to step through: add it first"
            )
        path.append(max(found, key=lambda r: _release_number(r.version)))
    return [*path, releases[wanted]]


def _release_number(version: str) -> tuple[int, ...]:
    """1.6.1 -> (1, 6, 1): releases in the order Dynamo made them."""
    return tuple(int(part) for part in version.split("."))


def _path_text(live: str, path: list[DynamoVersion]) -> str:
    moving = "up" if path[-1].minor > path[0].minor or len(path) == 1 else "down"
    return f"{len(path)} minor releases {moving}: {' -> '.join([live, *(r.version for r in path)])}"


def with_next_step(catalog: Catalog, text: str, file_name: str, step: DynamoVersion) -> tuple[str, str]:
    """The stack file on the next release of a path (its published runtime image), and a note when
    that replaces an image of the stack's own (a mirror or a digest: set it again for the step)."""
    current = release_of(text, file_name)["runtimeImage"]
    backend = _backend(catalog, text, file_name)
    image = step.spec.runtime_images[backend]
    published = {release.spec.runtime_images.get(backend) for release in catalog.dynamo_versions.values()}
    note = ""
    if current not in published:  # the stack's own build, a mirror (whatever its tag) or a digest
        note = f"  runtimeImage {current} replaced by {image}: point it at your own copy of it again"
    return with_release_values(text, file_name, {"dynamo": step.version, "runtimeImage": image}), note


def check_live(target: str, live: str, step: bool = False, root: Path | None = ROOT, program_dir: Path = ROOT) -> str:
    """Before a `pulumi up`: the release the target's stack file asks for may be at most one minor
    release from `live` (the stack's output dynamoRelease). With `step`, write the next release of the
    path into the file instead of refusing. The stack file is in `root`, else where find_program finds
    it for the program of `program_dir`."""
    target_file = find_program(target, program_dir, root).stack_file
    text = _read(target_file)
    wanted = release_of(text, target_file.name)["dynamo"]
    catalog = load_catalog()
    path = upgrade_path(catalog, live, wanted)
    if len(path) == 1:
        return f"{target}: Dynamo {live} -> {wanted}: at most one minor release, as Dynamo supports"
    if not step:
        raise PromotionError(
            f"{target} runs Dynamo {live} (its last pulumi up) and {target_file.name} asks for {wanted}, "
            f"{_path_text(live, path)}; Dynamo moves one minor release at a time. Deploy {path[0].version} first: "
            f"`make check-upgrade STACK={target} LIVE={live} STEP=1` writes it into {target_file.name}"
        )
    stepped, note = with_next_step(catalog, text, target_file.name, path[0])
    _write(target_file, stepped)
    heading = f"{target}: {target_file.name} now asks for Dynamo {path[0].version}, step 1 of the"
    return "\n".join([f"{heading} {_path_text(live, path)}", *filter(None, [note])])


def check_order(source: str, target: str, hotfix: bool) -> None:
    for name in (source, target):
        if name not in ORDER:
            raise PromotionError(f"{name!r} is not an environment; the order is {' -> '.join(ORDER)}")
    if ORDER.index(target) != ORDER.index(source) + 1 and not hotfix:
        raise PromotionError(
            f"{source} -> {target} skips or reverses {' -> '.join(ORDER)}; promote one step at a time, "
            "or pass --hotfix (HOTFIX=1) to do it on purpose"
        )


def plan_or_none(stack: str, stack_dir: Path, program_dir: Path = ROOT) -> dict[str, str] | None:
    planned = _planned(stack, stack_dir, program_dir)
    return planned[0] if planned else None


def promote(
    source: str,
    target: str,
    hotfix: bool = False,
    step: bool = False,
    root: Path | None = ROOT,
    program_dir: Path = ROOT,
    downgrade: bool = False,
) -> str:
    """Promote and return what the target's `pulumi up` would do; 'nothing to promote' when there.
    The stack files are in `root`, else where find_program finds them for the program of `program_dir`,
    which plans them."""
    check_order(source, target, hotfix)
    source_file, target_file = (find_program(name, program_dir, root).stack_file for name in (source, target))
    source_text, target_text = _read(source_file), _read(target_file)
    source_release, target_release = (
        release_of(source_text, source_file.name),
        release_of(target_text, target_file.name),
    )
    if source_release == target_release:
        return "nothing to promote"
    if plan_or_none(source, source_file.parent, program_dir) is None:
        raise PromotionError(f"{source_file.name} does not validate: fix it (make plan STACK={source}) first")
    live, wanted = target_release["dynamo"], source_release["dynamo"]
    if _release_number(wanted) < _release_number(live) and not downgrade:
        raise PromotionError(
            f"{target} runs Dynamo {live} ({target_file.name}), newer than {source}'s {wanted}: promoting would move "
            f"{target} down (a hotfix put it ahead?). Bring {source} to {live} first, or pass --downgrade "
            "(DOWNGRADE=1) to move it down on purpose, one minor release at a time as up"
        )
    catalog = load_catalog()
    path = upgrade_path(catalog, live, wanted)
    if len(path) > 1 and not step:
        raise PromotionError(
            f"{target} runs Dynamo {live} ({target_file.name}); {source}'s {wanted} is {_path_text(live, path)}, "
            f"and Dynamo moves one minor release at a time. Promote the next step with "
            f"`make promote FROM={source} TO={target} STEP=1` (Dynamo {path[0].version}), `pulumi up` {target}, "
            "and repeat"
        )
    note = ""
    if len(path) > 1:
        promoted, note = with_next_step(catalog, target_text, target_file.name, path[0])
        heading = f"{target}: Dynamo {live} -> {path[0].version}, step 1 of the {_path_text(live, path)}"
    else:
        promoted = with_release_of(source_text, target_text, target_file.name)
        heading = f"{target}: Dynamo {live} -> {wanted}" if live != wanted else f"{target}: Dynamo {live}"
    before, before_run = _planned(target, target_file.parent, program_dir) or ({}, None)
    with tempfile.TemporaryDirectory() as scratch:
        _write(Path(scratch) / target_file.name, promoted)
        planned = _planned(target, Path(scratch), program_dir)
    if planned is None:
        raise PromotionError(f"{target_file.name} with {source}'s release does not validate; nothing written")
    after, after_run = planned
    _write(target_file, promoted)
    moves = _moves(before_run, after_run, target) if before_run else []
    diff = unified_diff(before, after, f"{target}-before", f"{target}-after") or f"{target}: plan unchanged"
    return "\n".join([heading, *filter(None, [note]), *moves, "", diff])


def _read(path: Path) -> str:
    """A stack file's text with its line endings as they are (CRLF stays CRLF)."""
    with path.open(encoding="utf-8", newline="") as stream:
        return stream.read()


def _write(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as stream:
        stream.write(text)


def _backend(catalog: Catalog, text: str, file_name: str) -> str:
    """The serving backend of the stack's deployments (one per stack): whose runtime image a step takes."""
    deployments = load_stack_yaml(text, file_name).get("gpt-oss-infra:deployments") or {}
    recipes = [catalog.recipes.get(deployment.get("recipe")) for deployment in deployments.values()]
    backends = {recipe.backend for recipe in recipes if recipe}
    return backends.pop() if len(backends) == 1 else "trtllm"


def _planned(stack: str, stack_dir: Path, program_dir: Path) -> tuple[dict[str, str], ProgramRun] | None:
    try:
        files, run = plan_files(stack, stack_dir, program_dir)
    except pulumi.RunError:
        return None
    return {name: text for name, text in files.items() if name.startswith(COMPARED)}, run


def _moves(before: ProgramRun, after: ProgramRun, stack: str) -> list[str]:
    """What `pulumi up` would do to resources, by URN, besides updating them in place."""
    moved = transition(before.resources, after.resources, stack)
    lines = [f"  taken over in place (alias): {old} -> {new}" for old, new in moved.kept if old != new]
    lines += [f"  created: {urn}" for urn in moved.created]
    lines += [f"  deleted: {urn}" for urn in moved.deleted]
    lines += [f"  left in the cluster, no longer managed (retainOnDelete): {urn}" for urn in moved.forgotten]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", help="environment to copy the release block from")
    parser.add_argument("--to", dest="target", required=True, help="environment to copy it to (the next one)")
    parser.add_argument("--hotfix", action="store_true", help="allow a non-adjacent promotion")
    parser.add_argument(
        "--downgrade", action="store_true", help="allow moving the target to an older Dynamo release than its own"
    )
    parser.add_argument(
        "--step", action="store_true", help="across several Dynamo minor releases: move the target to the next one"
    )
    parser.add_argument(
        "--live",
        help="instead of promoting: the release live on --to (its output dynamoRelease); refuse a stack file "
        "more than one Dynamo minor release from it (with --step, write the next release of the path)",
    )
    add_program_arguments(parser)
    args = parser.parse_args(argv)
    if bool(args.source) == bool(args.live):
        parser.error("give --from (promote) or --live (check a stack file against its live release)")
    try:
        if args.live:
            print(check_live(args.target, args.live, args.step, args.stack_dir, args.program_dir))
        else:
            print(
                promote(
                    args.source,
                    args.target,
                    args.hotfix,
                    args.step,
                    args.stack_dir,
                    args.program_dir,
                    downgrade=args.downgrade,
                )
            )
    except (PromotionError, FileNotFoundError, YamlFileError) as error:
        print(f"promote: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
