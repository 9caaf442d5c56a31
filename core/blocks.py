"""Each public block's own pipeline, beside the stack's (core/stack.py): the block's arguments -> the
objects it makes, checked, with every problem keyed by the argument it comes from.

A block's arguments are fields of the stack config's part models (core/inputs/config.py), each checked as
the field it sets (core/schema.py: from_arguments, field_argument), and a few of its own. What a block
must know of the cluster it is told by its arguments, never made up. The stages are the stack's: its
rules, render functions and checks, each called with the part it is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from gpt_oss_infra.core.checks.stack_checks import undeclared_platform_values
from gpt_oss_infra.core.checks.validation import object_problems
from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs import aws_values
from gpt_oss_infra.core.inputs.block_args import NOT_OFFERED
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import (
    KEY_PREFIX,
    ExistingClusterConfig,
    ModelCacheConfig,
    NodePoolConfig,
    PlatformConfig,
    Release,
    StackConfig,
)
from gpt_oss_infra.core.inputs.rules import (
    cache_size_problems,
    eks_region_problems,
    existing_storage_needs_a_class,
    kubernetes_version_problems,
    nats_needs_block_storage,
    pool_problems,
    unsupported_release,
)
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.render import ownership, platform
from gpt_oss_infra.core.render.aws.account import AccountFacts
from gpt_oss_infra.core.render.cluster_plan import GpuGroupPlan, gpu_group_plan
from gpt_oss_infra.core.render.gateway import GatewaySoftware, cluster_gateway_software
from gpt_oss_infra.core.render.platform import PlatformObjects
from gpt_oss_infra.core.render.stack_objects import (
    ModelCacheObjects,
    model_cache_guards,
    model_cache_objects,
    on_callers_file_system,
    teardown_guards,
)
from gpt_oss_infra.core.render.teardown import Teardown
from gpt_oss_infra.core.resolve.efa import pool_gets_efa
from gpt_oss_infra.core.resolve.recipes import NodePool, resolve_pool
from gpt_oss_infra.core.schema import StrictModel, field_argument, from_arguments
from gpt_oss_infra.core.yaml_files import read_yaml

# What a block uses for an argument left out (configs/components.yaml).
DEFAULTS: dict[str, Any] = read_yaml(CONFIG_DIR / "components.yaml")
DEFAULT_KUBERNETES_VERSION: str = ExistingClusterConfig.model_fields["kubernetes_version"].default
Part = TypeVar("Part", bound=StrictModel)


class Arguments:
    """A block's arguments, each checked as the stack config field it sets, its problems collected under
    the argument's name until `refuse`."""

    def __init__(self, given: dict[str, Any]):
        self.given = given
        self.problems: list[Problem] = []

    def field(self, model: type[StrictModel], field: str, argument: str, default: Any = None) -> Any:
        """The argument `argument`, checked as `model`'s field `field`; `default` where it is not given.
        Without a default of its own, the field's (the stack config's)."""
        if self.given.get(argument) is None:
            return default if default is not None else model.model_fields[field].default
        try:
            return field_argument(model, field, argument, self.given[argument])
        except ConfigError as error:
            self.problems += error.problems
            return default

    def part(self, model: type[Part], defaults: dict[str, Any] | None = None) -> Part:
        """The stack config part `model` from the arguments named as its fields (those its block offers:
        NOT_OFFERED), `defaults` the block's own where they differ from the stack config's; or ConfigError
        with its problems and every one so far."""
        offered = [name for name in model.model_fields if name not in NOT_OFFERED.get(model, set())]
        given = {name: self.given[name] for name in offered if self.given.get(name) is not None}
        try:
            return from_arguments(model, (defaults or {}) | given)
        except ConfigError as error:
            self.problems += error.problems
            raise ConfigError(self.problems) from None

    def refuse(self, problems: list[Problem] | None = None) -> None:
        """ConfigError with every problem so far and `problems`, if there are any."""
        self.problems += problems or []
        if self.problems:
            raise ConfigError(self.problems)


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
    settings = given.part(PlatformConfig)
    given.refuse()
    given.refuse(
        unsupported_release(release, catalog, "dynamo_release")
        + kubernetes_version_problems(kubernetes_version, False, catalog, "kubernetes_version")
    )
    dynamo = catalog.dynamo_versions[release]
    if dynamo.bundled_nats(settings.nats) and not block_storage_class:
        given.refuse([nats_needs_block_storage("block_storage_class", f"Dynamo {release}'s default")])
    values = platform.platform_values(settings, dynamo, block_storage_class, with_ngc_key)
    given.refuse(undeclared_platform_values(values, dynamo, "dynamo_release"))
    objects = platform.platform_objects(settings.namespace, dynamo, kubernetes_version, values, with_ngc_key)
    gateway = (
        cluster_gateway_software(catalog.charts, bool(arguments.get("load_balancer_controller")), None)
        if arguments.get("gateway")
        else None
    )
    guards = teardown_guards(settings.namespace, kubernetes_version, gateway, None, catalog)
    made = [objects.namespace, objects.pull_secret, *(guards.objects() if guards else [])]
    if gateway is not None:
        made += [gateway.namespace, gateway.gateway_class]
    given.refuse(_object_problems(made, kubernetes_version, dynamo))
    return PlatformBlock(
        ownership.marked_platform(objects, owner, []),
        ownership.marked_gateway(gateway, owner, []),
        ownership.marked_teardown(guards, owner, []),
    )


def _object_problems(
    objects: list[dict[str, Any] | None], kubernetes_version: str, dynamo: DynamoVersion
) -> list[Problem]:
    """Every object against its schema, keyed by the object (a problem of ours, not of an argument)."""
    return [
        Problem(f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}", line)
        for obj in objects
        if obj
        for line in object_problems(obj, kubernetes_version, dynamo)
    ]


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
    cache = given.part(ModelCacheConfig, defaults={"storage": "existing"})  # the cluster's StorageClass by default
    given.refuse()
    given.refuse(
        unsupported_release(release, catalog, "dynamo_release")
        + kubernetes_version_problems(kubernetes_version, False, catalog, "kubernetes_version")
        + existing_storage_needs_a_class(cache, "storage_class_name")
        + cache_size_problems(cache.size, catalog, "size")
    )
    snapshot = ModelSnapshot(DEFAULTS["model"], revision)
    objects = on_callers_file_system(
        model_cache_objects(cache, namespace, snapshot, catalog, with_hf_token, weights=True)
    )
    guards = model_cache_guards(namespace, kubernetes_version, objects, catalog)
    made = [objects.storage_class, objects.persistent_volume, objects.pvc, objects.hf_token_secret]
    made += [*objects.download.objects(), *(guards.objects() if guards else [])]
    given.refuse(_object_problems(made, kubernetes_version, catalog.dynamo_versions[release]))
    return ModelCacheBlock(
        ownership.marked_model_cache(objects, owner, []), ownership.marked_teardown(guards, owner, [])
    )


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
    environment = given.field(StackConfig, "environment", "environment", DEFAULTS["environment"])
    settings = given.part(NodePoolConfig)
    given.refuse(eks_region_problems(region, "region"))
    zone = settings.availability_zone
    outside = aws_values.zone_problem("availability_zone", zone, region) if zone else None
    given.refuse([outside] if outside else [])
    # The cluster's Kubernetes version is not the pool's to say: its AMI follows the cluster's.
    problems = pool_problems(name, settings, catalog, created=True, kubernetes_version=DEFAULT_KUBERNETES_VERSION)
    given.refuse(as_arguments(problems, pool_key(name), NodePoolConfig))
    pool = resolve_pool(name, settings, catalog)
    return PoolBlock(pool, pool_gets_efa(pool, wanted_by_deployments=False), environment)


def gpu_node_group(block: PoolBlock, facts: AccountFacts) -> GpuGroupPlan:
    """The pool's node group as EC2's `facts` allow it, or ConfigError keyed by argument."""
    group = gpu_group_plan(block.pool, block.efa, facts)
    if group.problems:
        raise ConfigError(as_arguments(group.problems, pool_key(block.pool.name), NodePoolConfig))
    return group


def pool_key(name: str) -> str:
    return f"{KEY_PREFIX}nodePools.{name}"


def as_arguments(problems: list[Problem], prefix: str, part: type[StrictModel]) -> list[Problem]:
    """Problems the stack's stages key by stack-file key under `prefix` (a part of type `part`), each named
    as the block's argument: the part's field its key names (fsxThroughputPerTiB: fsx_throughput_per_tib)."""
    arguments = {field.alias or name: name for name, field in part.model_fields.items()}

    def named(key: str) -> str:
        inner = key.removeprefix(f"{prefix}.")
        first, dot, rest = inner.partition(".")
        return f"{arguments[first]}{dot}{rest}" if inner != key and first in arguments else key

    return [Problem(named(problem.key), problem.message) for problem in problems]
