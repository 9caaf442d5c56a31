"""The data the product is built from: the hardware catalog and the recipe catalog (configs/)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, ValidationError, model_validator

from gpt_oss_infra.core.backends import Backend, load_backends
from gpt_oss_infra.core.dynamo import DynamoVersion, DynamoVersionSpec
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs import aws_values
from gpt_oss_infra.core.inputs.estimates import AiconfiguratorSettings, Estimates, Goal, MaxLoadFigure
from gpt_oss_infra.core.inputs.simulated import Simulated
from gpt_oss_infra.core.mappings import deep_merge
from gpt_oss_infra.core.paths import CONFIG_DIR, JOB_SCRIPTS_DIR, VENDOR_DIR
from gpt_oss_infra.core.schema import StrictModel, problems_from
from gpt_oss_infra.core.yaml_files import read_yaml

CapacityType = Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"]
EksSupport = Literal["standard", "extended"]  # the EKS support tier a Kubernetes version is in
Role = Literal["worker", "prefill", "decode"]
# A recipe's `hardware` when its workers need no GPU (the mocker): they run on CPU nodes, the system
# nodes of a created cluster or any node of an existing one, and take no node pool.
CPU_ONLY = "cpu"


class Ec2InstanceFacts(StrictModel):
    """What EC2 DescribeInstanceTypes reports: `pulumi up` reads the real values; the offline
    plan's mock answers these."""

    network_card_peak_gbps: Annotated[list[float], Field(min_length=1)]  # by network card index
    efa_maximum_interfaces: Annotated[int, Field(ge=0)]


class SoldOnlyIn(StrictModel):
    """Where EC2 sells an instance type at all, when a pool here cannot be placed there (a Local Zone)."""

    where: str
    published: str  # the vendor's words
    source: str


class InstanceType(StrictModel):
    gpus_per_node: PositiveInt
    gpu_memory_gb: Annotated[PositiveInt, Field(alias="gpuMemoryGB")]  # per GPU, 10^9 bytes
    efa_interfaces: Annotated[int, Field(ge=0)]  # EFA devices a node gets
    capacity_types: list[CapacityType]
    capacity_block_reclaim_minutes: PositiveInt  # EC2 terminates a block's instances this long before its end
    ec2: Ec2InstanceFacts
    sold_only_in: SoldOnlyIn | None = None


class Hardware(StrictModel):
    gpu: str
    aiconfigurator_system: str  # NVIDIA AISimulate's name for this GPU system (tools/mocker_timing.py)
    architecture: Literal["hopper", "blackwell"]
    cpu_architecture: Literal["x86_64", "arm64"]
    ami_type: str
    instance_types: dict[str, InstanceType]  # the first is the default
    # The oldest Kubernetes version its nodes work with, and why (None: no constraint).
    min_kubernetes_version: Annotated[str | None, Field(pattern=r"^1\.\d{2}$")] = None
    min_kubernetes_reason: str | None = None

    @property
    def default_instance_type(self) -> str:
        return next(iter(self.instance_types))


class GpuSizes(StrictModel):
    allowed: list[PositiveInt]
    default: PositiveInt

    @model_validator(mode="after")
    def _default_is_allowed(self) -> GpuSizes:
        if self.default not in self.allowed:
            raise ValueError(f"default {self.default} is not one of allowed {self.allowed}")
        return self


class Parallelism(StrictModel):
    """How a worker's GPU count maps to the engine's parallel sizes ("gpus" = the worker's GPU count)."""

    tensor: Literal["gpus"] | PositiveInt = "gpus"
    expert: Literal["gpus"] | PositiveInt = "gpus"


class WorkerRole(StrictModel):
    gpus: GpuSizes | None = None  # None: a CPU worker (a recipe of hardware cpu)
    resources: dict[str, dict[str, str]] | None = None  # a CPU worker's requests and limits (Kubernetes' form)
    parallelism: Parallelism = Parallelism()
    engine: dict[Any, Any]  # the backend's engine config, keys as written: checked by the backend (core/backends/)
    env: dict[str, str] = {}
    args: list[str] = []  # extra flags of the backend's worker command

    @property
    def gpu_sizes(self) -> GpuSizes:
        """A GPU worker's sizes: every worker of a GPU recipe has them (Recipe's check)."""
        if self.gpus is None:
            raise ValueError("a cpu recipe's worker has no GPU sizes")
        return self.gpus


class Traffic(StrictModel):
    """The traffic shape a recipe is tuned for: the benchmark's and the GPU-fit check's. Concurrency
    grows with the GPUs a deployment really uses, or, for a recipe without GPUs, is per replica."""

    input_tokens: PositiveInt
    output_tokens: PositiveInt
    concurrency_per_gpu: PositiveInt | None = None
    concurrency_per_replica: PositiveInt | None = None  # recipes of hardware cpu

    @model_validator(mode="after")
    def _one_concurrency(self) -> Traffic:
        if (self.concurrency_per_gpu is None) == (self.concurrency_per_replica is None):
            raise ValueError("give concurrencyPerGpu (GPU recipes) or concurrencyPerReplica (cpu recipes)")
        return self

    @property
    def sequence_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Recipe(StrictModel):
    description: str
    hardware: str
    mode: Literal["aggregated", "disaggregated"]
    backend: str  # configs/backends/<backend>.yaml
    sources: Annotated[list[str], Field(min_length=1)]
    decisions: list[str] = []  # where and why the recipe departs from its sources
    traffic: Traffic
    # What the recipe is for: the latency targets its best-configuration search meets
    # (configs/aiconfigurator.yaml); none for a cpu recipe.
    goal: Goal | None = None
    # Why losing a worker at two minutes' notice (a Spot reclaim) is acceptable for this recipe; none: it
    # is not, and an elastic pool of its deployments is refused SPOT (core/inputs/rules.py).
    tolerates_interruption: str | None = None
    workers: dict[Role, WorkerRole]

    @model_validator(mode="after")
    def _mode_has_its_roles(self) -> Recipe:
        expected = {"aggregated": {"worker"}, "disaggregated": {"prefill", "decode"}}[self.mode]
        if set(self.workers) != expected:
            raise ValueError(f"{self.mode} recipes have worker roles {sorted(expected)}")
        cpu = self.hardware == CPU_ONLY
        for role, spec in self.workers.items():
            if cpu and (spec.gpus is not None or spec.resources is None):
                raise ValueError(f"workers.{role}: a cpu recipe's workers take resources, not gpus")
            if not cpu and (spec.gpus is None or spec.resources is not None):
                raise ValueError(f"workers.{role}: a GPU recipe's workers take gpus, not resources")
        if cpu != (self.traffic.concurrency_per_replica is not None):
            raise ValueError("traffic: concurrencyPerReplica for a cpu recipe, concurrencyPerGpu for a GPU one")
        if cpu != (self.goal is None):
            raise ValueError("goal: a GPU recipe's serving goal (configs/aiconfigurator.yaml `goals`); none for cpu")
        return self

    @property
    def gpu_free(self) -> bool:
        return self.hardware == CPU_ONLY


class Chart(StrictModel):
    repo: str
    chart: str
    version: str
    namespace: str

    def default_values(self, vendor_dir: Path = VENDOR_DIR) -> dict[str, Any]:
        """The pinned version's own values.yaml (vendor/charts/<chart>/<version>/), with each vendored
        subchart's (charts/<subchart>/values.yaml there) under its name, as Helm merges them."""
        folder = vendor_dir / "charts" / self.chart / self.version
        defaults = _read_yaml(folder / "values.yaml")
        for path in sorted(folder.glob("charts/*/values.yaml")):
            name = path.parent.name
            defaults[name] = deep_merge(_read_yaml(path), defaults.get(name) or {})
        return defaults

    def indexed_versions(self, vendor_dir: Path = VENDOR_DIR) -> set[str]:
        """The versions the chart repository's index listed when it was read (vendor/charts/<chart>/index.json)."""
        index = json.loads((vendor_dir / "charts" / self.chart / "index.json").read_text())
        return {entry["version"] for entry in index["versions"]}


class ModelDownload(StrictModel):
    image: str
    huggingface_hub: str
    excludes: list[str]
    weight_files: list[str]  # excluded too when no engine loads weights (huggingface_hub ignore_patterns)
    env: dict[str, str]
    backoff_limit: int
    active_deadline_seconds: int
    resources: dict[str, dict[str, str]]


class SmokeTestSettings(StrictModel):
    image: str
    max_tokens: PositiveInt
    deadline_seconds: PositiveInt
    gateway_deadline_seconds: PositiveInt  # then for the gateway's address and answer, when it has one
    backoff_limit: Annotated[int, Field(ge=0)]
    resources: dict[str, dict[str, str]]


class FrontendResources(StrictModel):
    cpu_per_worker: PositiveInt
    memory_gib_per_worker: Annotated[PositiveInt, Field(alias="memoryGiBPerWorker")]
    memory_limit_factor: PositiveInt


class GpuWorkerResources(StrictModel):
    cpu_per_gpu: PositiveInt
    memory_gib_per_gpu: Annotated[PositiveInt, Field(alias="memoryGiBPerGpu")]
    memory_limit_gib_per_gpu: Annotated[PositiveInt, Field(alias="memoryLimitGiBPerGpu")]


class PodResources(StrictModel):
    """configs/pod-resources.yaml: the CPU and memory of the graphs' pods (core/render/manifests.py)."""

    frontend: FrontendResources
    gpu_worker: GpuWorkerResources
    wait_for_model: dict[str, dict[str, str]]
    planner: dict[str, dict[str, str]]  # the Planner's container (autoscaling)


class TeardownSettings(StrictModel):
    """configs/teardown.yaml: the teardown guards' pod (core/render/teardown.py)."""

    image: str
    poll_seconds: PositiveInt
    destroy_timeout_seconds: PositiveInt
    grace_period_seconds: PositiveInt
    resources: dict[str, dict[str, str]]


class ColdStartPhase(StrictModel):
    """One phase of a worker's wait for a new node, as published (minutes None: no figure is)."""

    phase: str
    weights: bool = False  # only a graph that loads weights waits for it
    minutes: NonNegativeFloat | None
    at_most_minutes: PositiveFloat
    published: str
    source: str


class KarpenterSettings(StrictModel):
    """configs/karpenter.yaml: how elastic pools' nodes are provisioned (core/render/karpenter.py)."""

    ami_alias: Annotated[str, Field(pattern=r"^al2023@v\d{8}$")]  # a pinned release, never @latest
    consolidate_after: Annotated[str, Field(pattern=r"^([0-9]+(s|m|h))+$")]
    controller_resources: dict[str, dict[str, str]]
    cold_start: list[ColdStartPhase]

    def cold_start_phases(self, weights: bool = True) -> list[ColdStartPhase]:
        """What a new node's worker waits for: a graph's that loads `weights`, or one's that loads none."""
        return [phase for phase in self.cold_start if weights or not phase.weights]

    def cold_start_minutes(self, weights: bool = True) -> tuple[float, float]:
        """A new node's worker serving after this long, at least and at most (published figures)."""
        phases = self.cold_start_phases(weights)
        return sum(phase.minutes or 0 for phase in phases), sum(phase.at_most_minutes for phase in phases)


class BenchmarkSettings(StrictModel):
    image: str
    aiperf: str
    requests_per_concurrency: PositiveInt
    backoff_limit: int
    resources: dict[str, dict[str, str]]


class ModelSpec(StrictModel):
    name: str
    checkpoint_gib: Annotated[float, Field(alias="checkpointGiB")]
    dense_gib: Annotated[float, Field(alias="denseGiB")]
    layers: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt
    sliding_window: PositiveInt
    sliding_window_layers: int
    max_position_embeddings: PositiveInt
    vocab_size: PositiveInt  # token ids the tokenizer knows (the trial's stand-in tokenizer has as many)
    kv_bytes_per_element: dict[str, PositiveInt]


class EfaPodSettings(StrictModel):
    """What a worker whose KV cache crosses nodes gets on an EFA pool, whatever its backend (configs/efa.yaml)."""

    security_context: dict[str, Any]  # the main container's
    host_ipc: bool = Field(alias="hostIPC")


class InstanceFacts(StrictModel):
    """One instance type as the scheduler sees it (configs/nodes.yaml); None: not published."""

    cpu_architecture: Literal["x86_64", "arm64"]
    vcpus: PositiveInt | None
    memory_mib: Annotated[PositiveInt | None, Field(alias="memoryMiB")]
    max_pods: PositiveInt | None


class Reservation(StrictModel):
    """What the node's kubelet keeps back (configs/nodes.yaml)."""

    cpu_permyriad_by_core: list[tuple[PositiveInt | None, int]]  # (cores in the band, None: the rest; 1/10000)
    memory_mib_per_pod: Annotated[int, Field(alias="memoryMiBPerPod")]
    memory_mib_base: Annotated[int, Field(alias="memoryMiBBase")]
    eviction_mib: Annotated[int, Field(alias="evictionMiB")]


class NodePods(StrictModel):
    """Pods that are there before ours: per node (DaemonSets) or per cluster (add-on Deployments)."""

    name: str
    runs_on: Literal["all", "gpu", "efa"] = "all"
    storage: Annotated[Literal["efs", "fsx-lustre"] | None, Field(alias="with")] = None  # only with this cache storage
    replicas: PositiveInt = 1
    cpu: Annotated[int, Field(ge=0)] | None  # millicores; None: not published
    memory: Annotated[int, Field(ge=0)] | None  # MiB


class NodeFacts(StrictModel):
    reservation: Reservation
    instance_types: dict[str, InstanceFacts]
    daemon_sets: list[NodePods]
    cluster_pods: list[NodePods]


class AddonVersion(StrictModel):
    """An EKS add-on build pinned for one Kubernetes version (configs/eks-addons.yaml)."""

    version: str | None  # None: no build found; EKS picks its default at creation
    evidence: Literal["strong", "medium", "weak"]
    source: str


class PublishedThroughput(StrictModel):
    """A published measurement of a recipe's serving at its own traffic (configs/performance.yaml)."""

    output_tokens_per_second: PositiveFloat  # all GPUs of the measurement together
    gpus: PositiveInt
    concurrency: PositiveInt
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    source: str


class Performance(StrictModel):
    recipes: dict[str, PublishedThroughput | None]  # recipe -> its measurement, None: none published
    max_load: list[MaxLoadFigure]  # NVIDIA's max-load figures, for the calibration of the modelled ones
    nearest: dict[str, str]  # recipe -> the nearest published figure and why it does not apply
    sources: dict[str, str]


class RegionPrices(StrictModel):
    ec2: dict[str, float | None]  # instance type -> On-Demand $/hour (None: no On-Demand price)
    nat_gateway_hour: float | None
    nat_gateway_gb: float | None
    eks_cluster_hour: dict[EksSupport, float | None]
    nlb_hour: float | None
    ebs_gp3_gb_month: Annotated[float | None, Field(alias="ebsGp3GbMonth")]
    efs_standard_gb_month: float | None
    fsx_lustre_persistent2_gb_month: Annotated[dict[int, float | None], Field(alias="fsxLustrePersistent2GbMonth")]


class Prices(StrictModel):
    """configs/prices.yaml: what AWS bills, per region; None: not verified, printed as unknown."""

    read_on: date
    hours_per_month: PositiveInt
    public_ipv4_hour: Annotated[float, Field(alias="publicIpv4Hour")]
    kms_key_month: float
    eks_standard_support_ends: dict[str, date]
    regions: dict[str, RegionPrices]
    sources: dict[str, str]


@dataclass(frozen=True)
class Catalog:
    hardware: dict[str, Hardware]
    recipes: dict[str, Recipe]
    backends: dict[str, Backend]  # recipe.backend -> the serving backend its workers run
    charts: dict[str, Chart]
    model_download: ModelDownload
    model: ModelSpec
    performance: Performance
    aiconfigurator: AiconfiguratorSettings  # how AISimulate is asked (configs/aiconfigurator.yaml)
    estimates: Estimates  # what it answered (configs/estimates.yaml, written by make estimate)
    simulated: Simulated  # what replays found (configs/simulated.yaml, written by make simulate)
    prices: Prices
    benchmark: BenchmarkSettings
    dynamo_versions: dict[str, DynamoVersion]  # release.dynamo -> what that release needs
    efa: EfaPodSettings
    smoke_test: SmokeTestSettings
    teardown: TeardownSettings
    karpenter: KarpenterSettings
    pod_resources: PodResources
    addon_versions: dict[str, dict[str, AddonVersion]]  # Kubernetes version -> add-on -> pinned build
    scripts: dict[str, str]  # jobs/<file name> -> its text, mounted into the Jobs that run it
    nodes: NodeFacts  # what the placement check sees of a node (configs/nodes.yaml)
    image_platforms: dict[str, list[str]]  # image -> CPU architectures it is published for (configs/images.yaml)


def load_catalog(config_dir: Path = CONFIG_DIR, *, cached: bool = True) -> Catalog:
    """Load and check configs/: hardware, recipes, and every recipe's engine config keys. The
    repository's own configs/ are read once per process (every plan, every component reads them; the
    catalog is immutable); `cached=False` reads them again (a tool that has just written one)."""
    if config_dir == CONFIG_DIR and cached:
        return _repository_catalog()
    return _load_catalog(config_dir)


@functools.cache
def _repository_catalog() -> Catalog:
    return _load_catalog(CONFIG_DIR)


def _load_catalog(config_dir: Path) -> Catalog:
    hardware = {
        name: _parse(Hardware, data, f"{config_dir / 'hardware.yaml'}: {name}.")
        for name, data in _read_yaml(config_dir / "hardware.yaml").items()
    }
    unknown_to_aws = [
        problem
        for name, entry in hardware.items()
        for problem in aws_values.hardware_problems(
            str(config_dir / "hardware.yaml"), name, entry.ami_type, entry.instance_types
        )
    ]
    if unknown_to_aws:  # every entry, used by a stack or not
        raise ConfigError(unknown_to_aws)
    backends = load_backends(config_dir)
    recipes = {}
    for path in sorted((config_dir / "recipes").glob("*.yaml")):
        recipe = _parse(Recipe, _read_yaml(path), f"{path}: ")
        problems = _recipe_problems(recipe, path, hardware, backends)
        if problems:
            raise ConfigError(problems)
        recipes[path.stem] = recipe
    charts = {
        name: _parse(Chart, data, f"{config_dir / 'charts.yaml'}: {name}.")
        for name, data in _read_yaml(config_dir / "charts.yaml").items()
    }
    dynamo_versions = _load_dynamo_versions(config_dir / "dynamo", backends)
    model_download = _parse(
        ModelDownload,
        _read_yaml(config_dir / "model-download.yaml"),
        f"{config_dir / 'model-download.yaml'}: ",
    )
    return Catalog(
        hardware=hardware,
        recipes=recipes,
        backends=backends,
        charts=charts,
        model_download=model_download,
        model=_parse(ModelSpec, _read_yaml(config_dir / "model.yaml"), f"{config_dir / 'model.yaml'}: "),
        performance=_parse(
            Performance, _read_yaml(config_dir / "performance.yaml"), f"{config_dir / 'performance.yaml'}: "
        ),
        aiconfigurator=_parse(
            AiconfiguratorSettings,
            _read_yaml(config_dir / "aiconfigurator.yaml"),
            f"{config_dir / 'aiconfigurator.yaml'}: ",
        ),
        estimates=_parse(Estimates, _read_yaml(config_dir / "estimates.yaml"), f"{config_dir / 'estimates.yaml'}: "),
        simulated=_parse(Simulated, _read_yaml(config_dir / "simulated.yaml"), f"{config_dir / 'simulated.yaml'}: "),
        prices=_parse(Prices, _read_yaml(config_dir / "prices.yaml"), f"{config_dir / 'prices.yaml'}: "),
        benchmark=_parse(
            BenchmarkSettings, _read_yaml(config_dir / "benchmark.yaml"), f"{config_dir / 'benchmark.yaml'}: "
        ),
        efa=_parse(EfaPodSettings, _read_yaml(config_dir / "efa.yaml"), f"{config_dir / 'efa.yaml'}: "),
        addon_versions={
            kubernetes: {
                addon: _parse(AddonVersion, pin, f"{config_dir / 'eks-addons.yaml'}: {kubernetes}.{addon}.")
                for addon, pin in pins.items()
            }
            for kubernetes, pins in _read_yaml(config_dir / "eks-addons.yaml").items()
        },
        smoke_test=_parse(
            SmokeTestSettings, _read_yaml(config_dir / "smoke-test.yaml"), f"{config_dir / 'smoke-test.yaml'}: "
        ),
        teardown=_parse(
            TeardownSettings, _read_yaml(config_dir / "teardown.yaml"), f"{config_dir / 'teardown.yaml'}: "
        ),
        karpenter=_parse(
            KarpenterSettings, _read_yaml(config_dir / "karpenter.yaml"), f"{config_dir / 'karpenter.yaml'}: "
        ),
        pod_resources=_parse(
            PodResources, _read_yaml(config_dir / "pod-resources.yaml"), f"{config_dir / 'pod-resources.yaml'}: "
        ),
        # Files only: an installed package compiles smoke_test.py into jobs/__pycache__/.
        scripts={path.name: path.read_text() for path in sorted(JOB_SCRIPTS_DIR.iterdir()) if path.is_file()},
        nodes=_parse(NodeFacts, _read_yaml(config_dir / "nodes.yaml"), f"{config_dir / 'nodes.yaml'}: "),
        image_platforms=_read_yaml(config_dir / "images.yaml"),
        dynamo_versions=dynamo_versions,
    )


def _load_dynamo_versions(directory: Path, backends: dict[str, Backend]) -> dict[str, DynamoVersion]:
    """configs/dynamo/versions.yaml: each release with every backend's images and flags, and the
    folders of vendor/dynamo/ it names (the releases' own charts, CRDs and graph templates)."""
    versions, problems = {}, []
    for version, data in _read_yaml(directory / "versions.yaml").items():
        key = f"{directory / 'versions.yaml'}: {version}."
        spec = _parse(DynamoVersionSpec, data, key)
        for name in backends:  # each backend: run (its image, engine version and flags), or refused with why
            if name not in spec.runtime_images:
                if name not in spec.unsupported_backends:
                    problems.append(Problem(f"{key}runtimeImages", f"no image for backend {name}, nor why not"))
                continue
            for field, by_backend in (("engineVersions", spec.engine_versions), ("publishArgs", spec.publish_args)):
                if name not in by_backend:
                    problems.append(Problem(f"{key}{field}", f"no entry for backend {name}"))
        for field, folder in (
            ("chartValues", f"{spec.chart_values}/chart"),
            ("crds.directory", f"{spec.crds.directory}/crds"),
        ):
            if not (VENDOR_DIR / "dynamo" / folder).is_dir():
                problems.append(Problem(f"{key}{field}", f"vendor/dynamo/{folder} does not exist"))
        versions[version] = DynamoVersion(version=version, spec=spec, directory=VENDOR_DIR / "dynamo")
    if problems:
        raise ConfigError(problems)
    return versions


def recipe_from_object(data: dict[str, Any], where: str, catalog: Catalog) -> Recipe:
    """A recipe given as an object (what a configs/recipes/ file holds), checked like those files:
    ConfigError with keys `<where>.<field>`."""
    recipe = _parse(Recipe, data, f"{where}.")
    problems = _recipe_problems(recipe, where, catalog.hardware, catalog.backends)
    if problems:
        raise ConfigError(problems)
    return recipe


def _recipe_problems(
    recipe: Recipe, path: Path | str, hardware: dict[str, Hardware], backends: dict[str, Backend]
) -> list[Problem]:
    problems = []
    if recipe.hardware not in hardware and recipe.hardware != CPU_ONLY:
        problems.append(Problem(f"{path}: hardware", f"unknown hardware; known: {', '.join([*hardware, CPU_ONLY])}"))
    backend = backends.get(recipe.backend)
    if backend is None:
        return [*problems, Problem(f"{path}: backend", f"unknown backend; known: {', '.join(backends)}")]
    for role, spec in recipe.workers.items():
        problems += backend.check(spec.engine, f"{path}: workers.{role}.engine")
    return problems


def _read_yaml(path: Path) -> dict[str, Any]:
    return read_yaml(path) or {}


_Model = TypeVar("_Model", bound=StrictModel)


def _parse(model: type[_Model], data: dict[str, Any], key_prefix: str) -> _Model:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ConfigError(problems_from(error, key_prefix)) from None
