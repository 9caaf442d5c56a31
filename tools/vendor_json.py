"""`python -m gpt_oss_infra vendor-json [--check]`: the JSON twin of every vendored CRD file.

The vendored CRDs stay as published (x.yaml.gz: the upstream file, gzip -9 -n; vendor/*/SOURCES.md).
The program reads each from x.json.gz beside it: the same documents as JSON, which parse ten times
faster than the YAML (a plan used to spend about a second parsing CRD YAML). Run this after adding or
updating a vendored CRD; with --check (as the tests run it) it changes nothing and exits 1 naming
each twin that is missing or says something else than its YAML.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale twin")
    parser.add_argument("--vendor-dir", type=Path, default=VENDOR_DIR, help="the vendor/ folder (default: this tree's)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_twins(args.vendor_dir)
        for line in stale:
            print(f"{line} (python -m gpt_oss_infra vendor-json writes it)", file=sys.stderr)
        return 1 if stale else 0
    for path in vendored_crd_files(args.vendor_dir):
        # mtime 0: the same bytes on every run, so an unchanged twin never shows in a diff
        json_twin(path).write_bytes(gzip.compress(twin_text(path).encode(), compresslevel=9, mtime=0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
