"""Reading the YAML data files of configs/: with LibYAML's C parser where PyYAML has it (every
stack plan reads the whole catalog), else PyYAML's own. The vendored CRDs, megabytes of YAML, are
read from their JSON twins, which parse ten times faster."""

from __future__ import annotations

import gzip
import json
from collections.abc import Hashable
from pathlib import Path
from typing import IO, Any

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # safe: plain data, no Python objects


def load_yaml(stream: IO[str] | IO[bytes] | str | bytes) -> Any:
    return yaml.load(stream, Loader=LOADER)


def read_yaml(path: Path) -> Any:
    with path.open() as stream:
        return load_yaml(stream)


def load_yaml_documents(stream: IO[str] | IO[bytes] | str | bytes) -> list[Any]:
    """Every document of a multi-document stream (a CRD bundle)."""
    return list(yaml.load_all(stream, Loader=LOADER))


def json_twin(path: Path) -> Path:
    """Where the JSON twin of a vendored x.yaml.gz is: x.json.gz beside it, the same documents as a
    JSON list (python -m gpt_oss_infra vendor-json writes it; a test keeps the two equal)."""
    return path.with_name(path.name.removesuffix(".yaml.gz") + ".json.gz")


def read_vendored_documents(path: Path) -> list[Any]:
    """Every document of a vendored x.yaml.gz, read from its JSON twin."""
    with gzip.open(json_twin(path)) as stream:
        documents: list[Any] = json.load(stream)  # vendor-json writes a JSON list
    return documents


class YamlFileError(ValueError):
    """A YAML file that cannot be read as written, said as `<file>:<line>:<column>: <what>`."""


class _StrictLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys; Pulumi's own YAML reader refuses them: so do we."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str | int | float | bool) and key is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a key must be a scalar, not {type(key).__name__}", key_node.start_mark
                )
            if key in seen:
                first = seen[key]
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first.line + 1})", key_node.start_mark
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def read_stack_yaml(path: Path) -> dict[str, Any]:
    """A stack file's `config:` entries, refused with its line and column when it is not valid YAML
    or repeats a key, and refused as a whole when it is not a mapping with a `config:` mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise YamlFileError(f"{path.name}: not UTF-8 text (byte {error.start})") from None
    return load_stack_yaml(text, path.name)


def load_strict_yaml(text: str) -> Any:
    """One YAML document, refusing a key given twice in one mapping (yaml.MarkedYAMLError says where)."""
    return yaml.load(text, Loader=_StrictLoader)


def load_stack_yaml(text: str, file_name: str) -> dict[str, Any]:
    try:
        document = load_strict_yaml(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        assert mark is not None  # every problem PyYAML's SafeLoader (and _StrictLoader) raises carries its mark
        raise YamlFileError(f"{file_name}:{mark.line + 1}:{mark.column + 1}: {error.problem}") from None
    except yaml.YAMLError as error:  # e.g. a character YAML does not allow
        raise YamlFileError(f"{file_name}: {error}") from None
    if document is None:
        return {}
    if not isinstance(document, dict) or not isinstance(document.get("config", {}), dict | None):
        raise YamlFileError(f"{file_name}: a stack file is a mapping whose `config:` is a mapping of keys to values")
    return document.get("config") or {}
