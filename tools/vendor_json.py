"""`python -m gpt_oss_infra vendor-json [--check]`: the JSON the program reads vendored data from.

1. The JSON twin of every vendored CRD file. The vendored CRDs stay as published (x.yaml.gz: the
   upstream file, gzip -9 -n; vendor/*/SOURCES.md). The program reads each from x.json.gz beside it:
   the same documents as JSON, which parse ten times faster than the YAML (a plan used to spend about
   a second parsing CRD YAML).
2. vendor/botocore/aws-models.json.gz: the part of the installed botocore's data the program reads
   (core/inputs/aws_values.py): each service model with only the operations configs/aws-api/mapping.yaml
   names and the enums it reads, and every shape those reach; the regions of the services it reads.
   Loading botocore's whole models took a plan about a third of a second.
Run this after adding or updating a vendored CRD, changing the mapping's operations or updating
botocore; with --check (as the tests run it) it changes nothing and exits 1 naming each file that is
missing or says something else than its source.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import botocore
import botocore.session
from botocore.loaders import Loader

from gpt_oss_infra.core.checks.aws_contract import load_mapping
from gpt_oss_infra.core.inputs.aws_values import AWS_MODELS, ENUMS_READ, REGIONS_READ
from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.yaml_files import json_twin, load_yaml_documents

VENDORED_CRDS = ("crds/*/*/*.yaml.gz", "dynamo/*/crds/*.yaml.gz")  # under vendor/


def vendored_crd_files(vendor_dir: Path = VENDOR_DIR) -> list[Path]:
    return sorted(path for pattern in VENDORED_CRDS for path in vendor_dir.glob(pattern))


def twin_text(path: Path) -> str:
    """What the JSON twin of a vendored x.yaml.gz holds: its documents as one JSON list."""
    return json.dumps(load_yaml_documents(gzip.decompress(path.read_bytes())), separators=(",", ":"))


def stale_twins(vendor_dir: Path = VENDOR_DIR) -> list[str]:
    """The twins that are missing or differ from their YAML, as `<twin>: <why>`."""
    stale = []
    for path in vendored_crd_files(vendor_dir):
        twin = json_twin(path)
        if not twin.exists():
            stale.append(f"{twin}: missing")
        elif gzip.decompress(twin.read_bytes()).decode() != twin_text(path):
            stale.append(f"{twin}: not the documents of {path.name}")
    return stale


def aws_models_file(vendor_dir: Path = VENDOR_DIR) -> Path:
    """Where vendor/botocore/aws-models.json.gz is under `vendor_dir`."""
    return vendor_dir / AWS_MODELS.relative_to(VENDOR_DIR)


def botocore_own_session() -> botocore.session.Session:
    """A botocore session reading botocore's own data only: not the models a user keeps in ~/.aws/models
    or AWS_DATA_PATH."""
    session = botocore.session.get_session()
    loader = Loader(extra_search_paths=[Loader.BUILTIN_DATA_PATH], include_default_search_paths=False)
    session.register_component("data_loader", loader)
    return session


@functools.cache
def aws_models_text() -> str:
    """What vendor/botocore/aws-models.json.gz holds, from the installed botocore (see the docstring): its
    models' keys and members in botocore's order (a refusal lists a structure's members in that order)."""
    session = botocore_own_session()
    loader = session.get_component("data_loader")
    used: dict[str, set[str]] = {}  # service -> the operations and enum shapes read
    for entry in load_mapping().resources.values():
        for operation in entry.operations:
            used.setdefault(operation.service, set()).add(operation.name)
            enums = (target.enum_of for targets in operation.members.values() for target in targets)
            for service, shape in (enum_of.split(":") for enum_of in enums if enum_of):
                used.setdefault(service, set()).add(shape)
    for service, shapes in ENUMS_READ.items():
        used.setdefault(service, set()).update(shapes)
    services = {
        service: _model_part(loader.load_service_model(service, "service-2"), names)
        for service, names in sorted(used.items())
    }
    regions = {
        service: sorted(
            region
            for partition in session.get_available_partitions()
            for region in session.get_available_regions(service, partition)
        )
        for service in REGIONS_READ
    }
    content = {"botocore": botocore.__version__, "models": services, "regions": regions}
    return json.dumps(content, separators=(",", ":"))


def _model_part(model: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """The model with only the operations and shapes among `names` (a name no operation or shape has
    is left out, so that the mapping check still finds it missing) and every shape they reach, each
    whole and in the model's order."""
    operations = {name: operation for name, operation in model["operations"].items() if name in names}
    reached = [name for name in names if name in model["shapes"]]
    for operation in operations.values():
        reached += [operation[part]["shape"] for part in ("input", "output") if part in operation]
        reached += [error["shape"] for error in operation.get("errors", [])]
    kept: set[str] = set()
    while reached:
        name = reached.pop()
        if name not in kept:
            kept.add(name)
            shape = model["shapes"][name]
            reached += [shape[part]["shape"] for part in ("member", "key", "value") if part in shape]
            reached += [member["shape"] for member in shape.get("members", {}).values()]
    shapes = {name: shape for name, shape in model["shapes"].items() if name in kept}
    return {**model, "operations": operations, "shapes": shapes}


def stale_aws_models(vendor_dir: Path = VENDOR_DIR) -> list[str]:
    """The vendored part of botocore's data, as `<file>: <why>` if missing or not the installed botocore's."""
    path = aws_models_file(vendor_dir)
    if not path.exists():
        return [f"{path}: missing"]
    text = gzip.decompress(path.read_bytes()).decode()
    if text != aws_models_text():
        written = json.loads(text).get("botocore")
        return [f"{path}: not what botocore {botocore.__version__} says (written from botocore {written})"]
    return []


def _write(path: Path, text: str) -> None:
    # mtime 0: the same bytes on every run, so an unchanged file never shows in a diff
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale file")
    parser.add_argument("--vendor-dir", type=Path, default=VENDOR_DIR, help="the vendor/ folder (default: this tree's)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_twins(args.vendor_dir) + stale_aws_models(args.vendor_dir)
        for line in stale:
            print(f"{line} (python -m gpt_oss_infra vendor-json writes it)", file=sys.stderr)
        return 1 if stale else 0
    for path in vendored_crd_files(args.vendor_dir):
        _write(json_twin(path), twin_text(path))
    _write(aws_models_file(args.vendor_dir), aws_models_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
