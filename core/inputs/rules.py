"""The stack config's cross-field rules: `parse_stack_config` turns the namespace's keys (objects
already decoded) into a StackConfig, or raises ConfigError naming every bad key, e.g.
`gpt-oss-infra:deployments.gpt-oss.gpus`. The HF token is not part of it: the Pulumi shell keeps
the secret to itself and passes only whether one is set.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

import kubernetes_validate
import kubernetes_validate.utils
from pydantic import ValidationError

from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.dynamo_graph import image_release
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs import aws_values
from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, CapacityType, Catalog
from gpt_oss_infra.core.inputs.config import (
    KEY_PREFIX,
    DeploymentConfig,
    EksClusterConfig,
    EndpointConfig,
    ExistingClusterConfig,
    ModelCacheConfig,
    NodePoolConfig,
    Release,
    StackConfig,
)
from gpt_oss_infra.core.quantity import gibibytes
from gpt_oss_infra.core.schema import closest_name, problems_from

CLUSTER_KINDS = ("eks", "existing")
REGION_KEY = "aws:region"
# The label the node groups the program creates carry (core/render/labels.py POOL_LABEL, a later stage):
# a pool's default nodeSelector, which no node of an existing cluster carries unless labelled.
POOL_LABEL = "gpt-oss-infra/pool"


def parse_stack_config(
    raw: dict[str, Any], catalog: Catalog, region: str | None = None, today: date | None = None
) -> tuple[StackConfig, list[str]]:
    """Validate the `gpt-oss-infra:` keys (prefix stripped) and every cross-field rule; return the
    config and warnings (deprecated keys, an EKS version near or past its standard support as of
    `today`, default the real date, priced for `region`)."""
    raw, warnings, problems = _upgrade_deprecated(raw)
    try:
        config = StackConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(problems + _without_union_tags(problems_from(error, KEY_PREFIX, StackConfig))) from None
    problems += (
        _release_problems(config, catalog)
        + _pool_problems(config, catalog)
        + _deployment_problems(config, catalog)
        + _autoscaling_problems(config, catalog)
        + _spot_problems(config, catalog)
        + _cold_start_problems(config, catalog)
        + [
            problem
            for name, each in config.deployments.items()
            for problem in model_limit_problems(name, each, catalog)
        ]
        + _cluster_problems(config, catalog)
        + _kubernetes_version_problems(config, catalog)
        + _storage_problems(config, catalog)
        + _cache_size_problems(config, catalog)
        + _endpoint_problems(config)
    )
    if problems:
        raise ConfigError(problems)
    return (
        config,
        warnings
        + _release_warnings(config, catalog)
        + kubernetes_support_warnings(config, catalog, region, today)
        + _endpoint_warnings(config),
    )


def _upgrade_deprecated(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[Problem]]:
    """`cluster.create: true|false` (before cluster kinds) is read as `kind: eks|existing`, with a
    warning; a cluster without either is `kind: eks`."""
    cluster = raw.get("cluster")
    if not isinstance(cluster, dict) or ("kind" in cluster and "create" not in cluster):
        return raw, [], []
    key = f"{KEY_PREFIX}cluster.create"
    cluster = dict(cluster)
    if "create" not in cluster:
        return raw | {"cluster": cluster | {"kind": "eks"}}, [], []
    create = cluster.pop("create")
    if "kind" in cluster:
        return raw | {"cluster": cluster}, [], [Problem(key, "deprecated and replaced by kind: remove it")]
    if not isinstance(create, bool):
        problem = Problem(key, f"{create!r} must be true or false; it is deprecated: write kind: eks|existing")
        return raw | {"cluster": cluster | {"kind": "eks"}}, [], [problem]
    kind = "eks" if create else "existing"
    warning = f"{key} is deprecated: write `kind: {kind}` instead of `create: {str(create).lower()}`"
    return raw | {"cluster": cluster | {"kind": kind}}, [warning], []


def _without_union_tags(problems: list[Problem]) -> list[Problem]:
    """pydantic names the union member in an error's path (cluster.eks.name): the key is cluster.name."""
    tags = "|".join(CLUSTER_KINDS)
    return [
        Problem(re.sub(rf"^({re.escape(KEY_PREFIX)}cluster)\.({tags})(\.|$)", r"\1\3", problem.key), problem.message)
        for problem in problems
    ]


def _pool_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    created = isinstance(config.cluster, EksClusterConfig)
    return [
        problem
        for name, pool in config.node_pools.items()
        for problem in pool_problems(name, pool, catalog, created, config.cluster.kubernetes_version)
    ]


def pool_problems(
    name: str, pool: NodePoolConfig, catalog: Catalog, created: bool, kubernetes_version: str
) -> list[Problem]:
    """One GPU pool: a node group of the cluster the program creates (`created`), or nodes of an existing
    one; each problem under its stack-file key (nodePools.<name>.<key>)."""
    key = f"{KEY_PREFIX}nodePools.{name}"
    problems = _size_problems(key, pool, created)
    if not created:
        problems += _existing_pool_problems(name, pool)
    if pool.hardware == CPU_ONLY:
        return problems + _cpu_pool_problems(key, pool, catalog, created)
    hardware = catalog.hardware.get(pool.hardware)
    if hardware is None:
        return [*problems, _unknown(f"{key}.hardware", "hardware", pool.hardware, catalog.hardware)]
    instance_type = pool.instance_type or hardware.default_instance_type
    instance = hardware.instance_types.get(instance_type)
    if instance is None:
        return [
            *problems,
            Problem(
                f"{key}.instanceType",
                f"{instance_type!r} does not carry {pool.hardware}; one of {', '.join(hardware.instance_types)}",
            ),
        ]
    if created:
        problems += _capacity_problems(key, pool, instance_type, instance.capacity_types)
    minimum = hardware.min_kubernetes_version
    if minimum and _minor(kubernetes_version) < _minor(minimum):
        problems.append(
            Problem(
                f"{KEY_PREFIX}cluster.kubernetesVersion",
                f"{pool.hardware} nodes need Kubernetes >= {minimum} ({hardware.min_kubernetes_reason})",
            )
        )
    return problems


def _cpu_pool_problems(key: str, pool: NodePoolConfig, catalog: Catalog, created: bool) -> list[Problem]:
    """A pool of CPU nodes for recipes without GPUs: elastic only (fixed CPU nodes are the system nodes), of
    an instance type whose size the placement check knows (configs/nodes.yaml) and that carries no GPU."""
    if not created:
        return [
            Problem(
                f"{key}.hardware",
                "cpu is for a cluster the program creates (kind: eks), whose Karpenter provisions the pool: on an "
                "existing cluster, a recipe without GPUs runs on its nodes (leave the deployment's nodePool out)",
            )
        ]
    problems = []
    if pool.capacity_type not in ("ON_DEMAND", "SPOT"):
        problems.append(Problem(f"{key}.capacityType", "ON_DEMAND or SPOT for a cpu pool (Karpenter's)"))
    if pool.node_selector is not None:
        problems.append(
            Problem(
                f"{key}.nodeSelector",
                f"not for a cpu pool: its nodes carry {POOL_LABEL}: <pool>, which its workers select",
            )
        )
    if pool.scaling is None:
        problems.append(
            Problem(
                f"{key}.scaling",
                "required for a cpu pool: its nodes follow its workers (fixed CPU nodes are cluster.systemNodes)",
            )
        )
    gpu_types = {name for hardware in catalog.hardware.values() for name in hardware.instance_types}
    sized = sorted(
        name for name, facts in catalog.nodes.instance_types.items() if facts.vcpus and name not in gpu_types
    )
    if pool.instance_type not in sized:
        problems.append(
            Problem(
                f"{key}.instanceType",
                f"{'required' if pool.instance_type is None else repr(pool.instance_type) + ' is not one'} for a cpu "
                f"pool: one of {', '.join(sized)} (configs/nodes.yaml, whose sizes the placement check uses)",
            )
        )
    problems += [
        Problem(f"{key}.{alias}", "not for a cpu pool: its nodes have no GPU and no EFA")
        for field, alias in (("efa", "efa"), ("capacity_reservation_id", "capacityReservationId"))
        if getattr(pool, field) is not None
    ]
    return problems


def _size_problems(key: str, pool: NodePoolConfig, created: bool) -> list[Problem]:
    """A fixed number of nodes, or (on a created cluster) the bounds Karpenter keeps them within."""
    scaling = pool.scaling
    if scaling is None:
        if pool.nodes is None:
            return [
                Problem(
                    f"{key}.nodes",
                    "required: the pool's number of nodes, or (on a created cluster) scaling: {minNodes, maxNodes} "
                    "for nodes that follow the load",
                )
            ]
        return []
    if pool.nodes is not None:
        return [
            Problem(
                f"{key}.scaling",
                "not with nodes: give a fixed number of nodes, or scaling's bounds for nodes that follow the load",
            )
        ]
    if not created:
        return [
            Problem(
                f"{key}.scaling",
                "only for a cluster the program creates (kind: eks), where Karpenter provisions the pool: on an "
                "existing cluster the pool describes nodes that exist; give nodes (the most it may have), and bound "
                "the Planner by your cluster's own autoscaler (docs/autoscaling.md: Existing clusters)",
            )
        ]
    if scaling.min_nodes > scaling.max_nodes:
        return [Problem(f"{key}.scaling.minNodes", f"{scaling.min_nodes} is more than maxNodes {scaling.max_nodes}")]
    return []


def _capacity_problems(
    key: str, pool: NodePoolConfig, instance_type: str, sold_as: list[CapacityType]
) -> list[Problem]:
    """How a node group of a cluster the program creates buys its instances (an existing cluster's
    nodes were bought already: _existing_pool_problems)."""
    problems = []
    if pool.scaling is not None and (pool.capacity_type == "CAPACITY_BLOCK" or pool.capacity_reservation_id):
        problems.append(
            Problem(
                f"{key}.scaling",
                "not with a Capacity Block or reservation: its nodes are a fixed number, paid for whether they "
                "serve or not; give nodes (a Capacity Block pool stays a managed node group)",
            )
        )
    if pool.capacity_type not in sold_as:
        problems.append(
            Problem(
                f"{key}.capacityType",
                f"{instance_type} ({pool.hardware}) is sold as {', '.join(sold_as)} only",
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
    return problems


# A pool of an existing cluster describes GPU nodes that exist: how EKS would buy them means nothing
# there. Refused rather than ignored with a warning: a Capacity Block id the program silently never
# reads would look checked (docs/config.md: each cluster kind takes only its own keys).
_BUYING_KEYS = {
    "capacity_type": "capacityType",
    "capacity_reservation_id": "capacityReservationId",
    "availability_zone": "availabilityZone",
}


def _existing_pool_problems(name: str, pool: NodePoolConfig) -> list[Problem]:
    """A pool of an existing cluster: the labels that select its nodes, and no keys of a node group
    the program would create."""
    key = f"{KEY_PREFIX}nodePools.{name}"
    problems = [
        Problem(
            f"{key}.{alias}",
            "only for a cluster the program creates (kind: eks): this pool describes GPU nodes of an existing "
            "cluster, which are there already, however they were bought; leave it out",
        )
        for field, alias in _BUYING_KEYS.items()
        if field in pool.model_fields_set
    ]
    if not pool.node_selector:  # {} too: the objects would fall back to the default label
        problems.append(
            Problem(
                f"{key}.nodeSelector",
                f"required on an existing cluster: its nodes carry no {POOL_LABEL} label unless you label them, "
                f"so the default ({POOL_LABEL}: {name}) would select no node and leave the workers Pending. Name "
                "labels the GPU nodes carry (e.g. nvidia.com/gpu.product: NVIDIA-H200, which NVIDIA's GPU feature "
                "discovery sets; kubectl get nodes -L nvidia.com/gpu.product shows them), or label the nodes "
                f"(kubectl label nodes <node> {POOL_LABEL}={name}) and set nodeSelector: {{{POOL_LABEL}: {name}}}",
            )
        )
    return problems


def _minor(kubernetes_version: str) -> int:
    return int(kubernetes_version.split(".")[1])


def _release_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    release = config.release
    dynamo = catalog.dynamo_versions.get(release.dynamo)
    if dynamo is None:
        return unsupported_release(release.dynamo, catalog, f"{KEY_PREFIX}release.dynamo")
    return runtime_image_problems(release, dynamo, f"{KEY_PREFIX}release.runtimeImage") + _bundled_scheduler_problems(
        config, dynamo
    )


def unsupported_release(version: str, catalog: Catalog, key: str) -> list[Problem]:
    """A Dynamo release this program has no pins for, under `key` (the stack file's, or a block's argument)."""
    if version in catalog.dynamo_versions:
        return []
    return [
        Problem(
            key,
            f"Dynamo {version} is not supported; one of {', '.join(catalog.dynamo_versions)} "
            "(configs/dynamo/versions.yaml)",
        )
    ]


def runtime_image_problems(release: Release, dynamo: DynamoVersion, key: str) -> list[Problem]:
    """The operator and the workers' runtime of two releases disagree on the wire and in what the
    operator injects (tags like 1.6.1, 1.6.1-efa). A digest or a custom tag names no release: the
    graph then tells the operator the platform's version itself (core/dynamo_graph.py)."""
    tagged = image_release(release.runtime_image)
    if tagged is None or tagged == release.dynamo:
        return []
    published = ", ".join(sorted(set(dynamo.spec.runtime_images.values())))
    return [
        Problem(
            key,
            f"{release.runtime_image} is Dynamo {tagged}'s, but release.dynamo is {release.dynamo}: the runtime "
            f"must be the platform's release ({published}, configs/dynamo/versions.yaml)",
        )
    ]


def _bundled_scheduler_problems(config: StackConfig, dynamo: DynamoVersion) -> list[Problem]:
    platform = config.platform
    if not (platform.grove and platform.kai_scheduler and dynamo.spec.grove_with_kai_scheduler == "refused"):
        return []
    return [
        Problem(
            f"{KEY_PREFIX}platform.kaiScheduler",
            f"the dynamo-platform {dynamo.version} chart refuses bundled Grove and KAI scheduler together without "
            "a KAI value this program cannot verify (configs/dynamo/versions.yaml): install KAI (or Grove) apart, "
            "as Dynamo recommends for production, and leave this off",
        )
    ]


def _release_warnings(config: StackConfig, catalog: Catalog) -> list[str]:
    return release_warnings(catalog.dynamo_versions[config.release.dynamo], catalog, f"{KEY_PREFIX}release.dynamo")


def release_warnings(dynamo: DynamoVersion, catalog: Catalog, key: str) -> list[str]:
    """Each pin of the release that is not verified (loud: the first `up` fails at the Helm release if
    NGC has no chart of that version), and a release kept only to upgrade through (Dynamo supports one
    minor release at a time); each under `key`."""
    warnings = [f"{key}: Dynamo {dynamo.version}'s {pin}" for pin in dynamo.unverified_pins()]
    if not dynamo.spec.upgrade_step:
        return warnings
    later = [v for v, d in catalog.dynamo_versions.items() if d.minor > dynamo.minor and not d.spec.upgrade_step]
    return [
        *warnings,
        f"{key}: {dynamo.version} is an upgrade step (configs/dynamo/versions.yaml), deployed "
        f"only on the way to {', '.join(later)}: promote onwards once it is up (make promote)",
    ]


SUPPORT_NOTICE_DAYS = 90  # how long before its standard support ends a version is warned about


def kubernetes_support_warnings(
    config: StackConfig, catalog: Catalog, region: str | None, today: date | None = None
) -> list[str]:
    """A cluster the stack creates whose Kubernetes version is in EKS extended support on `today`
    (default: the real date), or leaves standard support within SUPPORT_NOTICE_DAYS: its control
    plane is then billed at the extended rate (configs/prices.yaml, for the stack's region)."""
    cluster = config.cluster
    if not isinstance(cluster, EksClusterConfig):
        return []
    today = today or date.today()
    version = cluster.kubernetes_version
    ends = catalog.prices.eks_standard_support_ends.get(version)
    if ends is None or ends - today > timedelta(days=SUPPORT_NOTICE_DAYS):
        return []
    if ends <= today:
        when = f"EKS {version} left standard support on {ends}: in extended support, its control plane costs"
    else:
        days = (ends - today).days
        in_days = f"in {days} day" + ("s" if days != 1 else "")
        when = f"EKS {version} leaves standard support on {ends} ({in_days}): then its control plane costs"
    price, move = _extended_price(catalog, region), _move_to(catalog, version, today)
    return [f"{KEY_PREFIX}cluster.kubernetesVersion: {when} {price}; {move}"]


def _extended_price(catalog: Catalog, region: str | None) -> str:
    if region is None:
        return "the extended-support rate (price unknown: no aws:region)"
    prices = catalog.prices
    regional = prices.regions.get(region)
    rates = regional.eks_cluster_hour if regional else {}
    standard, extended = rates.get("standard"), rates.get("extended")
    if standard is None or extended is None:
        return f"the extended-support rate (price unknown: none verified for {region} in configs/prices.yaml)"
    hours = prices.hours_per_month
    return (
        f"${extended:.2f}/h instead of ${standard:.2f}/h in {region}, "
        f"+${(extended - standard) * hours:,.0f} a month at {hours} h (configs/prices.yaml)"
    )


def _move_to(catalog: Catalog, version: str, today: date) -> str:
    """The newest version with add-on builds pinned that is still in standard support, and the
    versions a live cluster steps through to it: EKS upgrades one minor version at a time."""
    ends = catalog.prices.eks_standard_support_ends
    pinned = sorted((v for v in catalog.addon_versions if _minor(v) > _minor(version)), key=_minor)
    supported = [v for v in pinned if v in ends and ends[v] > today]
    if not supported:
        return "no newer version has add-on builds pinned: pin one (configs/eks-addons.yaml, configs/prices.yaml)"
    target = supported[-1]
    steps = [v for v in pinned if _minor(v) <= _minor(target)]
    move = f"move to {target}, the newest version in standard support with add-on builds pinned"
    if len(steps) > 1:
        move += f" (a live cluster steps through {', '.join(steps)}: EKS upgrades one minor version at a time)"
    return move


def _storage_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    """Platform volumes (NATS JetStream's file store) need a block StorageClass that exists, and
    the model cache a file system the cluster kind can offer."""
    cluster, problems = config.cluster, []
    dynamo = catalog.dynamo_versions.get(config.release.dynamo)  # unknown: refused with its own problem
    nats = dynamo is not None and dynamo.bundled_nats(config.platform.nats)
    if isinstance(cluster, ExistingClusterConfig):
        if nats and not cluster.block_storage_class_name:
            problems.append(
                nats_needs_block_storage(
                    f"{KEY_PREFIX}cluster.blockStorageClassName", "platform.nats, or the release's default"
                )
            )
        if config.model_cache.storage != "existing":
            problems.append(
                Problem(
                    f"{KEY_PREFIX}modelCache.storage",
                    "an existing cluster needs storage: existing (with storageClassName): "
                    "efs and fsx-lustre file systems are created with an EKS cluster's network",
                )
            )
    problems += existing_storage_needs_a_class(config.model_cache, f"{KEY_PREFIX}modelCache.storageClassName")
    if config.model_cache.storage == "existing" and config.model_cache.keep_on_destroy:
        problems.append(
            Problem(
                f"{KEY_PREFIX}modelCache.keepOnDestroy",
                "only for a file system the stack makes (storage efs or fsx-lustre): with storage: existing, "
                "what happens to the volume is its StorageClass's reclaimPolicy (Retain keeps it)",
            )
        )
    return problems


def existing_storage_needs_a_class(cache: ModelCacheConfig, key: str) -> list[Problem]:
    """A cache on an existing StorageClass that names none, under `key`."""
    if cache.storage != "existing" or cache.storage_class_name:
        return []
    return [Problem(key, "required with storage: existing (the RWX StorageClass to use)")]


def nats_needs_block_storage(key: str, turned_on_by: str) -> Problem:
    """The platform's bundled NATS (on by `turned_on_by`) on an existing cluster without a block
    StorageClass, under `key`."""
    return Problem(
        key,
        f"required on an existing cluster while the bundled NATS is on ({turned_on_by}): the ReadWriteOnce "
        "StorageClass for NATS JetStream's volume (e.g. gp3 or gp2 on EKS; EKS 1.30+ marks no class as default)",
    )


def _cluster_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    cluster = config.cluster
    if not isinstance(cluster, EksClusterConfig):
        return []
    key = f"{KEY_PREFIX}cluster"
    problems = []
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


def _kubernetes_version_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    """A created cluster's version has EKS add-on builds pinned; every cluster's version has the
    schemas the strict validation of its objects needs (core/checks/validation.py: kubernetes-validate)."""
    return kubernetes_version_problems(
        config.cluster.kubernetes_version,
        isinstance(config.cluster, EksClusterConfig),
        catalog,
        f"{KEY_PREFIX}cluster.kubernetesVersion",
    )


def kubernetes_version_problems(version: str, created: bool, catalog: Catalog, key: str) -> list[Problem]:
    """`version` of a cluster the program creates (`created`) or one that exists, under `key`."""
    if created and version not in catalog.addon_versions:
        return [
            Problem(
                key,
                f"EKS add-on versions are pinned for {', '.join(catalog.addon_versions)} (configs/eks-addons.yaml); "
                f"pin them for {version} there first",
            )
        ]
    validated = validated_kubernetes_versions()
    if version in validated:
        return []
    return [
        Problem(
            key,
            f"Kubernetes {version} is not one this program can validate objects for: {validated[0]} to "
            f"{validated[-1]} (the schemas of kubernetes-validate {kubernetes_validate.__version__}, "
            "requirements.txt); set the cluster's own minor version (kubectl version: Server Version)",
        )
    ]


@functools.cache
def validated_kubernetes_versions() -> tuple[str, ...]:
    """The minor versions kubernetes-validate has strict schemas for, oldest first ("1.25", ...)."""
    schemas = kubernetes_validate.utils
    minors = {schemas.major_minor(version) for version in schemas.all_versions()}
    return tuple(sorted((str(minor) for minor in minors), key=_minor))


def aws_problems(config: StackConfig, region: str | None) -> list[Problem]:
    """aws:region on every cluster kind where it is given; the availability zones and the system
    instance type of a stack that creates its cluster on EKS, as AWS names them
    (core/inputs/aws_values.py): an existing cluster's AWS side is not the program's to create.
    Without a region (tests of the core alone) only the instance type."""
    cluster = config.cluster
    if not isinstance(cluster, EksClusterConfig):
        refused = region and aws_values.one_of(
            region, aws_values.regions("ec2"), "regions botocore's endpoint data has EC2 in"
        )
        return [Problem(REGION_KEY, refused)] if refused else []
    system = aws_values.instance_type_problem(
        f"{KEY_PREFIX}cluster.systemNodes.instanceType", cluster.system_nodes.instance_type
    )
    problems = [system] if system else []
    if not region:
        return problems
    problems += eks_region_problems(region, REGION_KEY)
    zones = {
        f"{KEY_PREFIX}nodePools.{name}.availabilityZone": pool.availability_zone
        for name, pool in config.node_pools.items()
    }
    zones |= {
        f"{KEY_PREFIX}cluster.network.existingPrivateSubnets.{zone}": zone
        for zone in cluster.network.existing_private_subnets or {}
    }
    if not eks_region_problems(region, REGION_KEY):
        problems += [
            found for key, zone in zones.items() if zone and (found := aws_values.zone_problem(key, zone, region))
        ]
    return problems


def eks_region_problems(region: str, key: str) -> list[Problem]:
    """A region botocore's endpoint data has no EKS in, under `key`."""
    refused = aws_values.one_of(region, aws_values.eks_regions(), "regions botocore's endpoint data has EKS in")
    return [Problem(key, refused)] if refused else []


def _deployment_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    dynamo = catalog.dynamo_versions.get(config.release.dynamo)
    problems = _backend_problems(config, catalog)
    for name, deployment in config.deployments.items():
        problems += deployment_problems(name, deployment, catalog, dynamo, config.node_pools)
    return problems


def deployment_problems(
    name: str,
    deployment: DeploymentConfig,
    catalog: Catalog,
    dynamo: DynamoVersion | None,
    node_pools: dict[str, NodePoolConfig],
) -> list[Problem]:
    """One deployment's recipe, on the release `dynamo` (None: refused with its own problem) and on one
    of `node_pools`; each problem under its stack-file key (deployments.<name>.<key>)."""
    key = f"{KEY_PREFIX}deployments.{name}"
    recipe = catalog.recipes.get(deployment.recipe)
    if recipe is None:
        return [_unknown(f"{key}.recipe", "recipe", deployment.recipe, sorted(catalog.recipes))]
    problems = []
    if dynamo and recipe.backend in dynamo.spec.unsupported_backends:
        why = dynamo.spec.unsupported_backends[recipe.backend]
        problems.append(
            Problem(f"{key}.recipe", f"recipe {deployment.recipe} does not run on Dynamo {dynamo.version}: {why}")
        )
    pool = node_pools.get(deployment.node_pool or "")
    if recipe.gpu_free:
        return problems + _gpu_free_problems(deployment, key, pool)
    if deployment.node_pool is None:
        return [*problems, Problem(f"{key}.nodePool", f"required: the node pool of {recipe.hardware} GPUs to run on")]
    if pool is None:
        return [*problems, _unknown(f"{key}.nodePool", "node pool", deployment.node_pool, node_pools)]
    if recipe.hardware != pool.hardware:
        problems.append(
            Problem(
                f"{key}.recipe",
                f"recipe {deployment.recipe} runs on {recipe.hardware}, "
                f"but node pool {deployment.node_pool} is {pool.hardware}",
            )
        )
    return problems


def _autoscaling_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    """What Dynamo's Planner needs around a graph it scales: a release whose Planner this program renders,
    the Prometheus it reads the frontend's metrics from (ours), and a pool whose node count can change.
    The bounds against the recipe and the pool's GPUs are checked when the recipe is resolved."""
    dynamo = catalog.dynamo_versions.get(config.release.dynamo)
    problems = []
    for name, deployment in config.deployments.items():
        if deployment.autoscaling is None:
            continue
        key = f"{KEY_PREFIX}deployments.{name}.autoscaling"
        if dynamo is not None and dynamo.spec.planner is None:
            with_planner = sorted(v for v, release in catalog.dynamo_versions.items() if release.spec.planner)
            problems.append(
                Problem(
                    key,
                    f"Dynamo {dynamo.version}'s Planner is not one this program renders: set release.dynamo to "
                    f"{' or '.join(with_planner)} (configs/dynamo/versions.yaml `planner`)",
                )
            )
        if not config.observability.enabled:
            problems.append(
                Problem(
                    key,
                    "the Planner queries the frontend's metrics in Prometheus (PROMETHEUS_ENDPOINT): set "
                    "observability.enabled to true (the stack's kube-prometheus-stack, which scrapes them)",
                )
            )
        pool = config.node_pools.get(deployment.node_pool) if deployment.node_pool else None
        if pool is not None and pool.capacity_type == "CAPACITY_BLOCK":
            problems.append(
                Problem(
                    key,
                    f"node pool {deployment.node_pool} runs in a Capacity Block, a fixed number of nodes paid for "
                    "up front: nothing is saved by scaling within it; give the deployment a fixed replicas instead",
                )
            )
    return problems


def _spot_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    """An elastic pool on Spot loses a node at two minutes' notice, while a worker's replacement loads its
    weights for 15-30 minutes ([dynamo-recipe-gptoss]): allowed only where every recipe on the pool says why
    it can lose a worker (its `toleratesInterruption`)."""
    problems = []
    for name, pool in config.node_pools.items():
        if pool.scaling is None or pool.capacity_type != "SPOT":
            continue
        intolerant = sorted(
            {
                deployment.recipe
                for deployment in config.deployments.values()
                if deployment.node_pool == name
                and (recipe := catalog.recipes.get(deployment.recipe)) is not None
                and recipe.tolerates_interruption is None
            }
        )
        if intolerant:
            problems.append(
                Problem(
                    f"{KEY_PREFIX}nodePools.{name}.capacityType",
                    f"SPOT, but recipe {', '.join(intolerant)} does not tolerate interruption: Spot reclaims a "
                    "node at two minutes' notice, failing its requests in flight, and a replacement worker loads "
                    "its weights for 15-30 minutes; use ON_DEMAND (a recipe that tolerates it says why in "
                    "toleratesInterruption)",
                )
            )
    return problems


def _cold_start_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    """A graph on an elastic pool may wait for its nodes to start before its image pull and weight load
    (configs/karpenter.yaml coldStart): `pulumi up` must wait for it that long."""
    problems = []
    for name, deployment in config.deployments.items():
        pool = config.node_pools.get(deployment.node_pool or "")
        recipe = catalog.recipes.get(deployment.recipe)
        if pool is None or pool.scaling is None or recipe is None:
            continue
        weights = not catalog.backends[recipe.backend].spec.simulated
        fewest, most = catalog.karpenter.cold_start_minutes(weights)
        if deployment.ready_timeout_minutes < most:
            problems.append(
                Problem(
                    f"{KEY_PREFIX}deployments.{name}.readyTimeoutMinutes",
                    f"{deployment.ready_timeout_minutes}, but on elastic pool {deployment.node_pool} a worker may "
                    f"wait {fewest:g}-{most:g} minutes before it serves (a node's start, then the image pull and "
                    f"weight load: configs/karpenter.yaml coldStart, published figures): give at least "
                    f"{math.ceil(most)}",
                )
            )
    return problems


def model_limit_problems(name: str, deployment: DeploymentConfig, catalog: Catalog) -> list[Problem]:
    """Engine settings that bound one sequence (the backend's `sequence_fields`, e.g. TensorRT-LLM's
    max_seq_len) within the model's context (configs/model.yaml maxPositionEmbeddings): a deployment's
    overrides, and where they leave the field alone, the recipe's own value."""
    model, limit = catalog.model.name, catalog.model.max_position_embeddings
    recipe = catalog.recipes.get(deployment.recipe)
    if recipe is None:  # refused with its own problem
        return []
    problems = []
    fields: dict[str, str] = getattr(catalog.backends[recipe.backend], "sequence_fields", {})
    key, single = f"{KEY_PREFIX}deployments.{name}", len(recipe.workers) == 1
    for role, spec in recipe.workers.items():
        overrides = deployment.overrides if single else deployment.overrides.get(role)
        overrides = overrides if isinstance(overrides, dict) else {}  # else refused as a malformed role
        for field, why in fields.items():
            given = field in overrides
            value = overrides[field] if given else spec.engine.get(field)
            if isinstance(value, bool) or not isinstance(value, int) or value <= limit:
                continue  # within the context, unset, or not a number (refused by the field check)
            over = f"more than {model}'s context of {limit} tokens (maxPositionEmbeddings, configs/model.yaml)"
            if given:
                where = f"{key}.overrides" + ("" if single else f".{role}")
                problems.append(Problem(f"{where}.{field}", f"{value} is {over}: at most {limit}; {why}"))
            else:
                problems.append(
                    Problem(
                        f"{key}.recipe",
                        f"recipe {deployment.recipe} sets {field} {value} for its {role} workers, {over}: "
                        f"override it with at most {limit}; {why}",
                    )
                )
    return problems


def loads_weights(config: StackConfig, catalog: Catalog) -> bool:
    """Whether any deployment's engine loads the model's weights (else the cache needs its tokenizer only)."""
    recipes = [catalog.recipes.get(deployment.recipe) for deployment in config.deployments.values()]
    return not recipes or any(not catalog.backends[recipe.backend].spec.simulated for recipe in recipes if recipe)


def _gpu_free_problems(deployment: DeploymentConfig, key: str, pool: NodePoolConfig | None) -> list[Problem]:
    """A recipe without GPUs runs on CPU nodes: GPU keys are mistakes, not preferences. Its nodePool, when
    given, is a cpu pool's."""
    reason = f"recipe {deployment.recipe} needs no GPU: its workers run on CPU nodes"
    given = [
        (
            "nodePool",
            deployment.node_pool is not None and (pool is None or pool.hardware != CPU_ONLY),
            "leave it out (the system nodes, or any node of an existing cluster), or name a pool of hardware cpu",
        ),
        ("gpus", deployment.gpus is not None, "leave it out"),
        (
            "benchmark.concurrencyPerGpu",
            deployment.benchmark.concurrency_per_gpu is not None,
            "leave it out: the recipe's concurrency is per replica",
        ),
    ]
    return [Problem(f"{key}.{name}", f"{reason}; {fix}") for name, is_set, fix in given if is_set]


def _cache_size_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    """The cache holds the model's checkpoint (configs/model.yaml): smaller, the download fails
    after filling it, an hour into `pulumi up`. A stack whose engines load no weights (the mocker)
    caches the tokenizer only."""
    if not loads_weights(config, catalog):
        return []
    return cache_size_problems(config.model_cache.size, catalog, f"{KEY_PREFIX}modelCache.size")


def cache_size_problems(size: str, catalog: Catalog, key: str) -> list[Problem]:
    """A cache of `size` too small for the model's checkpoint, under `key`."""
    needed = catalog.model.checkpoint_gib
    if gibibytes(size) >= needed:
        return []
    return [
        Problem(
            key,
            f"{size} cannot hold {catalog.model.name}'s {needed} GiB checkpoint: at least "
            f"{math.ceil(needed)}Gi (the default, 400Gi, leaves room for a second revision)",
        )
    ]


def _endpoint_problems(config: StackConfig) -> list[Problem]:
    with_nlb = has_load_balancer_controller(config)
    return [
        problem
        for name, deployment in config.deployments.items()
        for problem in endpoint_problems(name, deployment.endpoint, with_nlb)
    ]


def endpoint_problems(name: str, endpoint: EndpointConfig, with_nlb: bool) -> list[Problem]:
    """A public gateway needs an NLB and TLS; an NLB needs the AWS Load Balancer Controller (`with_nlb`:
    the program installs it on a created cluster; an existing one says it has it); settings of a gateway
    or an NLB mean nothing without one. Each problem under its stack-file key."""
    problems = []
    key = f"{KEY_PREFIX}deployments.{name}.endpoint"
    if endpoint.exposure == "cluster":
        return [
            Problem(f"{key}.{field}", "only with exposure internal or public (a gateway); this endpoint is cluster")
            for field, value in (
                ("hostname", endpoint.hostname),
                ("certificateArn", endpoint.certificate_arn),
                ("clientRateLimits", endpoint.client_rate_limits),
                ("allowedCidrs", endpoint.allowed_cidrs),
            )
            if value
        ]
    if not with_nlb:
        no_nlb = (
            "this existing cluster has no AWS Load Balancer Controller (cluster.loadBalancerController: false), "
            "so the gateway gets no NLB"
        )
        if endpoint.exposure == "public":
            problems.append(
                Problem(
                    f"{key}.exposure",
                    f"public needs an NLB: {no_nlb}; set cluster.loadBalancerController: "
                    "true if the cluster runs the controller, or use internal",
                )
            )
        problems += [
            Problem(f"{key}.{field}", f"only with an NLB: {no_nlb}")
            for field, value in (
                ("certificateArn", endpoint.certificate_arn),
                ("allowedCidrs", endpoint.allowed_cidrs),
            )
            if value
        ]
    if endpoint.exposure == "public":
        problems += [
            Problem(f"{key}.{field}", f"required with exposure public: {why}")
            for field, value, why in (
                ("certificateArn", endpoint.certificate_arn, "an ACM certificate ARN; TLS ends on the NLB"),
                ("hostname", endpoint.hostname, "the DNS name clients use, which the certificate covers"),
            )
            if value is None
        ]
    elif endpoint.certificate_arn and not endpoint.hostname:
        # Clients (and the smoke test) check the certificate against the name they call; an ACM
        # certificate never covers the NLB's own *.elb.amazonaws.com name.
        problems.append(
            Problem(
                f"{key}.hostname",
                "required with certificateArn: the DNS name clients use, which the certificate covers",
            )
        )
    return problems


def _endpoint_warnings(config: StackConfig) -> list[str]:
    cluster = config.cluster
    if not has_load_balancer_controller(config):
        return []
    if isinstance(cluster, EksClusterConfig) and not cluster.network.existing_private_subnets:
        return []  # the VPC we create: its CIDR is the default (core/render/gateway.source_ranges)
    where = "this existing cluster's VPC" if isinstance(cluster, ExistingClusterConfig) else "the existing subnets' VPC"
    return [
        warning
        for name, deployment in config.deployments.items()
        for warning in open_nlb_warnings(name, deployment.endpoint, where)
    ]


def open_nlb_warnings(name: str, endpoint: EndpointConfig, where: str) -> list[str]:
    """An internal NLB in a VPC the program did not make (`where`), without allowedCidrs: the AWS Load
    Balancer Controller's default source range is 0.0.0.0/0, internal or not (core/render/gateway.py
    [lbc-nlb]), so every network routed to the VPC reaches it, with only the API keys in the way."""
    if endpoint.exposure != "internal" or endpoint.allowed_cidrs:
        return []
    return [
        f"{KEY_PREFIX}deployments.{name}.endpoint.allowedCidrs: NOT SET, so the internal NLB admits 0.0.0.0/0 "
        "(the AWS Load Balancer Controller's default source range, internal or not): ANYTHING ROUTED TO "
        f"{where.upper()} reaches it (peered VPCs, Transit Gateway, VPN, Direct Connect), with only the API keys "
        "in the way; the program does not know the VPC's CIDR to narrow it. Set allowedCidrs to the VPC's CIDR "
        "(aws ec2 describe-vpcs) or to its clients' networks"
    ]


def has_load_balancer_controller(config: StackConfig) -> bool:
    """The cluster turns a gateway's LoadBalancer Service into an NLB: ours (created) or the user's."""
    cluster = config.cluster
    return isinstance(cluster, EksClusterConfig) or cluster.load_balancer_controller


def _backend_problems(config: StackConfig, catalog: Catalog) -> list[Problem]:
    """One backend per stack: every worker runs the release's one runtime image, which carries one
    serving engine (release.runtimeImage)."""
    backends = {
        name: catalog.recipes[deployment.recipe].backend
        for name, deployment in config.deployments.items()
        if deployment.recipe in catalog.recipes
    }
    first = next(iter(backends.items()), None)
    return [
        Problem(
            f"{KEY_PREFIX}deployments.{name}.recipe",
            f"recipe {config.deployments[name].recipe} runs on the {backend} backend, but deployment {first[0]}'s"
            f" runs on {first[1]}: a stack's deployments share release.runtimeImage, so they share one backend",
        )
        for name, backend in backends.items()
        if first and backend != first[1]
    ]


def _unknown(key: str, what: str, value: str, known: Iterable[str]) -> Problem:
    known = list(known)
    closest = closest_name(value, known)
    hint = f"; did you mean {closest!r}?" if closest else ""
    return Problem(key, f"unknown {what} {value!r}; one of {', '.join(known)}{hint}")
