"""The Dynamo release seam: what differs between the Dynamo releases this program deploys.

Each supported release is data in configs/dynamo/ (versions.yaml and a folder per release, see
that file): the chart's repository, where the NATS switch lives in its values, the EFA runtime
images, the release's CRDs and the chart's default values. Supporting another release means adding
its row and its folder; nothing else changes.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from core.dynamo_graph import API_VERSIONS
from core.inputs.schema import StrictModel
from core.mappings import deep_merge
from core.yaml_files import load_yaml, read_yaml

CHART = "dynamo-platform"
PATCH_FORCE = {"pulumi.com/patchForce": "true"}


class ChartVolumeClaim(StrictModel):
    what: str
    when: list[str] = Field(min_length=1)  # value paths that must all be true for the chart to make it
    storage_class_name: str  # value path of its StorageClass (empty there: the cluster default)


class ChartPod(StrictModel):
    """A pod the chart creates; every field but `what`, `when` and `images` is a value path."""

    what: str
    when: list[str] = Field(min_length=1)
    replicas: str | int
    requests: str | None = None
    node_selector: str | None = None
    tolerations: str | None = None
    affinity: str | None = None
    images: list[tuple[str, str]] = Field(min_length=1)  # [repository path, tag path]


class DynamoVersionSpec(StrictModel):
    chart_repository: str
    graph_api_version: Literal[API_VERSIONS]  # the DynamoGraphDeployment apiVersion the program renders
    nats_switch: list[str] = Field(min_length=1)
    efa_runtime_images: dict[str, dict[str, str]]  # recipe backend -> node CPU architecture -> image
    volume_claims: list[ChartVolumeClaim]  # the PVCs the chart creates (core/render/storage.py)
    pods: list[ChartPod]  # the pods the chart creates (core/render/scheduling.py)
    sources: list[str] = Field(min_length=1)


@dataclass(frozen=True)
class DynamoVersion:
    version: str
    spec: DynamoVersionSpec = field(compare=False)  # identity (and hash) is the version and its folder
    directory: Path  # configs/dynamo/<version>

    @property
    def chart_reference(self) -> str:
        return f"{self.spec.chart_repository}/{CHART}"

    def crds(self) -> list[dict[str, Any]]:
        """The release's CustomResourceDefinitions, in file-name order, as vendored."""
        return _load_crds(self.directory / "crds")

    def owned_crds(self) -> list[dict[str, Any]]:
        """The CRDs as the program applies them. A cluster where Dynamo was installed before (by the
        chart's crds/ folder or its crd-apply init container, which applies with force under its own
        field manager) already has them: `pulumi.com/patchForce` lets Pulumi's server-side apply take
        the fields over instead of failing on conflicts [pk8s-ssa]; the provider adopts existing objects
        (upsertExistingObjects).
          [pk8s-ssa] https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply/
        """
        return [
            crd | {"metadata": crd["metadata"] | {"annotations": crd["metadata"].get("annotations", {}) | PATCH_FORCE}}
            for crd in self.crds()
        ]

    def crd(self, kind: str) -> dict[str, Any]:
        return next(crd for crd in self.crds() if crd["spec"]["names"]["kind"] == kind)

    def chart_defaults(self) -> dict[str, Any]:
        """The chart's default values with each bundled subchart's under its name, as Helm merges them."""
        return _chart_defaults(self.directory / "chart")


@cache
def _load_crds(directory: Path) -> list[dict[str, Any]]:
    crds = []
    for path in sorted(directory.glob("*.yaml.gz")):
        with gzip.open(path) as stream:
            crds.append(load_yaml(stream))
    return crds


@cache
def _chart_defaults(directory: Path) -> dict[str, Any]:
    defaults = _read(directory / "values.yaml")
    for subchart in sorted((directory / "charts").iterdir()):
        own = _read(subchart / "values.yaml")
        defaults[subchart.name] = deep_merge(own, defaults.get(subchart.name) or {})
    return defaults


def _read(path: Path) -> dict[str, Any]:
    return read_yaml(path) or {}


def undeclared_values(values: dict[str, Any], defaults: dict[str, Any], path: str = "") -> list[str]:
    """Value paths the chart does not declare. A chart ignores them silently, or (from 1.2) fails
    the install on the ones it removed. Below a declared key whose default is empty ({}, [] or
    null) any value is free-form, e.g. affinity."""
    undeclared = []
    for key, value in values.items():
        where = f"{path}{key}"
        if key not in defaults:
            undeclared.append(where)
        elif isinstance(value, dict) and isinstance(defaults[key], dict) and defaults[key]:
            undeclared += undeclared_values(value, defaults[key], f"{where}.")
    return undeclared
