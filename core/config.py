"""Typed stack config: the product's public interface (Pulumi config namespace `gpt-oss-infra`).

`parse_stack_config` takes the namespace's keys as plain values (objects already decoded) and
returns a `StackConfig`, or raises ConfigError naming every bad key, e.g.
`gpt-oss-infra:deployments.gpt-oss.gpus`. The HF token is not part of it: the Pulumi shell keeps
the secret to itself and passes only whether one is set.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PositiveInt, ValidationError

from core.catalog import CapacityType, Catalog
from core.errors import ConfigError, Problem
from core.quantity import parse_quantity
from core.schema import DNS_LABEL, StrictModel, problems_from

NAMESPACE = "gpt-oss-infra"
KEY_PREFIX = f"{NAMESPACE}:"
SECRET_KEYS = ("hfToken", "ngcApiKey")  # read by the shell as Pulumi secrets, never parsed here


def _dns_label(value: str) -> str:
    if len(value) > 63 or not DNS_LABEL.match(value):
        raise ValueError(f"{value!r} must be a DNS label: lowercase letters, digits and '-', at most 63 characters")
    return value


def _quantity(value: str) -> str:
    parse_quantity(value)
    return value


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a CIDR block like 10.0.0.0/16") from None
    return value


def _commit_id(value: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", value):
        raise ValueError(f"{value!r} must be a full Hugging Face commit id: 40 lowercase hex characters")
    return value


def _pinned_image(value: str) -> str:
    name, _, tag = value.rpartition(":")
    if "@sha256:" not in value and (not name or "/" in tag or tag in ("", "latest")):
        raise ValueError(f"{value!r} must be pinned: registry/repository:tag (not latest) or @sha256:digest")
    return value


DnsLabel = Annotated[str, AfterValidator(_dns_label)]

# Objects are named after a deployment: "<name>-trtllmprefillworker" (the operator's, 20 more
# characters) and "<name>-smoke-<digest>" must stay within Kubernetes' 63.
MAX_DEPLOYMENT_NAME = 40


def _deployment_name(value: str) -> str:
    _dns_label(value)
    if len(value) > MAX_DEPLOYMENT_NAME:
        raise ValueError(
            f"{value!r} is {len(value)} characters; at most {MAX_DEPLOYMENT_NAME}, so that the names derived "
            "from it (e.g. <name>-trtllmprefillworker) stay within Kubernetes' 63"
        )
    return value


# The encrypted gp3 StorageClass a created cluster gets (EBS CSI driver add-on): EKS 1.30 and
# later mark no StorageClass as the default, so every PVC we render names one.
CREATED_BLOCK_STORAGE_CLASS = "gpt-oss-gp3"
Quantity = Annotated[str, AfterValidator(_quantity)]


class Release(StrictModel):
    """Everything promotion moves between stacks, and nothing else."""

    dynamo: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]  # one of configs/dynamo/versions.yaml
    runtime_image: Annotated[str, AfterValidator(_pinned_image)]
    model: Annotated[str, Field(pattern=r"^[\w.-]+/[\w.-]+$")]
    model_revision: Annotated[str, AfterValidator(_commit_id)]


class SystemNodes(StrictModel):
    """The CPU node group for the frontend, the Dynamo operator, NATS/etcd and jobs."""

    instance_type: str = "m7i.2xlarge"
    nodes: Annotated[int, Field(ge=1)] = 2
    disk_size_gib: Annotated[int, Field(ge=20, alias="diskSizeGiB")] = 100


class Network(StrictModel):
    """A new VPC (default), or existing private subnets keyed by availability zone."""

    vpc_cidr: Annotated[str, AfterValidator(_cidr)] = "10.0.0.0/16"
    availability_zones: Annotated[int, Field(ge=2, le=6)] = 3
    existing_private_subnets: dict[str, Annotated[str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")]] | None = None


class Cluster(StrictModel):
    create: bool = True
    name: DnsLabel
    kubernetes_version: Annotated[str, Field(pattern=r"^1\.\d{2}$")] = "1.33"
    endpoint_public_access: bool = True  # the private endpoint is always on
    public_access_cidrs: list[Annotated[str, AfterValidator(_cidr)]] = []
    # Networks that reach the private endpoint (in-VPC deploy runners, VPN): HTTPS into the
    # cluster security group, which admits only its own members by default. Default: the VPC we create.
    private_access_cidrs: list[Annotated[str, AfterValidator(_cidr)]] | None = None
    admin_role_arns: list[Annotated[str, Field(pattern=r"^arn:aws[\w-]*:iam::\d{12}:role/.+$")]] = []
    log_retention_days: Annotated[int, Field(ge=1)] = 30
    system_nodes: SystemNodes = SystemNodes()
    network: Network = Network()
    # What makes GPUs schedulable: NVIDIA's device plugin (default on clusters we create), the GPU
    # Operator, or nothing (an existing cluster that has one already). Never two of them.
    gpu_software: Literal["device-plugin", "gpu-operator", "none"] | None = None
    dcgm_exporter: bool = False
    # The ReadWriteOnce StorageClass for the platform's volumes (NATS JetStream) on an existing
    # cluster. Created clusters get their own (CREATED_BLOCK_STORAGE_CLASS).
    block_storage_class_name: DnsLabel | None = None

    @property
    def resolved_gpu_software(self) -> str:
        return self.gpu_software or ("device-plugin" if self.create else "none")

    @property
    def resolved_private_access_cidrs(self) -> list[str]:
        if self.private_access_cidrs is not None:
            return self.private_access_cidrs
        return [] if self.network.existing_private_subnets else [self.network.vpc_cidr]

    @property
    def block_storage_class(self) -> str | None:
        """The StorageClass every platform PVC names: ours on created clusters, else the configured one."""
        return CREATED_BLOCK_STORAGE_CLASS if self.create else self.block_storage_class_name


class NodePool(StrictModel):
    hardware: str
    nodes: Annotated[int, Field(ge=0)]
    capacity_type: CapacityType = "ON_DEMAND"
    capacity_reservation_id: Annotated[str | None, Field(pattern=r"^cr-[0-9a-f]{17}$")] = None
    instance_type: str | None = None  # default: the hardware's first instance type
    # Required with CAPACITY_BLOCK: the reservation's AZ, whose private subnet alone the pool uses.
    availability_zone: Annotated[str | None, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")] = None
    efa: bool | None = None  # default: on when the instance has EFA and the pool has > 1 node
    disk_size_gib: Annotated[int, Field(ge=100, alias="diskSizeGiB")] = 500  # root volume: runtime images are ~30 GB
    # Labels that select this pool's nodes; default {gpt-oss-infra/pool: <pool name>}, the label
    # our node groups carry. Set it to target GPU nodes of an existing cluster.
    node_selector: dict[str, str] | None = None


class ModelCache(StrictModel):
    storage: Literal["efs", "fsx-lustre", "existing"] = "efs"
    size: Quantity = "400Gi"
    storage_class_name: DnsLabel | None = None
    # FSx for Lustre PERSISTENT_2 throughput per TiB: 125 | 250 | 500 | 1000 MB/s
    fsx_throughput_per_tib: Literal[125, 250, 500, 1000] = Field(250, alias="fsxThroughputPerTiB")


class Platform(StrictModel):
    """The Dynamo platform Helm release (chart version: release.dynamo)."""

    namespace: DnsLabel = "dynamo-system"
    nats: bool = True  # on in 1.0-1.2 charts; the KV router's events travel over NATS
    grove: bool = False  # multinode orchestration; needs Grove installed
    kai_scheduler: bool = False


class Benchmark(StrictModel):
    """Opt-in aiperf Job against the deployment's frontend; the recipe's traffic shape by default
    (seed 002's long-context run: inputTokens 32000, outputTokens 256)."""

    enabled: bool = False
    input_tokens: PositiveInt | None = None
    output_tokens: PositiveInt | None = None
    concurrency_per_gpu: PositiveInt | None = None  # x the deployment's real GPU count


class Deployment(StrictModel):
    recipe: str
    node_pool: str
    gpus: PositiveInt | None = None  # GPUs per worker, where the recipe allows several sizes
    replicas: PositiveInt = 1
    router_mode: Literal["round-robin", "kv"] = "round-robin"
    overrides: dict[str, Any] = {}  # engine-config keys deep-merged into the recipe's
    benchmark: Benchmark = Benchmark()
    # How long `pulumi up` waits for the graph to be Ready: pulling the ~30 GB runtime image and
    # loading the model, which seed 004 puts at 15-30 minutes. Twice that by default.
    ready_timeout_minutes: PositiveInt = 60


class StackConfig(StrictModel):
    environment: DnsLabel
    release: Release
    cluster: Cluster
    node_pools: Annotated[dict[DnsLabel, NodePool], Field(min_length=1)]
    model_cache: ModelCache = ModelCache()
    deployments: dict[Annotated[str, AfterValidator(_deployment_name)], Deployment] = {}
    namespace: DnsLabel = "gpt-oss"  # Kubernetes namespace of the serving workloads
    platform: Platform = Platform()

    @property
    def pinned_zones(self) -> list[str]:
        """The AZs node pools pin (their reservations live there), once each, in config order."""
        return list(dict.fromkeys(p.availability_zone for p in self.node_pools.values() if p.availability_zone))


def parse_stack_config(raw: dict[str, Any], catalog: Catalog) -> StackConfig:
    """Validate the `gpt-oss-infra:` keys (prefix stripped) and every cross-field rule."""
    try:
        config = StackConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(problems_from(error, KEY_PREFIX)) from None
    problems = (
        _release_problems(config, catalog)
        + _pool_problems(config, catalog)
        + _deployment_problems(config, catalog)
        + _cluster_problems(config, catalog)
        + _block_storage_problems(config)
    )
    if config.model_cache.storage != "existing" and not config.cluster.create:
        problems.append(
            Problem(
                f"{KEY_PREFIX}modelCache.storage",
                "an existing cluster needs storage: existing (with storageClassName): "
                "efs and fsx-lustre file systems are created with the cluster's network",
            )
        )
    if config.model_cache.storage == "existing" and not config.model_cache.storage_class_name:
        problems.append(
            Problem(
                f"{KEY_PREFIX}modelCache.storageClassName",
                "required with storage: existing (the RWX StorageClass to use)",
            )
        )
    if problems:
        raise ConfigError(problems)
    return config


def _pool_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    problems = []
    for name, pool in config.node_pools.items():
        key = f"{KEY_PREFIX}nodePools.{name}"
        hardware = catalog.hardware.get(pool.hardware)
        if hardware is None:
            problems.append(
                Problem(
                    f"{key}.hardware",
                    f"unknown hardware {pool.hardware!r}; one of {', '.join(catalog.hardware)}",
                )
            )
            continue
        instance_type = pool.instance_type or hardware.default_instance_type
        instance = hardware.instance_types.get(instance_type)
        if instance is None:
            problems.append(
                Problem(
                    f"{key}.instanceType",
                    f"{instance_type!r} does not carry {pool.hardware}; one of {', '.join(hardware.instance_types)}",
                )
            )
            continue
        if pool.capacity_type not in instance.capacity_types:
            problems.append(
                Problem(
                    f"{key}.capacityType",
                    f"{instance_type} ({pool.hardware}) is sold as {', '.join(instance.capacity_types)} only",
                )
            )
        if pool.capacity_type == "CAPACITY_BLOCK" and not pool.capacity_reservation_id:
            problems.append(
                Problem(
                    f"{key}.capacityReservationId",
                    "required with capacityType CAPACITY_BLOCK (the reservation id, cr-...)",
                )
            )
        if pool.capacity_type == "CAPACITY_BLOCK" and not pool.availability_zone:
            problems.append(
                Problem(
                    f"{key}.availabilityZone",
                    "required with capacityType CAPACITY_BLOCK: the reservation's AZ (e.g. us-east-2b)",
                )
            )
        grace_blackwell = hardware.architecture == "blackwell" and hardware.cpu_architecture == "arm64"
        if grace_blackwell and _minor(config.cluster.kubernetes_version) < MIN_GB200_KUBERNETES_MINOR:
            problems.append(
                Problem(
                    f"{KEY_PREFIX}cluster.kubernetesVersion",
                    f"{pool.hardware} nodes need Kubernetes >= 1.{MIN_GB200_KUBERNETES_MINOR} "
                    "(dynamic resource allocation for IMEX/NVLink domains)",
                )
            )
    return problems


# EKS user guide, "NVIDIA GB200 UltraServers on EKS": Kubernetes 1.33+ (DRA) for p6e-gb200.
MIN_GB200_KUBERNETES_MINOR = 33


def _minor(kubernetes_version: str) -> int:
    return int(kubernetes_version.split(".")[1])


def _release_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    if config.release.dynamo in catalog.dynamo_versions:
        return []
    return [
        Problem(
            f"{KEY_PREFIX}release.dynamo",
            f"Dynamo {config.release.dynamo} is not supported; one of {', '.join(catalog.dynamo_versions)} "
            "(each needs its CRDs and chart values in configs/dynamo/)",
        )
    ]


def _block_storage_problems(config: StackConfig) -> list[Problem]:
    """Platform volumes (NATS JetStream's file store) need a block StorageClass that exists."""
    cluster, key = config.cluster, f"{KEY_PREFIX}cluster.blockStorageClassName"
    if cluster.create and cluster.block_storage_class_name:
        return [
            Problem(
                key,
                f"only for existing clusters (create: false); a created cluster gets its own encrypted gp3 "
                f"StorageClass {CREATED_BLOCK_STORAGE_CLASS}: remove it",
            )
        ]
    if not cluster.create and config.platform.nats and not cluster.block_storage_class_name:
        return [
            Problem(
                key,
                "required on an existing cluster while platform.nats is on: the ReadWriteOnce StorageClass for "
                "NATS JetStream's volume (e.g. gp3 or gp2 on EKS; EKS 1.30+ marks no class as default)",
            )
        ]
    return []


def _cluster_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    cluster = config.cluster
    if not cluster.create:
        return []
    key = f"{KEY_PREFIX}cluster"
    problems = []
    if cluster.kubernetes_version not in catalog.addon_versions:
        problems.append(
            Problem(
                f"{key}.kubernetesVersion",
                f"EKS add-on versions are pinned for {', '.join(catalog.addon_versions)} (configs/eks-addons.yaml); "
                f"pin them for {cluster.kubernetes_version} there first",
            )
        )
    if cluster.endpoint_public_access and not cluster.public_access_cidrs:
        problems.append(
            Problem(
                f"{key}.publicAccessCidrs",
                "required while endpointPublicAccess is true: the CIDRs allowed to reach the API "
                "(or set endpointPublicAccess: false and reach it from inside the VPC)",
            )
        )
    if any(ipaddress.ip_network(cidr).prefixlen == 0 for cidr in cluster.public_access_cidrs):
        problems.append(Problem(f"{key}.publicAccessCidrs", "0.0.0.0/0 opens the API to the internet"))
    if not cluster.endpoint_public_access and not cluster.resolved_private_access_cidrs:
        problems.append(
            Problem(
                f"{key}.privateAccessCidrs",
                "required with endpointPublicAccess false in existing subnets: the networks `pulumi up` and "
                "kubectl run from (a runner in the VPC, a VPN); nothing else reaches a private-only API",
            )
        )
    pinned = config.pinned_zones
    existing = cluster.network.existing_private_subnets
    if existing is not None:
        if len(existing) < 2:
            problems.append(Problem(f"{key}.network.existingPrivateSubnets", "EKS needs subnets in at least 2 AZs"))
        for name, pool in config.node_pools.items():
            if pool.availability_zone and pool.availability_zone not in existing:
                problems.append(
                    Problem(
                        f"{KEY_PREFIX}nodePools.{name}.availabilityZone",
                        f"no private subnet in {pool.availability_zone}; "
                        f"existingPrivateSubnets has {', '.join(existing)}",
                    )
                )
    elif len(pinned) > cluster.network.availability_zones:
        problems.append(
            Problem(
                f"{key}.network.availabilityZones",
                f"node pools pin {len(pinned)} AZs ({', '.join(pinned)}); raise it to at least that",
            )
        )
    return problems


def _deployment_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    problems = []
    for name, deployment in config.deployments.items():
        key = f"{KEY_PREFIX}deployments.{name}"
        recipe = catalog.recipes.get(deployment.recipe)
        if recipe is None:
            problems.append(
                Problem(
                    f"{key}.recipe",
                    f"unknown recipe {deployment.recipe!r}; one of {', '.join(sorted(catalog.recipes))}",
                )
            )
        pool = config.node_pools.get(deployment.node_pool)
        if pool is None:
            problems.append(
                Problem(
                    f"{key}.nodePool",
                    f"unknown node pool {deployment.node_pool!r}; one of {', '.join(config.node_pools)}",
                )
            )
        if recipe is None or pool is None:
            continue
        if recipe.hardware != pool.hardware:
            problems.append(
                Problem(
                    f"{key}.recipe",
                    f"recipe {deployment.recipe} runs on {recipe.hardware}, "
                    f"but node pool {deployment.node_pool} is {pool.hardware}",
                )
            )
    return problems
