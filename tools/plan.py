"""`make plan [STACK=dev]`: what a stack would deploy, offline.

Loads Pulumi.yaml + Pulumi.<stack>.yaml of the Pulumi project in the current directory (this
repository's, or a user's own; --program-dir), runs its program (__main__.py) on Pulumi's mock engine
and writes build/plan/<stack>/ under the current directory (--out; replacing what was there):
  resources.json  every registered resource, in order, secrets shown as "[secret]"; a
                  CustomResourceDefinition's spec (megabytes of vendored schema) only by its
                  manifest file and digest
  manifests/      every Kubernetes object the program declares, one YAML file each
  outputs.json    the stack outputs
  summary.md      pools, GPUs, deployments with recipe and topology, the critical path (also printed)
Invalid config: exit 1 with the message naming the key; nothing is written. Besides the program's
own checks, every AWS request the plan would make is checked against botocore's models
(core/checks/aws_contract.py), the program's own resources too; GptOssStack runs the same check on
the resources it will make before `pulumi preview` or `up` registers anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import yaml

from gpt_oss_infra.components.stack_config import decode
from gpt_oss_infra.core.checks.aws_contract import refusals
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, SECRET_COMMANDS
from gpt_oss_infra.core.mappings import leaves
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.report.stack_report import render_program_summary, render_summary
from gpt_oss_infra.core.yaml_files import YamlFileError, read_stack_yaml
from gpt_oss_infra.tools import critical_path
from gpt_oss_infra.tools.destroy_simulation import simulate_destroy, summary_lines
from gpt_oss_infra.tools.process import run_command
from gpt_oss_infra.tools.pulumi_engine import SECRET, UNKNOWN, ProgramRun, Registration, run_program

ROOT = Path(__file__).resolve().parent.parent
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
EXAMPLES = CONFIG_DIR / "examples"


class AwsRefusal(ConfigError):
    """Requests of the program AWS would refuse: each under the stack file's key that holds the value,
    or under the program's resource that sends it."""


@dataclass(frozen=True)
class StackFiles:
    project: str
    config: dict[str, str]  # as the Pulumi engine hands it to the program
    secret_keys: list[str]


def load_stack_files(stack: str, stack_dir: Path | None = None, project_dir: Path = ROOT) -> StackFiles:
    """Pulumi.yaml (project, config defaults) from `project_dir` + Pulumi.<stack>.yaml, found as
    find_program finds it."""
    program = find_program(stack, project_dir, stack_dir)
    project = yaml.safe_load((program.directory / "Pulumi.yaml").read_text())
    entries = stack_config_entries(program.stack_file, program.directory)
    plaintext = [
        Problem(path, f"a secret stored in plaintext in the stack file: remove it and set it with {command}")
        for key, command in SECRET_COMMANDS.items()
        for path, leaf in leaves(f"{KEY_PREFIX}{key}", entries.get(f"{KEY_PREFIX}{key}", {"secure": ""}))
        if not path.endswith(".secure")
    ]
    if plaintext:  # the program refuses a wholly plaintext key too; only the file shows one plaintext value in a map
        raise ConfigError(plaintext)
    config, secret_keys = engine_config(entries)
    return StackFiles(project=project["name"], config=config, secret_keys=secret_keys)


@dataclass(frozen=True)
class Program:
    directory: Path  # the Pulumi project's folder (its Pulumi.yaml)
    main: Path  # the program file the engine runs
    stack_file: Path  # Pulumi.<stack>.yaml


def find_program(stack: str, program_dir: Path = Path("."), stack_dir: Path | None = None) -> Program:
    """Which program and which stack file a command plans for `stack`: the Pulumi project in
    `program_dir` (default: the current directory), its `main` (a file, or a folder holding
    __main__.py; default __main__.py), and Pulumi.<stack>.yaml in `stack_dir`, else in the project's
    folder (its stackConfigDir) and, for this repository's own program in a clone, configs/examples/."""
    directory = program_dir.resolve()
    if not (directory / "Pulumi.yaml").is_file():
        raise FileNotFoundError(
            f"no Pulumi.yaml in {directory}: run the command in your Pulumi project's folder, or pass --program-dir"
        )
    project = yaml.safe_load((directory / "Pulumi.yaml").read_text()) or {}
    main = directory / project.get("main", "__main__.py")
    main = main / "__main__.py" if main.is_dir() else main
    if stack_dir is not None:
        candidates = [stack_dir]
    else:
        candidates = [directory / project.get("stackConfigDir", ".")]
        if directory == ROOT and (ROOT / "__main__.py").is_file():  # a clone of this repository
            candidates.append(EXAMPLES)
    candidates = [candidate.resolve() for candidate in candidates]
    stack_file = next((d / f"Pulumi.{stack}.yaml" for d in candidates if (d / f"Pulumi.{stack}.yaml").is_file()), None)
    if stack_file is None:
        raise FileNotFoundError(
            f"no stack file Pulumi.{stack}.yaml in {', '.join(map(str, candidates))}: pass --stack-dir "
            "(the folder holding it) or --program-dir (the Pulumi project's folder)"
        )
    return Program(directory, main, stack_file)


def stack_config_entries(stack_file: Path, project_dir: Path = ROOT) -> dict[str, Any]:
    """The project's Pulumi.yaml config defaults, overridden by the stack file's `config:`, as written."""
    project = yaml.safe_load((project_dir / "Pulumi.yaml").read_text())
    return _project_defaults(project) | read_stack_yaml(stack_file)


def engine_config(entries: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Stack-file config as the engine hands it to a program: JSON text for structured values,
    ciphertext replaced, and the list of keys that hold secrets."""
    config, secret_keys = {}, []
    for key, value in entries.items():
        value, secret = _without_ciphertext(value)
        config[key] = value if isinstance(value, str) else json.dumps(value)
        if secret:
            secret_keys.append(key)
    return config, sorted(secret_keys)


def _project_defaults(project: dict) -> dict[str, Any]:
    """`config:` defaults declared in Pulumi.yaml, keyed like stack config."""
    defaults = {}
    for key, spec in (project.get("config") or {}).items():
        full_key = key if ":" in key else f"{project['name']}:{key}"
        if isinstance(spec, dict) and ("default" in spec or "value" in spec):
            defaults[full_key] = spec.get("value", spec.get("default"))
    return defaults


def _without_ciphertext(value: Any) -> tuple[Any, bool]:
    """Replace `{secure: <ciphertext>}` (undecryptable offline) by "[secret]"; report if any."""
    if isinstance(value, dict) and set(value) == {"secure"}:
        return SECRET, True
    if isinstance(value, dict):
        pairs = {key: _without_ciphertext(item) for key, item in value.items()}
        return {key: item for key, (item, _) in pairs.items()}, any(s for _, s in pairs.values())
    if isinstance(value, list):
        pairs = [_without_ciphertext(item) for item in value]
        return [item for item, _ in pairs], any(s for _, s in pairs)
    return value, False


def plan_files(
    stack: str, stack_dir: Path | None = None, program_dir: Path = ROOT
) -> tuple[dict[str, str], ProgramRun]:
    """Run the program of `program_dir` (this repository's by default) for `stack` and return the
    plan's files (relative path -> text)."""
    program = find_program(stack, program_dir, stack_dir)
    return planned(load_stack_files(stack, stack_dir, program_dir), stack, program.main)


def planned(files: StackFiles, stack: str, program: Path = ROOT / "__main__.py") -> tuple[dict[str, str], ProgramRun]:
    """The plan of a stack's config by `program` (the repository's own by default); the program's
    error, or ConfigError when AWS would refuse a request the program makes."""
    run = run_program(program, files.project, stack, files.config, files.secret_keys)
    if run.error is not None:
        raise run.error
    refused = aws_request_problems(run, files.config)
    if refused:
        raise AwsRefusal(refused)
    resources = [_abridged(registration.as_json()) for registration in run.resources]
    types = [r["type"] for r in resources]
    destroy = simulate_destroy(run.resources)
    order = [*_critical_path(run.resources), "## `pulumi destroy`", "", *summary_lines(destroy), ""]
    output = {
        "resources.json": json.dumps(resources, indent=2) + "\n",
        "outputs.json": json.dumps(run.outputs, indent=2, sort_keys=True) + "\n",
        # A program of GptOssStack exports its report; one that composes the building blocks does not.
        "summary.md": render_summary(files.project, stack, run.outputs["report"], types, order)
        if "report" in run.outputs
        else render_program_summary(files.project, stack, types, order),
    }
    for manifest in manifests(run):
        output[f"manifests/{_manifest_file_name(manifest)}"] = yaml.dump(
            manifest, Dumper=_ManifestDumper, sort_keys=False
        )
    return output, run


def _critical_path(resources: list[Registration]) -> list[str]:
    """The critical path's lines, where resource names are unique: the dependency tools key resources by
    name, which Pulumi requires only per type (a program of the user's may repeat one)."""
    repeated = sorted(name for name, count in Counter(r.name for r in resources).items() if count > 1)
    if repeated:
        return ["## Critical path", "", f"Not computed: more than one resource is named {', '.join(repeated)}.", ""]
    return critical_path.render(critical_path.critical_path(resources, critical_path.load_phases()))


def as_preview(run: ProgramRun) -> list[Registration]:
    """The AWS resources as `pulumi preview` sends them: the mock engine's stand-ins for other
    resources' outputs (tools/pulumi_engine.py: "<name>-id", "<name>-sg-id", "arn:aws:mock:::...")
    are not known before `pulumi up`, so they become "[unknown]" rather than fake ids the API's
    patterns would refuse. Values from the config (e.g. existing subnets) stay."""
    names = [resource.name for resource in run.resources]

    def known(value):
        if isinstance(value, dict):
            return {key: known(item) for key, item in value.items()}
        if isinstance(value, list):
            return [known(item) for item in value]
        stand_in = isinstance(value, str) and (
            value.startswith("arn:aws:mock:") or (value.endswith("-id") and any(map(value.startswith, names)))
        )
        return UNKNOWN if stand_in else value

    return [
        dataclasses.replace(resource, inputs=known(resource.inputs))
        for resource in run.resources
        if resource.type.startswith("aws:")
    ]


def aws_request_problems(run: ProgramRun, config: dict[str, str]) -> list[Problem]:
    """What AWS would refuse in the run's requests (the program's own resources too, which GptOssStack's
    in-process check does not see), each under the config key that holds the value when one does (else
    under the resource that sends it)."""
    return refusals(as_preview(run), {key: decode(text) for key, text in config.items()})


def manifests(run: ProgramRun) -> list[dict[str, Any]]:
    """Every Kubernetes object the program declared, as the manifest the plan writes."""
    return [manifest for registration in run.resources if (manifest := _manifest(registration.inputs)) is not None]


def _abridged(resource: dict[str, Any]) -> dict[str, Any]:
    """A CRD's spec is vendored data, in full in its manifest file: resources.json names that file
    and the spec's digest, so a CRD change still shows in a plan diff without megabytes of schema."""
    if resource["type"] != CRD_TYPE:
        return resource
    inputs = resource["inputs"]
    digest = hashlib.sha256(json.dumps(inputs["spec"], sort_keys=True).encode()).hexdigest()
    spec = {"manifest": f"manifests/{_manifest_file_name(_manifest(inputs))}", "sha256": digest}
    return resource | {"inputs": inputs | {"spec": spec}}


def _manifest(inputs: dict[str, Any]) -> dict[str, Any] | None:
    """A Kubernetes object's manifest, apiVersion/kind/metadata first; None for other resources."""
    if "apiVersion" not in inputs or "kind" not in inputs:
        return None
    head = ("apiVersion", "kind", "metadata")
    return {key: inputs[key] for key in head if key in inputs} | {
        key: value for key, value in inputs.items() if key not in head
    }


def _manifest_file_name(manifest: dict[str, Any]) -> str:
    metadata = manifest.get("metadata", {})
    parts = [manifest["kind"].lower(), metadata.get("namespace"), metadata.get("name")]
    return "_".join(part for part in parts if part) + ".yaml"


class _ManifestDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """Multi-line strings (engine configs) as literal blocks, readable as the file they become.
    LibYAML's emitter where PyYAML has it: the CRD manifests are megabytes."""


_ManifestDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None),
)


def write_plan(files: dict[str, str], out_dir: Path) -> None:
    """Replace `out_dir` with exactly `files`, all at once."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}-"))
    for relative, text in files.items():
        path = staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    shutil.rmtree(out_dir, ignore_errors=True)
    staging.rename(out_dir)


def shown(path: Path) -> Path:
    """`path` as a message names it: relative to the current directory when inside it."""
    path, here = path.resolve(), Path.cwd().resolve()
    return path.relative_to(here) if path.is_relative_to(here) else path


def add_program_arguments(parser: argparse.ArgumentParser) -> None:
    """--program-dir and --stack-dir, as every command that takes a stack has them (find_program)."""
    parser.add_argument(
        "--program-dir",
        type=Path,
        default=Path("."),
        help="the Pulumi project: the folder of its Pulumi.yaml, program and (by default) stack files "
        "(default: the current directory), e.g. examples/own-cluster",
    )
    parser.add_argument(
        "--stack-dir",
        type=Path,
        help="where Pulumi.<stack>.yaml is (default: the program's folder; in this repository, then configs/examples)",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev", help="plan Pulumi.<STACK>.yaml (default: dev)")
    parser.add_argument(
        "--out", type=Path, default=Path("build/plan"), help="write the plan to OUT/<STACK>/ (default: build/plan)"
    )
    add_program_arguments(parser)
    args = parser.parse_args(argv)
    try:
        files, run = plan_files(args.stack, args.stack_dir, args.program_dir)
    except (pulumi.RunError, YamlFileError) as error:
        print(f"plan {args.stack}: {error}", file=sys.stderr)
        return 1
    except ConfigError as error:
        where = (
            f"AWS would refuse requests of the program (under the key of Pulumi.{args.stack}.yaml that holds the "
            "value, else the resource that sends it)"
            if isinstance(error, AwsRefusal)
            else f"invalid stack config in Pulumi.{args.stack}.yaml"
        )
        print(f"plan {args.stack}: {where}:\n{error}", file=sys.stderr)
        return 1
    except FileNotFoundError as error:
        print(f"plan {args.stack}: {error}", file=sys.stderr)
        return 2
    for line in run.log:
        print(line, file=sys.stderr)
    out_dir = (args.out / args.stack).resolve()
    write_plan(files, out_dir)
    print(files["summary.md"])
    print(f"wrote {shown(out_dir)}/")
    return 0


if __name__ == "__main__":  # how plan-diff plans a commit (tools/plan_diff.py): run as the command line is
    run_command(main)
