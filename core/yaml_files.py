"""Reading the YAML data files of configs/: with LibYAML's C parser where PyYAML has it (every
stack plan reads the whole catalog, and the vendored CRDs are megabytes), else PyYAML's own."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # safe: plain data, no Python objects


def load_yaml(stream: IO | str | bytes) -> Any:
    return yaml.load(stream, Loader=LOADER)


def read_yaml(path: Path) -> Any:
    with path.open() as stream:
        return load_yaml(stream)


def load_yaml_documents(stream: IO | str | bytes) -> list[Any]:
    """Every document of a multi-document stream (a CRD bundle)."""
    return list(yaml.load_all(stream, Loader=LOADER))
