"""Each public block's own pipeline, beside the stack's (core/stack.py): the block's arguments -> the
objects it makes, checked, with every problem keyed by the argument it comes from.

A block's arguments are fields of the stack config's part models (core/inputs/config.py), each checked as
the field it sets (core/schema.py: from_arguments, field_argument), and a few of its own. What a block
must know of the cluster it is told by its arguments, never made up. The stages are the stack's: its
rules, render functions and checks, each called with the part it is about.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from gpt_oss_infra.core.checks import scheduling
from gpt_oss_infra.core.checks.stack_checks import (
    api_key_problems,
    network_policy_warnings,
    object_pods,
    schema_problems,
    undeclared_platform_values,
)
from gpt_oss_infra.core.errors import ConfigError, Problem, refuse
from gpt_oss_infra.core.inputs import aws_values
from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, Catalog, recipe_from_object
from gpt_oss_infra.core.inputs.config import (
    KEY_PREFIX,
    DeploymentConfig,
    EksClusterConfig,
    EndpointConfig,
    ExistingClusterConfig,
    ModelCacheConfig,
    NetworkPoliciesConfig,
    NodePoolConfig,
    PlatformConfig,
    Release,
    StackConfig,
)
from gpt_oss_infra.core.inputs.rules import (
    cache_size_problems,
    deployment_problems,
    eks_region_problems,
    endpoint_problems,
    existing_storage_needs_a_class,
    kubernetes_version_problems,
    model_limit_problems,
    nats_needs_block_storage,
    open_nlb_warnings,
    pool_problems,
    release_warnings,
    runtime_image_problems,
    unsupported_release,
)
from gpt_oss_infra.core.inputs.types import DeploymentName, DnsLabel
from gpt_oss_infra.core.mappings import renamed_words
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.render import manifests, ownership, platform
from gpt_oss_infra.core.render.aws.account import AccountFacts
from gpt_oss_infra.core.render.cluster_plan import GpuGroupPlan, gpu_group_plan
from gpt_oss_infra.core.render.gateway import GatewaySoftware, cluster_gateway_software
from gpt_oss_infra.core.render.platform import PlatformObjects
from gpt_oss_infra.core.render.stack_objects import (
    ModelCacheObjects,
    Serving,
    ServingContext,
    model_cache_guards,
    model_cache_objects,
    on_callers_file_system,
    serving_of,
    teardown_guards,
)
from gpt_oss_infra.core.render.teardown import Teardown
from gpt_oss_infra.core.resolve import sizing
from gpt_oss_infra.core.resolve.efa import pool_gets_efa
from gpt_oss_infra.core.resolve.recipes import NodePool, ResolvedDeployment, resolve_pool
from gpt_oss_infra.core.resolve.resolution import Resolution, resolve_on
from gpt_oss_infra.core.schema import StrictModel, closest_name, field_argument, from_arguments, problems_from
from gpt_oss_infra.core.yaml_files import read_yaml

# What a block uses for an argument left out (configs/components.yaml).
DEFAULTS: dict[str, Any] = read_yaml(CONFIG_DIR / "components.yaml")
# The arguments blocks must agree on, by their default's key there.
_SHARED_DEFAULTS = {"dynamo_release": "dynamoRelease", "model_revision": "modelRevision"}


def shared_argument(arguments: Mapping[str, Any], argument: str) -> str:
    """A block's dynamo_release or model_revision as given, else the default every block uses: what its
    DynamoPlatform, ModelCache and GptOssDeployment compare."""
    value: str = arguments.get(argument) or DEFAULTS[_SHARED_DEFAULTS[argument]]
    return value


# The stack config's cluster.kubernetesVersion default (every cluster kind's): a GpuNodePool is not told its
# cluster's version, whose AMI its nodes follow.
DEFAULT_KUBERNETES_VERSION: str = EksClusterConfig.model_fields["kubernetes_version"].default
Part = TypeVar("Part", bound=StrictModel)
T = TypeVar("T")

# The fields of a stack config part its block does not offer as arguments, and why.
NOT_OFFERED: dict[type[StrictModel], set[str]] = {
    # A created pool's own label; the catalog's price; a managed node group's size is fixed (an elastic pool's
    # Karpenter objects are the stack's, cluster kind eks).
    NodePoolConfig: {"node_selector", "price_per_node_hour", "scaling"},
    PlatformConfig: {"nats", "grove", "kai_scheduler"},  # the release's own choice of the chart's optional parts
    ModelCacheConfig: {"keep_on_destroy"},  # the file system is the caller's: the block deletes none
    # The stack's aiperf Job and Prometheus alerts; autoscaling: its Planner reads the stack's Prometheus
    # (observability), which no block makes.
    DeploymentConfig: {"benchmark", "alerts", "autoscaling"},
    EndpointConfig: {"rate_limit", "client_rate_limits"},  # offered per minute: (client_)requests_per_minute
}


# The blocks' defaults where they differ from the stack config part's: a ModelCache block uses the cluster's
# StorageClass (the stack makes its own EFS file system).
OWN_DEFAULTS: dict[type[StrictModel], dict[str, Any]] = {ModelCacheConfig: {"storage": "existing"}}


def offered(model: type[StrictModel]) -> list[str]:
    """The fields of the stack config part `model` its block takes as arguments, named as the fields."""
    return [name for name in model.model_fields if name not in NOT_OFFERED.get(model, set())]


def whole(value: Any) -> Any:
    """Whole numbers as ints, in lists and dicts too: numbers from other Pulumi languages arrive as
    floats (2.0), which TensorRT-LLM's integer fields and the recipe model refuse."""
    if isinstance(value, dict):
        return {key: whole(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole(item) for item in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


class Arguments:
    """A block's arguments, each checked as the stack config field it sets, its problems collected under
    the argument's name until `refuse`."""

    def __init__(self, given: dict[str, Any]):
        self.given = given
        self.problems: list[Problem] = []

    def field(self, model: type[StrictModel], field: str, argument: str, default: Any = None) -> Any:
        """The argument `argument`, checked as `model`'s field `field`; where it is not given (or is bad,
        refused at `refuse`), `default`, else the field's own default (the stack config's)."""
        fallback = default if default is not None else model.model_fields[field].default
        if self.given.get(argument) is None:
            return fallback
        try:
            return field_argument(model, field, argument, self.given[argument])
        except ConfigError as error:
            self.problems += error.problems
            return fallback

    def name(self, argument: str, value: str, kind: Any) -> None:
        """A name that names objects (the block's own `name`, or `node_pool`), checked as the stack config
        checks such a name (`kind`: DnsLabel, DeploymentName), under `argument`."""
        try:
            TypeAdapter(kind).validate_python(value)
        except ValidationError as error:
            self.problems += problems_from(error, argument)

    def part(self, model: type[Part], defaults: dict[str, Any] | None = None) -> Part:
        """The stack config part `model` from the arguments named as its fields (those its block offers),
        `defaults` the block's own where they differ from the stack config's; or ConfigError with its
        problems and every one so far."""
        given = {name: self.given[name] for name in offered(model) if self.given.get(name) is not None}
        try:
            return from_arguments(model, (defaults or {}) | given)
        except ConfigError as error:
            self.problems += error.problems
            raise ConfigError(self.problems) from None

    def decided(self, decide: Callable[[], T]) -> T:
        """`decide()`, or ConfigError with its problems and every one so far."""
        try:
            return decide()
        except ConfigError as error:
            raise ConfigError(self.problems + error.problems) from None

    def refuse(self, problems: list[Problem] | None = None) -> None:
        """ConfigError with every problem so far and `problems`, if there are any."""
        self.problems += problems or []
        refuse(self.problems)


def _release_problems(release: str, kubernetes_version: str, catalog: Catalog) -> list[Problem]:
    """A Dynamo release and a cluster version (an existing cluster's: the block's) this program cannot serve."""
    return unsupported_release(release, catalog, "dynamo_release") + kubernetes_version_problems(
        kubernetes_version, False, catalog, "kubernetes_version"
    )


@dataclass(frozen=True)
class PlatformBlock:
    """What a DynamoPlatform makes."""

    objects: PlatformObjects
    gateway: GatewaySoftware | None  # Envoy Gateway, with `gateway`
    guards: Teardown | None  # what its `destroy` waits for: its volumes, and its gateway's NLBs


def dynamo_platform(arguments: dict[str, Any], catalog: Catalog, with_ngc_key: bool, owner: str) -> PlatformBlock:
    """DynamoPlatform: the platform of one Dynamo release on a cluster the program does not describe (and,
    with `gateway`, Envoy Gateway), or ConfigError keyed by argument. `owner`: the Pulumi project and
    stack (ownership.owner_of) its namespaces and cluster-wide objects are marked as made by, as a
    stack's are."""
    given = Arguments(arguments)
    release = given.field(Release, "dynamo", "dynamo_release", DEFAULTS["dynamoRelease"])
    kubernetes_version = given.field(ExistingClusterConfig, "kubernetes_version", "kubernetes_version")
    block_storage_class = given.field(ExistingClusterConfig, "block_storage_class_name", "block_storage_class")
    with_nlb = given.field(ExistingClusterConfig, "load_balancer_controller", "load_balancer_controller")
    settings = given.part(PlatformConfig)
    given.refuse()
    given.refuse(_release_problems(release, kubernetes_version, catalog))
    dynamo = catalog.dynamo_versions[release]
    if dynamo.bundled_nats(settings.nats) and not block_storage_class:
        given.refuse([nats_needs_block_storage("block_storage_class", f"Dynamo {release}'s default")])
    values = platform.platform_values(settings, dynamo, block_storage_class, with_ngc_key)
    given.refuse(undeclared_platform_values(values, dynamo, "dynamo_release"))
    objects = platform.platform_objects(settings.namespace, dynamo, kubernetes_version, values, with_ngc_key)
    gateway = (
        cluster_gateway_software(catalog.charts, with_nlb, None, kubernetes_version)
        if arguments.get("gateway")
        else None
    )
    guards = teardown_guards(settings.namespace, kubernetes_version, gateway, None, catalog)
    given.refuse(_platform_namespace_problems(settings.namespace, gateway))
    made = [objects.namespace, objects.pull_secret, *(guards.objects() if guards else [])]
    if gateway is not None:
        made += [gateway.namespace, gateway.gateway_class]
    given.refuse(schema_problems(made, kubernetes_version, dynamo))
    return PlatformBlock(
        ownership.marked_platform(objects, owner, []),
        ownership.marked_gateway(gateway, owner, []),
        ownership.marked_teardown(guards, owner, []),
    )


@dataclass(frozen=True)
class ModelSnapshot:
    """The model revision a ModelCache downloads (render/model_cache.Snapshot)."""

    model: str
    model_revision: str


@dataclass(frozen=True)
class ModelCacheBlock:
    """What a ModelCache makes."""

    objects: ModelCacheObjects
    guards: Teardown | None  # on EFS, what its `destroy` waits for: the driver deleting its access point


def model_cache(arguments: dict[str, Any], catalog: Catalog, with_hf_token: bool, owner: str) -> ModelCacheBlock:
    """ModelCache: a namespace's cache volume and the download of the full snapshot into it (a block sees
    no deployment, and a full snapshot serves a mocker too), on an existing StorageClass or the caller's EFS
    or FSx for Lustre file system, or ConfigError keyed by argument. `owner`: as dynamo_platform's."""
    given = Arguments(arguments)
    release = given.field(Release, "dynamo", "dynamo_release", DEFAULTS["dynamoRelease"])
    revision = given.field(Release, "model_revision", "model_revision", DEFAULTS["modelRevision"])
    kubernetes_version = given.field(ExistingClusterConfig, "kubernetes_version", "kubernetes_version")
    namespace = given.field(StackConfig, "namespace", "namespace")
    cache = given.part(ModelCacheConfig, defaults=OWN_DEFAULTS[ModelCacheConfig])
    given.refuse()
    given.refuse(
        _release_problems(release, kubernetes_version, catalog)
        + existing_storage_needs_a_class(cache, "storage_class_name")
        + cache_size_problems(cache.size, catalog, "size")
        + _file_system_problems(arguments, cache.storage)
    )
    snapshot = ModelSnapshot(DEFAULTS["model"], revision)
    objects = on_callers_file_system(
        model_cache_objects(cache, namespace, snapshot, catalog, with_hf_token, weights=True)
    )
    guards = model_cache_guards(namespace, kubernetes_version, objects, catalog)
    made = [objects.storage_class, objects.persistent_volume, objects.pvc, objects.hf_token_secret]
    made += [*objects.download.objects(), *(guards.objects() if guards else [])]
    given.refuse(schema_problems(made, kubernetes_version, catalog.dynamo_versions[release]))
    return ModelCacheBlock(
        ownership.marked_model_cache(objects, owner, []), ownership.marked_teardown(guards, owner, [])
    )


# A ModelCache's arguments about the caller's file system, and the storage each is for.
_FILE_SYSTEM_ARGUMENTS = {
    "file_system_id": ["efs", "fsx-lustre"],
    "fsx_dns_name": ["fsx-lustre"],
    "fsx_mount_name": ["fsx-lustre"],
    "fsx_throughput_per_tib": ["fsx-lustre"],
}
# A file system id as botocore's models have FileSystemId (efs: its id form; the CSI drivers take no ARN).
FILE_SYSTEM_ID = {"efs": r"fs-[0-9a-f]{8,40}", "fsx-lustre": r"fs-[0-9a-f]{8,}"}


def _file_system_problems(arguments: dict[str, Any], storage: str) -> list[Problem]:
    """A file system argument given for storage it is not for (it was ignored), or a file system id that is
    not one (botocore's FileSystemId pattern); an Output is checked by AWS at `up`."""
    problems = []
    for argument, storages in _FILE_SYSTEM_ARGUMENTS.items():
        value = arguments.get(argument)
        if value is None:
            continue
        if storage not in storages:
            only = " or ".join(storages)
            problems.append(Problem(argument, f"only with storage {only} (storage is {storage}): leave it out"))
        elif (
            argument == "file_system_id" and isinstance(value, str) and not re.fullmatch(FILE_SYSTEM_ID[storage], value)
        ):
            problems.append(Problem(argument, f"{value!r} is not a file system id ({FILE_SYSTEM_ID[storage]})"))
    return problems


@dataclass(frozen=True)
class PoolBlock:
    """What a GpuNodePool decides before EC2 is asked: its pool, and whether its nodes get EFA."""

    pool: NodePool
    efa: bool
    environment: str  # tagged on the node group


def gpu_node_pool(name: str, arguments: dict[str, Any], catalog: Catalog, region: str) -> PoolBlock:
    """GpuNodePool: one GPU node group of an EKS cluster of the program's in `region`, or ConfigError keyed
    by argument. A pool decides its EFA alone (it sees no deployment): its `efa`, else none."""
    given = Arguments(arguments)
    given.name("name", name, DnsLabel)  # the node group's, its labels' and its resources' names
    environment = given.field(StackConfig, "environment", "environment", DEFAULTS["environment"])
    settings = given.part(NodePoolConfig)
    given.refuse(eks_region_problems(region, "region"))
    given.refuse([Problem("nodes", "required key is missing")] if settings.nodes is None else [])
    if settings.hardware == CPU_ONLY:  # a cpu pool is elastic only (scaling, Karpenter), which this block is not
        gpus = ", ".join(catalog.hardware)
        cpu_pool = f"{CPU_ONLY!r} is a stack's elastic pool (Karpenter's), which GpuNodePool does not make"
        given.refuse([Problem("hardware", f"{cpu_pool}; one of {gpus}")])
    zone = settings.availability_zone
    outside = aws_values.zone_problem("availability_zone", zone, region) if zone else None
    given.refuse([outside] if outside else [])
    # The cluster's Kubernetes version is not the pool's to say: its AMI follows the cluster's.
    problems = pool_problems(name, settings, catalog, created=True, kubernetes_version=DEFAULT_KUBERNETES_VERSION)
    given.refuse(pool_arguments(problems, name))
    pool = resolve_pool(name, settings, catalog)
    return PoolBlock(pool, pool_gets_efa(pool, wanted_by_deployments=False), environment)


def gpu_node_group(block: PoolBlock, facts: AccountFacts) -> GpuGroupPlan:
    """The pool's node group as EC2's `facts` allow it, or ConfigError keyed by argument."""
    group = gpu_group_plan(block.pool, block.efa, facts)
    if group.problems:
        raise ConfigError(pool_arguments(group.problems, block.pool.name))
    return group


def pool_arguments(problems: list[Problem], pool: str) -> list[Problem]:
    """Problems the stack's stages key under nodePools.<pool>, named as GpuNodePool's arguments."""
    return as_arguments(problems, f"{KEY_PREFIX}nodePools.{pool}", NodePoolConfig)


def as_arguments(problems: list[Problem], prefix: str, part: type[StrictModel]) -> list[Problem]:
    """Problems the stack's stages key by stack-file key under `prefix` (a part of type `part`), each named
    as the block's argument (argument_named), and the part's keys their messages mention named so too."""
    renamed = argument_names(part)
    return [
        Problem(argument_named(problem.key, prefix, part), renamed_words(problem.message, renamed, after_dots=False))
        for problem in problems
    ]


def argument_names(part: type[StrictModel]) -> dict[str, str]:
    """The stack-file keys of the fields a part's block offers that are not also their argument names -> the
    argument names (capacityType -> capacity_type)."""
    fields = part.model_fields
    return {alias: name for name in offered(part) if (alias := fields[name].alias) and alias != name}


def argument_named(key: str, prefix: str, part: type[StrictModel], within: str = "") -> str:
    """A stack-file key under `prefix` (a part of type `part`) as the block's argument, `within` the one that
    holds the part: the field its key names (fsxThroughputPerTiB: fsx_throughput_per_tib); else the key."""
    if not key.startswith(f"{prefix}."):
        return key
    first, dot, rest = key.removeprefix(f"{prefix}.").partition(".")
    arguments = {field.alias or name: name for name, field in part.model_fields.items()}
    return f"{within}{arguments[first]}{dot}{rest}" if first in arguments else key


@dataclass(frozen=True)
class PoolFacts:
    """What a GpuNodePool the program made tells a GptOssDeployment that names it (`node_pool`)."""

    hardware: str
    nodes: int
    labels: dict[str, str]  # the labels its nodes carry, which the deployment's workers select
    efa: bool  # whether its nodes have EFA interfaces, which the deployment's workers may then ask for


@dataclass(frozen=True)
class DeploymentBlock:
    """What a GptOssDeployment makes, and what it warns about."""

    serving: Serving
    warnings: list[str]
    on_gpu_node_pool: bool  # on a GpuNodePool of the program's, where the program's next deployments go beside it


RECIPE_OBJECT = "recipe_definition"  # the argument that gives a recipe as an object
# The endpoint argument's rate limits, per minute, and the EndpointConfig fields they set.
_PER_MINUTE = {"requests_per_minute": "rate_limit", "client_requests_per_minute": "client_rate_limits"}
# Stack-file keys a deployment's problems and warnings mention, as GptOssDeployment's arguments.
_MENTIONED = {
    **argument_names(DeploymentConfig),
    **argument_names(EndpointConfig),
    **{  # the endpoint's rate limits are offered per minute (_PER_MINUTE)
        EndpointConfig.model_fields[field].alias or field: argument for argument, field in _PER_MINUTE.items()
    },
    **{  # the release block's keys, as they are named in messages (release.dynamo)
        f"release.{Release.model_fields[field].alias or field}": argument
        for field, argument in (("dynamo", "dynamo_release"), ("runtime_image", "runtime_image"))
    },
    f"cluster.{ExistingClusterConfig.model_fields['load_balancer_controller'].alias}": "load_balancer_controller",
    f"cluster.{ExistingClusterConfig.model_fields['kubernetes_version'].alias}": "kubernetes_version",
    "apiKeys": "api_keys",
    "nodeSelector": "node_selector",  # the deployment's node pool's, which the block takes as node_selector
}


def gpt_oss_deployment(
    name: str,
    arguments: dict[str, Any],
    catalog: Catalog,
    pools: dict[str, PoolFacts],
    with_hf_token: bool,
    clients: list[str],
    beside: dict[str, list[ResolvedDeployment]] | None = None,
) -> DeploymentBlock:
    """GptOssDeployment: one serving graph on the GPU nodes `node_pool` names (a GpuNodePool of the program's,
    one of `pools`) or `node_selector` selects, on a cluster the program does not describe; or ConfigError
    keyed by argument. `clients`: the API keys' client names; `beside`: the program's deployments made so far
    on each of its GpuNodePools, which this one is placed together with, as a stack places a pool's."""
    given = Arguments(arguments)
    settings = _deployment_settings(name, given, catalog, pools)
    given.refuse(_deployment_rule_problems(settings) + _without_an_endpoint(arguments, settings.deployment))
    return _deployment_made(settings, with_hf_token, clients, (beside or {}).get(settings.pool_name, []))


@dataclass(frozen=True)
class _DeploymentSettings:
    """A GptOssDeployment's arguments, checked field by field: its part of a stack config, and its facts."""

    name: str
    catalog: Catalog  # with the deployment's own recipe, where it gives one as an object
    deployment: DeploymentConfig
    release: Release
    kubernetes_version: str
    namespace: str
    with_nlb: bool  # the cluster's load balancer controller gives a gateway an NLB
    policies: bool | None  # network_policies as given (None: on with an endpoint)
    pool_name: str
    node_pools: dict[str, NodePoolConfig]  # its GPU nodes as it sees them (none for a cpu recipe)
    on_gpu_node_pool: bool  # those nodes are a GpuNodePool of the program's
    named: _DeploymentNames


def _deployment_settings(
    name: str, given: Arguments, catalog: Catalog, pools: dict[str, PoolFacts]
) -> _DeploymentSettings:
    """The deployment's arguments, each checked as the field it sets; ConfigError with every bad one."""
    arguments = given.given
    given.name("name", name, DeploymentName)  # the graph's and every derived object's
    catalog, recipe_name = given.decided(lambda: _with_recipe(name, arguments, catalog))
    recipe = catalog.recipes.get(recipe_name) if recipe_name is not None else None
    recipe_argument = RECIPE_OBJECT if arguments.get(RECIPE_OBJECT) is not None else "recipe"
    dynamo_release = given.field(Release, "dynamo", "dynamo_release", DEFAULTS["dynamoRelease"])
    kubernetes_version = given.field(ExistingClusterConfig, "kubernetes_version", "kubernetes_version")
    namespace = given.field(StackConfig, "namespace", "namespace")
    with_nlb = given.field(ExistingClusterConfig, "load_balancer_controller", "load_balancer_controller")
    policies = given.field(NetworkPoliciesConfig, "enabled", "network_policies")
    release = _release(given, dynamo_release, recipe.backend if recipe else None, catalog)
    gpu_hardware = recipe.hardware if recipe is not None and recipe.hardware != CPU_ONLY else None
    pool_name = arguments.get("node_pool") or name
    if arguments.get("node_pool") is not None:
        given.name("node_pool", arguments["node_pool"], DnsLabel)  # its nodes' label value
    made = (
        given.decided(lambda: _named_pool(pool_name, gpu_hardware, pools, recipe_argument, arguments))
        if gpu_hardware is not None and arguments.get("node_selector") is None
        else None
    )
    # The GPU nodes as the deployment sees them: the recipe's hardware, their labels and count, their EFA.
    seen = {
        "hardware": gpu_hardware,
        "nodes": given.field(NodePoolConfig, "nodes", "pool_nodes", made.nodes if made else 1),
        "node_selector": given.field(NodePoolConfig, "node_selector", "node_selector", made.labels if made else None),
        "efa": made.efa if made else None,
    }
    deployment = _deployment_part(given, recipe_name, pool_name if gpu_hardware else arguments.get("node_pool"))
    given.refuse()
    return _DeploymentSettings(
        name=name,
        catalog=catalog,
        deployment=deployment,
        release=release,
        kubernetes_version=kubernetes_version,
        namespace=namespace,
        with_nlb=with_nlb,
        policies=policies,
        pool_name=pool_name,
        node_pools={pool_name: from_arguments(NodePoolConfig, seen)} if gpu_hardware is not None else {},
        on_gpu_node_pool=made is not None,
        named=_DeploymentNames(name, pool_name, recipe_argument, on_gpu_node_pool=made is not None),
    )


def _without_an_endpoint(arguments: dict[str, Any], deployment: DeploymentConfig) -> list[Problem]:
    """The gateway's arguments given to a deployment without one (they were ignored)."""
    if deployment.endpoint.exposure != "cluster":
        return []
    return [
        Problem(argument, "only with an endpoint (exposure internal or public), which names the gateway they are for")
        for argument in ("api_keys", "api_clients")
        if arguments.get(argument) is not None
    ]


def _deployment_rule_problems(settings: _DeploymentSettings) -> list[Problem]:
    """The stack's rules of a deployment, its release and its nodes, each problem named as an argument."""
    name, catalog, deployment, release = settings.name, settings.catalog, settings.deployment, settings.release
    dynamo = catalog.dynamo_versions.get(release.dynamo)
    problems = _release_problems(release.dynamo, settings.kubernetes_version, catalog)
    problems += runtime_image_problems(release, dynamo, "runtime_image") if dynamo else []
    # The nodes as an existing cluster's pool: labels that select them, and the hardware's minimum version.
    nodes_problems = [
        problem
        for pool, nodes in settings.node_pools.items()
        for problem in pool_problems(pool, nodes, catalog, False, settings.kubernetes_version)
    ]
    # Every problem through named.arguments, those keyed by argument already too: the keys their messages
    # mention (release.dynamo) named as the caller names them.
    return settings.named.arguments(
        problems
        + nodes_problems
        + deployment_problems(name, deployment, catalog, dynamo, settings.node_pools)
        + model_limit_problems(name, deployment, catalog)
        + endpoint_problems(name, deployment.endpoint, settings.with_nlb)
    )


def _platform_namespace_problems(namespace: str, gateway: GatewaySoftware | None) -> list[Problem]:
    """DynamoPlatform creates its namespace: not one every cluster has (it exists already), nor Envoy
    Gateway's, which `gateway` creates too (the second would fail to create, after the first was made)."""
    if namespace in ownership.CLUSTER_NAMESPACES:
        return [Problem("namespace", ownership.cluster_namespace(namespace))]
    if gateway is not None and namespace == gateway.target.namespace:
        return [
            Problem("namespace", f"{namespace} is Envoy Gateway's namespace, which gateway creates too: choose another")
        ]
    return []


def _deployment_made(
    settings: _DeploymentSettings,
    with_hf_token: bool,
    clients: list[str],
    beside: list[ResolvedDeployment],
) -> DeploymentBlock:
    """The deployment resolved on its nodes, its objects rendered and checked, and its warnings."""
    name, catalog, deployment, named = settings.name, settings.catalog, settings.deployment, settings.named
    dynamo = catalog.dynamo_versions[settings.release.dynamo]
    exposed = deployment.endpoint.exposure != "cluster"
    gateways = (
        cluster_gateway_software(catalog.charts, settings.with_nlb, None, settings.kubernetes_version)
        if exposed
        else None
    )
    if exposed:
        how = "give one per client (each value a secret)"
        refuse(named.arguments(api_key_problems([name], {name: deployment.endpoint}, clients, how)))
    pools = {pool: resolve_pool(pool, nodes, catalog) for pool, nodes in settings.node_pools.items()}
    try:
        resolved = resolve_on(pools, {name: deployment}, dynamo.version, catalog)
    except ConfigError as error:  # a worker that cannot be resolved
        raise ConfigError(named.arguments(error.problems)) from None
    refuse(named.arguments(resolved.problems))
    (this,) = resolved.deployments
    enabled = exposed if settings.policies is None else settings.policies
    context = ServingContext(
        release=settings.release,
        namespace=settings.namespace,
        weights=not this.backend.spec.simulated,  # a mocker reads the tokenizer only
        with_hf_token=with_hf_token,
        with_ngc_key=False,  # the namespace's pull secret is the caller's (its DynamoPlatform's ngc_api_key)
        prometheus_namespace=None,  # the Planner and the dashboards read a stack's Prometheus, which no block makes
        gateways=gateways,
        clients=clients,
        network_policies=enabled,  # its graph pods' (the namespace's default deny is the caller's)
    )
    serving = serving_of(this, resolved.fits[name], context, catalog)
    refuse(schema_problems(serving.objects(), settings.kubernetes_version, dynamo))
    placed, placement_warnings = _placement(serving, resolved, catalog, with_hf_token)
    refuse(named.arguments(placed))
    if settings.on_gpu_node_pool and (crowded := _crowded(this, beside)):
        refuse([crowded])
    warnings = release_warnings(dynamo, catalog, "dynamo_release")
    warnings += open_nlb_warnings(name, deployment.endpoint, "this existing cluster's VPC") if settings.with_nlb else []
    warnings += resolved.warnings + placement_warnings
    warnings += network_policy_warnings(enabled, settings.policies, existing=True, exposed=[name] if exposed else [])
    return DeploymentBlock(serving, [named.warning(text) for text in warnings], settings.on_gpu_node_pool)


def _crowded(deployment: ResolvedDeployment, beside: list[ResolvedDeployment]) -> Problem | None:
    """A deployment whose workers do not fit on its GpuNodePool beside the program's earlier deployments there
    (each fits alone), which would leave some workers Pending."""
    pool = deployment.pool
    assert pool is not None, "a deployment on a GpuNodePool"
    problems = sizing.placement_problems([*beside, deployment], {pool.name: pool})
    if not problems:
        return None
    names = ", ".join(repr(earlier.name) for earlier in beside)
    return Problem(
        "node_pool", f"GpuNodePool {pool.name!r} already runs GptOssDeployment {names}: {problems[0].message}"
    )


def _with_recipe(name: str, arguments: dict[str, Any], catalog: Catalog) -> tuple[Catalog, str | None]:
    """The catalog with the deployment's own recipe where it gives one as an object (`recipe_definition`,
    checked like a configs/recipes/ file), and the recipe's name."""
    if arguments.get(RECIPE_OBJECT) is None:
        return catalog, arguments.get("recipe")
    if arguments.get("recipe") is not None:
        raise ConfigError([Problem(RECIPE_OBJECT, "give a recipe by name (recipe) or as an object, not both")])
    recipe_name = f"{name}-recipe"
    try:
        defined = recipe_from_object(arguments[RECIPE_OBJECT], RECIPE_OBJECT, catalog)
    except ConfigError as error:
        raise ConfigError([Problem(p.key.replace(": ", "."), p.message) for p in error.problems]) from None
    return dataclasses.replace(catalog, recipes={**catalog.recipes, recipe_name: defined}), recipe_name


def _release(given: Arguments, dynamo: str, backend: str | None, catalog: Catalog) -> Release:
    """The release the deployment runs: Dynamo's, the runtime image that release publishes for the recipe's
    backend unless `runtime_image` names one, the pinned model at `model_revision`."""
    published = catalog.dynamo_versions[dynamo].spec.runtime_images if dynamo in catalog.dynamo_versions else {}
    default_image = published.get(backend or "", f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{dynamo}")
    return from_arguments(
        Release,
        {
            "dynamo": dynamo,
            "runtime_image": given.field(Release, "runtime_image", "runtime_image", default_image),
            "model": DEFAULTS["model"],
            "model_revision": given.field(Release, "model_revision", "model_revision", DEFAULTS["modelRevision"]),
        },
    )


def _named_pool(
    pool: str, hardware: str, pools: dict[str, PoolFacts], recipe_argument: str, arguments: dict[str, Any]
) -> PoolFacts:
    """The GpuNodePool `node_pool` names, made earlier by the same program, whose hardware the recipe is
    for; else refused by argument: a pool that matches nothing would leave the workers Pending. Its nodes
    are counted as it made them: pool_nodes is for nodes no GpuNodePool of the program made."""
    if pool not in pools:
        close = closest_name(pool, sorted(pools))
        made = f" (it made: {', '.join(sorted(pools))})" if pools else " (it made none)"
        hint = f": did you mean {close!r}?" if close else made
        raise ConfigError(
            [
                Problem(
                    "node_pool",
                    f"{pool!r} names no GpuNodePool of this program{hint}; make the GpuNodePool first, or give "
                    "node_selector: the labels of GPU nodes another program made",
                )
            ]
        )
    if arguments.get("pool_nodes") is not None:
        raise ConfigError(
            [
                Problem(
                    "pool_nodes",
                    f"only with node_selector, for nodes no GpuNodePool of this program made: GpuNodePool {pool!r} "
                    f"has {pools[pool].nodes}, and the placement checks count those",
                )
            ]
        )
    if pools[pool].hardware != hardware:
        raise ConfigError(
            [
                Problem(
                    recipe_argument,
                    f"the recipe is for {hardware}, but GpuNodePool {pool!r} has {pools[pool].hardware} nodes",
                )
            ]
        )
    return pools[pool]


def _deployment_part(given: Arguments, recipe: str | None, node_pool: str | None) -> DeploymentConfig:
    """The deployments.<name> part from the arguments named as its fields, the recipe's name, the pool's
    and the endpoint's per-minute rate limits (as RateLimits); or ConfigError with every problem so far."""
    settings = {field: given.given[field] for field in offered(DeploymentConfig) if given.given.get(field) is not None}
    settings |= {"recipe": recipe, "node_pool": node_pool}
    endpoint = dict(settings.get("endpoint") or {})
    for field in sorted(NOT_OFFERED[EndpointConfig] & set(endpoint)):
        given.problems.append(
            Problem(
                f"endpoint.{field}",
                "not an argument of the endpoint: give requests_per_minute or client_requests_per_minute",
            )
        )
        del endpoint[field]
    for argument, field in _PER_MINUTE.items():
        if (limit := endpoint.pop(argument, None)) is not None:
            endpoint[field] = (
                _per_minute(limit)
                if argument == "requests_per_minute"
                else ({client: _per_minute(n) for client, n in limit.items()} if isinstance(limit, dict) else limit)
            )
    if endpoint:
        settings["endpoint"] = endpoint
    try:
        return from_arguments(DeploymentConfig, {key: value for key, value in settings.items() if value is not None})
    except ConfigError as error:
        given.problems += [Problem(_per_minute_argument(p.key), p.message) for p in error.problems]
        raise ConfigError(given.problems) from None


def _per_minute(requests: Any) -> dict[str, Any]:
    return {"requests": requests, "unit": "Minute"}


def _per_minute_argument(key: str) -> str:
    """endpoint.rate_limit.requests -> endpoint.requests_per_minute: the argument that gave the limit."""
    for argument, field in _PER_MINUTE.items():
        for form in (f"endpoint.{field}.requests", f"endpoint.{field}"):
            if key == form or key.startswith(f"{form}."):
                rest = key.removeprefix(form).removesuffix(".requests")
                return f"endpoint.{argument}{rest}"
    return key


@dataclass(frozen=True)
class _DeploymentNames:
    """The stack's stages key a deployment's problems by stack-file key; the block names each argument."""

    name: str
    pool: str
    recipe_argument: str  # recipe, or recipe_definition
    on_gpu_node_pool: bool  # the pool is a GpuNodePool of the caller's (node_pool), else the deployment's own

    @property
    def pool_arguments(self) -> dict[str, str]:
        """The pool's stack-file keys the deployment's own arguments set."""
        return {"nodes": "pool_nodes", "nodeSelector": "node_selector", "hardware": self.recipe_argument}

    def argument_of(self, key: str) -> str:
        deployment, pool = f"{KEY_PREFIX}deployments.{self.name}", f"{KEY_PREFIX}nodePools.{self.pool}"
        if key in (deployment, f"{deployment}.recipe"):
            return "name" if key == deployment else self.recipe_argument
        if key == pool or key.startswith(f"{pool}."):
            field = key.removeprefix(pool).removeprefix(".").split(".")[0]
            return self.pool_arguments.get(field, "node_pool")
        if key.startswith(f"{deployment}.endpoint."):
            return _per_minute_argument(argument_named(key, f"{deployment}.endpoint", EndpointConfig, "endpoint."))
        if key.startswith(f"{KEY_PREFIX}apiKeys"):
            return "api_keys" + key.removeprefix(f"{KEY_PREFIX}apiKeys")
        if key == f"{KEY_PREFIX}cluster.kubernetesVersion":
            return "kubernetes_version"
        return argument_named(key, deployment, DeploymentConfig)

    @functools.cached_property
    def mentioned(self) -> dict[str, str]:
        """The stack-file keys a message may mention, as the caller names them: the block's arguments, and
        the keys of the deployment's node pool: a GpuNodePool's (nodePools.b200.efa -> GpuNodePool b200's
        efa), or those of the deployment's own pool that its arguments set (nodePools.<name>.nodes ->
        pool_nodes)."""
        fields = NodePoolConfig.model_fields
        if self.on_gpu_node_pool:
            pool = {
                f"nodePools.{self.pool}.{fields[f].alias or f}": f"GpuNodePool {self.pool}'s {f}"
                for f in offered(NodePoolConfig)
            }
        else:
            pool = {f"nodePools.{self.pool}.{key}": argument for key, argument in self.pool_arguments.items()}
        return _MENTIONED | pool

    def arguments(self, problems: list[Problem]) -> list[Problem]:
        return list(
            dict.fromkeys(
                Problem(self.argument_of(p.key), renamed_words(p.message, self.mentioned, after_dots=False))
                for p in problems
            )
        )

    def warning(self, text: str) -> str:
        """A stack warning ("gpt-oss-infra:<key>: ...") under the argument it is about, the keys it mentions
        named as the caller names them."""
        key, separator, rest = text.partition(": ")
        if not (key.startswith(KEY_PREFIX) and separator):
            return text
        named = {f"{KEY_PREFIX}networkPolicies.enabled": "network_policies"}.get(key) or self.argument_of(key)
        return f"{named}{separator}{renamed_words(rest, self.mentioned, after_dots=False)}"


def _placement(
    serving: Serving, resolved: Resolution, catalog: Catalog, with_hf_token: bool
) -> tuple[list[Problem], list[str]]:
    """The graph's pods and its smoke test placed on the deployment's GPU nodes and the cluster's others,
    as the scheduler would (core/checks/scheduling.py). The claim they mount, and the HF token's Secret,
    are the namespace's ModelCache's."""
    pools = [
        scheduling.gpu_pool(pool, False, resolved.efa_pools[name], catalog, "existing")
        for name, pool in resolved.pools.items()
    ]
    objects = serving.objects()
    made = {(obj["kind"], obj["metadata"]["name"]) for obj in objects}
    made |= {("PersistentVolumeClaim", manifests.MODEL_CACHE_PVC)}
    made |= {("Secret", manifests.HF_TOKEN_SECRET)} if with_hf_token else set()
    pods = object_pods(objects)
    return scheduling.placement_problems(pods, [*pools, scheduling.OTHER_NODES], made, catalog.image_platforms)
