"""The Dynamo release seam: what differs between the Dynamo releases this program deploys.

Each supported release is data in configs/dynamo/ (versions.yaml, and the vendored CRDs and chart
values it points at, see that file): the chart's repository and values, the graph apiVersion (whose
shape core/dynamo_graph.py knows), who applies the CRDs, where the NATS switch lives and its default,
the runtime and EFA images, the TensorRT-LLM version, the backend's KV-event flags. Supporting another
release means adding its row (and its data); nothing else changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from gpt_oss_infra.core.dynamo_graph import GraphApiVersion
from gpt_oss_infra.core.mappings import deep_merge, value_at
from gpt_oss_infra.core.schema import StrictModel
from gpt_oss_infra.core.yaml_files import read_vendored_documents, read_yaml

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


class CrdOwnership(StrictModel):
    """Who applies a release's CRDs (configs/dynamo/versions.yaml `crds`)."""

    owner: Literal["program", "operator"]
    directory: str  # under vendor/dynamo/: the CRDs the program applies, or validates graphs against


class PublishArgs(StrictModel):
    kv_events: list[str]  # what the frontend's KV router reads (routerMode kv)
    metrics: list[str]  # the engine's iteration statistics the dashboards and alerts read


class PlannerRelease(StrictModel):
    """The release's SLA Planner as its own graphs run it (dynamo.profiler.utils.dgd_generation)."""

    image: str  # the Planner component's image
    working_directory: str  # where its process starts, as upstream's component sets it
    config_directory: str  # where its planner-config ConfigMap is mounted; it reads planner_config.json there


class DynamoVersionSpec(StrictModel):
    chart_repository: str
    chart_values: str  # folder under configs/dynamo/ whose chart/ holds the chart values
    graph_api_version: GraphApiVersion  # the DynamoGraphDeployment apiVersion the program renders
    crds: CrdOwnership
    nats_switch: list[str] = Field(min_length=1)
    nats_default: bool  # the bundled NATS when platform.nats is not set
    runtime_images: dict[str, str]  # recipe backend -> the release's runtime image
    unsupported_backends: dict[str, str] = {}  # recipe backend -> why the release does not run it
    efa_runtime_images: dict[str, dict[str, str]]  # recipe backend -> node CPU architecture -> image
    wheel: str | None = None  # its ai-dynamo wheels' version on PyPI, when not the release's own
    engine_versions: dict[str, str]  # recipe backend -> the engine version its runtime image carries
    publish_args: dict[str, PublishArgs]  # recipe backend -> the worker flags that publish events and metrics
    planner: PlannerRelease | None = None  # None: autoscaling is refused on this release
    runtime_version_override: bool = False  # graphs may name their runtime's version (1.4+ admission)
    grove_with_kai_scheduler: Literal["allowed", "refused"] = "allowed"  # both bundled by the chart
    upgrade_step: bool = False  # deployed only on the way to a later release
    unverified: list[Literal["chart", "chartValues", "crds", "runtimeImages", "efaRuntimeImages"]] = []
    volume_claims: list[ChartVolumeClaim]  # the PVCs the chart creates (core/checks/storage.py)
    pods: list[ChartPod]  # the pods the chart creates (core/checks/scheduling.py)
    sources: list[str] = Field(min_length=1)


# What would verify each kind of fact of a release that could not be read from its own artifacts
# (DynamoVersionSpec.unverified), as each plan and `pulumi up` says: {chart} is the chart package.
VERIFIED_BY = {
    "chart": "helm show chart {chart}; make preflight asks NGC for it, and make check-versions",
    "chartValues": "make check-versions, which downloads the chart and checks every value the program sets",
    "crds": "the CRDs the release's operator applies (kubectl get crd dynamographdeployments.nvidia.com -o yaml) "
    "against the vendored ones (vendor/dynamo/)",
    "runtimeImages": "make check-versions, which looks every image up in its registry",
    "efaRuntimeImages": "make check-versions, which looks every image up in its registry",
}
UNVERIFIED_FACTS = {
    "chart": "chart version {version}",
    "chartValues": "chart values (what the program's values are checked against)",
    "crds": "CRDs (what graphs are validated against)",
    "runtimeImages": "runtime images",
    "efaRuntimeImages": "EFA runtime images",
}


@dataclass(frozen=True)
class DynamoVersion:
    version: str
    spec: DynamoVersionSpec = field(compare=False)  # identity (and hash) is the version and its folder
    directory: Path  # vendor/dynamo/, where the folders the spec names are

    def unverified_pins(self) -> list[str]:
        """Each fact of this release taken from another source than its own artifacts, with what would verify it."""
        return [
            f"{UNVERIFIED_FACTS[fact].format(version=self.version)} not verified: taken from another source than "
            "the release's own artifacts (configs/dynamo/versions.yaml); verify with "
            + VERIFIED_BY[fact].format(chart=self.chart_url)
            for fact in self.spec.unverified
        ]

    @property
    def chart_url(self) -> str:
        """The chart package of this release in its repository (what `helm show chart` reads)."""
        return f"{self.spec.chart_repository}/charts/{CHART}-{self.version}.tgz"

    @property
    def wheel(self) -> str:
        return self.spec.wheel or self.version

    @property
    def minor(self) -> tuple[int, int]:
        major, minor, _ = self.version.split(".", 2)
        return int(major), int(minor)

    def claims_made(self, values: dict[str, Any]) -> list[ChartVolumeClaim]:
        """The PersistentVolumeClaims its dynamo-platform chart makes with these values (over its defaults)."""
        merged = deep_merge(self.chart_defaults(), values)
        return [claim for claim in self.spec.volume_claims if all(value_at(merged, path) for path in claim.when)]

    def bundled_nats(self, requested: bool | None) -> bool:
        """platform.nats, or this release chart's own default (off from 1.4: its TCP request plane and
        ZMQ event plane need no NATS)."""
        return self.spec.nats_default if requested is None else requested

    @property
    def program_owns_crds(self) -> bool:
        return self.spec.crds.owner == "program"

    def crds(self) -> list[dict[str, Any]]:
        """The CRDs the program applies (none when the operator applies its own), in file-name order."""
        return _load_crds(self.directory / self.spec.crds.directory / "crds") if self.program_owns_crds else []

    def schema_crds(self) -> tuple[list[dict[str, Any]], str]:
        """The CRDs graphs are validated against, and what they are: the release's own, or the newest
        available when the operator applies CRDs this program cannot read."""
        crds = _load_crds(self.directory / self.spec.crds.directory / "crds")
        if self.program_owns_crds:
            return crds, f"Dynamo {self.version} CRD"
        return crds, f"Dynamo CRD of {self.spec.crds.directory}, the newest available, not {self.version}'s own"

    def owned_crds(self) -> list[dict[str, Any]]:
        """The CRDs as the program applies them. A cluster where Dynamo was installed before (by the
        chart's crds/ folder or its crd-apply init container, which applies with force under its own
        field manager) already has them: `pulumi.com/patchForce` lets Pulumi's server-side apply take
        the fields over instead of failing on conflicts [pk8s-ssa]; the CRDs' own provider adopts existing
        ones (upsertExistingObjects, components/kubernetes.crds_provider: no other object goes through it).
          [pk8s-ssa] https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply/
        """
        return [
            crd | {"metadata": crd["metadata"] | {"annotations": crd["metadata"].get("annotations", {}) | PATCH_FORCE}}
            for crd in self.crds()
        ]

    def chart_defaults(self) -> dict[str, Any]:
        """The chart's default values with each bundled subchart's under its name, as Helm merges them."""
        return _chart_defaults(self.directory / self.spec.chart_values / "chart")


@cache
def _load_crds(directory: Path) -> list[dict[str, Any]]:
    crds = []
    for path in sorted(directory.glob("*.yaml.gz")):
        (crd,) = read_vendored_documents(path)  # one CRD per file, as Dynamo publishes them
        crds.append(crd)
    return crds


@cache
def _chart_defaults(directory: Path) -> dict[str, Any]:
    subcharts = {subchart.name: _read(subchart / "values.yaml") for subchart in (directory / "charts").iterdir()}
    return merged_chart_defaults(_read(directory / "values.yaml"), subcharts)


def merged_chart_defaults(values: dict[str, Any], subcharts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A chart's default values with each bundled subchart's under its name, as Helm merges them
    (the parent's values for a subchart win over the subchart's own)."""
    defaults = dict(values)
    for name in sorted(subcharts):
        defaults[name] = deep_merge(subcharts[name], defaults.get(name) or {})
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
