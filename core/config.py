"""Typed stack config: the product's public interface (Pulumi config namespace `gpt-oss-infra`).

`parse_stack_config` takes the namespace's keys as plain values (objects already decoded) and
returns a `StackConfig`, or raises ConfigError naming every bad key, e.g.
`gpt-oss-infra:deployments.gpt-oss.gpus`. The HF token is not part of it: the Pulumi shell keeps
the secret to itself and passes only whether one is set.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PositiveInt, ValidationError

from core.catalog import CapacityType, Catalog
from core.errors import ConfigError, Problem
from core.quantity import parse_quantity
from core.schema import DNS_LABEL, StrictModel, problems_from

NAMESPACE = "gpt-oss-infra"
KEY_PREFIX = f"{NAMESPACE}:"
SECRET_KEYS = ("hfToken",)  # read by the shell as Pulumi secrets, never parsed here


def _dns_label(value: str) -> str:
    if len(value) > 63 or not DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} must be a DNS label: lowercase letters, digits and '-', at most 63 characters"
        )
    return value


def _quantity(value: str) -> str:
    parse_quantity(value)
    return value


def _semver(value: str) -> str:
    if not re.fullmatch(r"\d+\.\d+\.\d+", value):
        raise ValueError(f"{value!r} must be a chart version like 1.2.1")
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
Quantity = Annotated[str, AfterValidator(_quantity)]


class Release(StrictModel):
    """Everything promotion moves between stacks, and nothing else."""

    dynamo: Annotated[str, AfterValidator(_semver)]
    runtime_image: Annotated[str, AfterValidator(_pinned_image)]
    model: Annotated[str, Field(pattern=r"^[\w.-]+/[\w.-]+$")]
    model_revision: Annotated[str, Field(pattern=r"^[0-9a-f]{40}$", description="40-hex Hugging Face commit")]


class Cluster(StrictModel):
    create: bool = True
    name: DnsLabel
    kubernetes_version: Annotated[str, Field(pattern=r"^1\.\d{2}$")] = "1.33"


class NodePool(StrictModel):
    hardware: str
    nodes: Annotated[int, Field(ge=0)]
    capacity_type: CapacityType = "ON_DEMAND"
    capacity_reservation_id: Annotated[str | None, Field(pattern=r"^cr-[0-9a-f]{17}$")] = None
    instance_type: str | None = None  # default: the hardware's first instance type
    # Labels that select this pool's nodes; default {gpt-oss-infra/pool: <pool name>}, the label
    # our node groups carry. Set it to target GPU nodes of an existing cluster.
    node_selector: dict[str, str] | None = None


class ModelCache(StrictModel):
    storage: Literal["efs", "fsx-lustre", "existing"] = "efs"
    size: Quantity = "400Gi"
    storage_class_name: DnsLabel | None = None


class Deployment(StrictModel):
    recipe: str
    node_pool: str
    gpus: PositiveInt | None = None  # GPUs per worker, where the recipe allows several sizes
    replicas: PositiveInt = 1
    router_mode: Literal["round-robin", "kv"] = "round-robin"
    overrides: dict[str, Any] = {}  # engine-config keys deep-merged into the recipe's


class StackConfig(StrictModel):
    environment: DnsLabel
    release: Release
    cluster: Cluster
    node_pools: Annotated[dict[DnsLabel, NodePool], Field(min_length=1)]
    model_cache: ModelCache = ModelCache()
    deployments: dict[DnsLabel, Deployment] = {}
    namespace: DnsLabel = "gpt-oss"  # Kubernetes namespace of the serving workloads


def parse_stack_config(raw: dict[str, Any], catalog: Catalog) -> StackConfig:
    """Validate the `gpt-oss-infra:` keys (prefix stripped) and every cross-field rule."""
    try:
        config = StackConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(problems_from(error, KEY_PREFIX)) from None
    problems = _pool_problems(config, catalog) + _deployment_problems(config, catalog)
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
                    f"{instance_type!r} does not carry {pool.hardware}; "
                    f"one of {', '.join(hardware.instance_types)}",
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
