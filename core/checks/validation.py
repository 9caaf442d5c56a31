"""Check rendered objects against their real consumers before anything is deployed.

- Custom resources: the openAPIV3Schema of their apiVersion in the CRD that defines them, with
  unknown fields rejected (the API server prunes unknown fields silently, so a misplaced key would
  otherwise vanish without an error). Dynamo's kinds: the CRDs of the pinned release
  (vendor/dynamo/<version>/crds/, the CRDs the program installs); other projects' kinds (Gateway
  API, Envoy Gateway, Prometheus Operator): vendor/crds/<project>/<version>/, the CRDs their pinned
  charts install, as vendored (vendor/crds/SOURCES.md).
- Every other object: kubernetes-validate --strict against the cluster's Kubernetes version.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
from referencing import Registry, Resource

from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.dynamo_graph import KIND
from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.yaml_files import read_vendored_documents

VENDORED_CRDS = VENDOR_DIR / "crds"

DGD_KIND = KIND


def object_problems(manifest: dict[str, Any], kubernetes_version: str, dynamo: DynamoVersion) -> list[str]:
    """Schema errors of one object, as `<path>: <message>` lines ([] when valid)."""
    key = (manifest["apiVersion"], manifest["kind"])
    if manifest["kind"] == DGD_KIND:
        return _crd_problems(manifest, _dynamo_validators(dynamo)[key])
    built_in = _built_in_validator(kubernetes_version, *key)
    if built_in is None:  # not a built-in kind: a vendored CRD's, or none
        vendored = vendored_validators().get(key)
        if vendored is None:
            return [f"(object): no schema for {manifest['apiVersion']} {manifest['kind']} (no vendored CRD defines it)"]
        return _crd_problems(manifest, vendored)
    error = next(built_in.iter_errors(manifest), None)  # the one error kubernetes_validate.validate raises
    if error is not None:
        return [f"{'.'.join(str(p) for p in error.path)}: {error.message} (Kubernetes {kubernetes_version})"]
    return []


@cache
def _built_in_validator(kubernetes_version: str, api_version: str, kind: str) -> jsonschema.Draft202012Validator | None:
    """The validator kubernetes_validate.validate(..., strict=True) checks a built-in kind with, made once:
    it reads and parses the schema files again on every call, a fifth of a whole-stack plan's time.
    None for a kind that is not built in."""
    schemas = kubernetes_validate.utils
    wanted = schemas.major_minor(kubernetes_version)
    if wanted > schemas.latest_version():
        raise schemas.VersionNotSupportedError(version=wanted)
    version = [known for known in schemas.all_versions() if schemas.major_minor(known) <= wanted][-1]
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)  # rbac.authorization.k8s.io/v1 -> rbac-v1
    directory = f"kubernetes-json-schema/v{version}-local-strict"
    try:
        schema = schemas.schema_contents(f"{directory}/{kind.lower()}-{group_version}.json", kubernetes_version)
    except FileNotFoundError:
        return None
    definitions = _definitions(directory, kubernetes_version)
    return jsonschema.Draft202012Validator(schema, registry=Resource.from_contents(schema) @ definitions)


@cache
def _definitions(directory: str, kubernetes_version: str) -> Registry[Any]:
    """The definitions every built-in kind's schema refers to (1.8 MB of JSON): read once, not once per kind."""
    contents = kubernetes_validate.utils.schema_contents(f"{directory}/_definitions.json", kubernetes_version)
    return Resource.from_contents(contents) @ Registry()


Validators = dict[tuple[str, str], tuple[jsonschema.Draft7Validator, str]]


def _crd_problems(manifest: dict[str, Any], validator_and_source: tuple[jsonschema.Draft7Validator, str]) -> list[str]:
    validator, source = validator_and_source
    return [f"{_path(error)}: {error.message} ({source})" for error in validator.iter_errors(manifest)]


@cache
def _dynamo_validators(dynamo: DynamoVersion) -> Validators:
    """The pinned release's CRDs (what the program applies), or the newest available ones where the
    operator applies CRDs of its own that could not be read here."""
    crds, source = dynamo.schema_crds()
    return _crd_validators(crds, source)


@cache
def vendored_validators(directory: Path = VENDORED_CRDS) -> Validators:
    """(apiVersion, kind) -> a validator of each served version of every vendored CRD, and where
    that CRD came from (vendor/crds/<project>/<version>/<file>)."""
    validators: Validators = {}
    for path in sorted(directory.glob("*/*/*.yaml.gz")):
        documents = read_vendored_documents(path)
        crds = [crd for crd in documents if crd and crd["kind"] == "CustomResourceDefinition"]
        validators |= _crd_validators(crds, f"{path.parent.parent.name} {path.parent.name} CRD {{kind}}")
    return validators


def _crd_validators(crds: list[dict[str, Any]], source: str) -> Validators:
    """A validator of each served version of each CRD, its schema closed to unknown fields, and its
    source (`{kind}` in it: the CRD's kind)."""
    validators = {}
    for crd in crds:
        spec = crd["spec"]
        kind = spec["names"]["kind"]
        for version in spec["versions"]:
            if version.get("served", True):
                validator = jsonschema.Draft7Validator(_closed(version["schema"]["openAPIV3Schema"]))
                validators[(f"{spec['group']}/{version['name']}", kind)] = (validator, source.format(kind=kind))
    return validators


def _closed(node: Any) -> Any:
    """Reject properties a schema object does not declare, as a strict API server would."""
    if isinstance(node, dict):
        closable = (
            node.get("type") == "object"
            and "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        )
        node = {key: _closed(value) for key, value in node.items()}
        if closable:
            node["additionalProperties"] = False
    elif isinstance(node, list):
        node = [_closed(item) for item in node]
    return node


def _path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(object)"
