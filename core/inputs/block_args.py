"""The public building blocks' arguments as stack config.

Each building block (GpuNodePool, DynamoPlatform, ModelCache, GptOssDeployment) writes the part of a
stack config its arguments say; the stack's own pipeline (core.stack.build_stack) then validates,
resolves and renders it, so a block refuses exactly what a stack file would. A refusal names the
argument, not the config key it became (`Fragment.refusal`). An argument that sets a field of a stack
config part is named as that field of its config model (core/inputs/config.py), which gives its key
(`same_named`, `argument_names`): the key is defined once. Arguments arrive as plain dicts with the
Args' snake_case keys, from Python or, through the component provider, from any Pulumi language.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, Catalog, recipe_from_object
from gpt_oss_infra.core.inputs.config import (
    KEY_PREFIX,
    DeploymentConfig,
    EndpointConfig,
    ModelCacheConfig,
    NodePoolConfig,
    PlatformConfig,
)
from gpt_oss_infra.core.inputs.rules import REGION_KEY
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.schema import StrictModel
from gpt_oss_infra.core.yaml_files import read_yaml

DEFAULTS: dict[str, Any] = read_yaml(CONFIG_DIR / "components.yaml")
RECIPE_OBJECT = "recipe_definition"  # the argument that gives a recipe as an object


@dataclass(frozen=True)
class PoolFacts:
    """What a GpuNodePool the program made tells a GptOssDeployment that names it (`node_pool`)."""

    hardware: str
    nodes: int
    labels: dict[str, str]  # the labels its nodes carry, which the deployment's workers select
    efa: bool  # whether its nodes have EFA interfaces, which the deployment's workers may then ask for


@dataclass(frozen=True)
class Fragment:
    """A stack config made from a block's arguments, and which argument each key came from."""

    config: dict[str, Any]  # stack config keys, without the gpt-oss-infra: prefix
    arguments: dict[str, str]  # config key -> the argument it holds (the longest matching key wins)

    def refusal(self, error: ConfigError) -> ConfigError:
        """The same problems, each keyed by the argument it came from."""
        translated = [Problem(self.argument_of(p.key), p.message) for p in error.problems]
        return ConfigError(list(dict.fromkeys(translated)))  # `name` is both a pool's key and the cluster's name

    def warning(self, text: str) -> str:
        """A stack warning ("gpt-oss-infra:<key>: ...") keyed by the argument it came from."""
        key, separator, rest = text.partition(": ")
        return f"{self.argument_of(key)}{separator}{rest}" if key.startswith(KEY_PREFIX) and separator else text

    def argument_of(self, key: str) -> str:
        key = key.removeprefix(KEY_PREFIX)
        matches = [config_key for config_key in self.arguments if key == config_key or key.startswith(f"{config_key}.")]
        if not matches:
            return f"(derived) {key}"  # a key no argument sets: a default of this package's
        config_key = max(matches, key=len)
        return self.arguments[config_key] + key[len(config_key) :]


def endpoint(args: dict[str, Any]) -> dict[str, Any] | None:
    """A deployment's `endpoint` argument as the stack config's `deployments.<name>.endpoint`."""
    given = args.get("endpoint")
    if given is None:
        return None
    per_minute = given.get("client_requests_per_minute")
    return same_named(EndpointConfig, given) | _present(
        {
            "rateLimit": _per_minute(given.get("requests_per_minute")),
            "clientRateLimits": {client: _per_minute(n) for client, n in per_minute.items()}
            if isinstance(per_minute, dict)
            else per_minute,
        }
    )


def _per_minute(requests: Any) -> dict[str, Any] | None:
    return None if requests is None else {"requests": whole(requests), "unit": "Minute"}


def deployment(
    name: str, args: dict[str, Any], catalog: Catalog, pools: dict[str, PoolFacts] | None = None
) -> tuple[Fragment, Catalog]:
    """GptOssDeployment: one serving graph, on the GPU nodes `node_pool` (a GpuNodePool of the program's,
    one of `pools`) or `node_selector` picks; the catalog with the deployment's own recipe where it gives
    one as an object."""
    recipe_name = args.get("recipe")
    if args.get(RECIPE_OBJECT) is not None:
        if recipe_name is not None:
            raise ConfigError([Problem(RECIPE_OBJECT, "give a recipe by name (recipe) or as an object, not both")])
        recipe_name = f"{name}-recipe"
        try:
            defined = recipe_from_object(whole(args[RECIPE_OBJECT]), RECIPE_OBJECT, catalog)
        except ConfigError as error:
            raise ConfigError([Problem(p.key.replace(": ", "."), p.message) for p in error.problems]) from None
        catalog = dataclasses.replace(catalog, recipes={**catalog.recipes, recipe_name: defined})
    recipe = catalog.recipes.get(recipe_name) if isinstance(recipe_name, str) else None
    # The GPU hardware the recipe is for; None for a cpu recipe or an unknown one (refused by name).
    gpu_hardware = recipe.hardware if recipe is not None and recipe.hardware != CPU_ONLY else None
    pool = args.get("node_pool") or name
    # The GPU nodes: those the user's labels select, else those of the GpuNodePool it names.
    recipe_argument = RECIPE_OBJECT if args.get(RECIPE_OBJECT) is not None else "recipe"
    made = (
        _named_pool(pool, gpu_hardware, pools or {}, recipe_argument)
        if gpu_hardware is not None and args.get("node_selector") is None
        else None
    )
    served = same_named(DeploymentConfig, args, but=("recipe", "node_pool", "endpoint")) | _present(
        {
            "recipe": recipe_name,
            # a cpu recipe's pool is refused
            "nodePool": pool if gpu_hardware is not None else args.get("node_pool"),
            "endpoint": endpoint(args),
        }
    )
    cluster = _cluster("existing", name, args) | _present(
        {"loadBalancerController": args.get("load_balancer_controller")}
    )
    config = {
        "environment": DEFAULTS["environment"],
        "release": _release(args, backend=recipe.backend if recipe else None, catalog=catalog),
        "cluster": cluster,
        "deployments": {name: served},
        "networkPolicies": _present({"enabled": args.get("network_policies")}),
        "modelCache": _ANY_CACHE,
        "platform": {"nats": False},  # the platform (and its NATS volume) is DynamoPlatform's to check
        "namespace": args.get("namespace"),
        # The pool as the placement and GPU-fit checks see it: the recipe's hardware, `pool_nodes` nodes.
        "nodePools": {
            pool: _present(
                {
                    "hardware": gpu_hardware,
                    "nodes": whole(
                        args["pool_nodes"] if args.get("pool_nodes") is not None else made.nodes if made else 1
                    ),
                    "nodeSelector": args.get("node_selector") or (made.labels if made else None),
                    # The pool decided its EFA alone: the workers must not ask for interfaces its nodes lack.
                    "efa": made.efa if made else None,
                }
            )
        }
        if gpu_hardware is not None
        else {},
    }
    config = _present(config)
    deployment_key = f"deployments.{name}"
    arguments = argument_names(DeploymentConfig, deployment_key)
    arguments |= {
        deployment_key: "name",
        "deployments": "name",
        f"{deployment_key}.recipe": RECIPE_OBJECT if args.get(RECIPE_OBJECT) is not None else "recipe",
        f"nodePools.{pool}": "node_pool",
        f"nodePools.{pool}.hardware": RECIPE_OBJECT if args.get(RECIPE_OBJECT) is not None else "recipe",
        f"nodePools.{pool}.nodes": "pool_nodes",
        f"nodePools.{pool}.nodeSelector": "node_selector",
        f"nodePools.{pool}.efa": "node_pool",
        "nodePools": "node_pool",
        "namespace": "namespace",
        "apiKeys": "api_keys",
        "cluster.loadBalancerController": "load_balancer_controller",
        "networkPolicies.enabled": "network_policies",
        "networkPolicies": "network_policies",
        **{
            key: f"endpoint.{argument}"
            for key, argument in argument_names(EndpointConfig, f"{deployment_key}.endpoint").items()
        },
        **{f"{deployment_key}.endpoint.{key}": f"endpoint.{argument}" for key, argument in _RATE_LIMITS.items()},
    }
    return Fragment(config, {**arguments, **_COMMON}), catalog


def _named_pool(pool: str, hardware: str, pools: dict[str, PoolFacts], recipe_argument: str) -> PoolFacts:
    """The GpuNodePool `node_pool` names, made earlier by the same program, whose hardware the recipe is
    for; else refused by argument: a pool that matches nothing would leave the workers Pending."""
    if pool not in pools:
        close = difflib.get_close_matches(pool, sorted(pools), n=1)
        made = f" (it made: {', '.join(sorted(pools))})" if pools else " (it made none)"
        hint = f": did you mean {close[0]!r}?" if close else made
        raise ConfigError(
            [
                Problem(
                    "node_pool",
                    f"{pool!r} names no GpuNodePool of this program{hint}; make the GpuNodePool first, or give "
                    "node_selector: the labels of GPU nodes another program made",
                )
            ]
        )
    if pools[pool].hardware != hardware:
        raise ConfigError(
            [
                Problem(
                    "recipe", f"the recipe is for {hardware}, but GpuNodePool {pool!r} has {pools[pool].hardware} nodes"
                )
            ]
        )
    return pools[pool]


def whole(value: Any) -> Any:
    """Whole numbers as ints, in lists and dicts too: numbers from other Pulumi languages arrive as
    floats (2.0), which TensorRT-LLM's integer fields and the recipe model refuse."""
    if isinstance(value, dict):
        return {key: whole(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole(item) for item in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def same_named(model: type[StrictModel], args: dict[str, Any], but: tuple[str, ...] = ()) -> dict[str, Any]:
    """The arguments given that are fields of the stack config part `model` (an argument is named as its
    field, core/inputs/config.py defines both), under the part's keys; but those in `but`."""
    return {
        field.alias or name: whole(args[name])
        for name, field in model.model_fields.items()
        if name not in but and args.get(name) is not None
    }


def argument_names(model: type[StrictModel], prefix: str) -> dict[str, str]:
    """Each key of the stack config part `model` at `prefix` -> the argument named as its field, for the
    fields its block offers (NOT_OFFERED: the others)."""
    return {
        f"{prefix}.{field.alias or name}": name
        for name, field in model.model_fields.items()
        if name not in NOT_OFFERED.get(model, set())
    }


# The fields of a stack config part its block does not offer as arguments, and why.
NOT_OFFERED: dict[type[StrictModel], set[str]] = {
    NodePoolConfig: {"node_selector", "price_per_node_hour"},  # a created pool's own label; the catalog's price
    PlatformConfig: {"nats", "grove", "kai_scheduler"},  # the release's own choice of the chart's optional parts
    ModelCacheConfig: {"keep_on_destroy"},  # the file system is the caller's: the block deletes none
    # The stack's aiperf Job and Prometheus alerts; autoscaling: its Planner reads the stack's Prometheus
    # (observability), which no block makes.
    DeploymentConfig: {"benchmark", "alerts", "autoscaling"},
    EndpointConfig: {"rate_limit", "client_rate_limits"},  # offered per minute: (client_)requests_per_minute
}


# deployments.<name>.endpoint's rate limits -> the `endpoint` argument's per-minute ones.
_RATE_LIMITS = {
    "rateLimit.requests": "requests_per_minute",
    "rateLimit": "requests_per_minute",
    "clientRateLimits": "client_requests_per_minute",
}
# Arguments every block takes: the release, the cluster's Kubernetes version, the region.
_COMMON = {
    "release.dynamo": "dynamo_release",
    "release.runtimeImage": "runtime_image",
    "release.modelRevision": "model_revision",
    "release": "dynamo_release",
    "cluster.kubernetesVersion": "kubernetes_version",
    "cluster.name": "name",
    "environment": "environment",
    REGION_KEY: "region",
}


def _release(args: dict[str, Any], backend: str | None, catalog: Catalog | None) -> dict[str, Any]:
    """The release a block runs: Dynamo's (default: configs/components.yaml), the runtime image that
    release publishes for the recipe's backend unless `runtime_image` names one, the pinned model."""
    dynamo = args.get("dynamo_release") or DEFAULTS["dynamoRelease"]
    runtime_image = args.get("runtime_image")
    if runtime_image is None and catalog is not None and backend is not None and dynamo in catalog.dynamo_versions:
        runtime_image = catalog.dynamo_versions[dynamo].spec.runtime_images.get(backend)
    return {
        "dynamo": dynamo,
        # Blocks that run no engine still name one: the TensorRT-LLM runtime of the release.
        "runtimeImage": runtime_image or f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{dynamo}",
        "model": DEFAULTS["model"],
        "modelRevision": args.get("model_revision") or DEFAULTS["modelRevision"],
    }


def _cluster(kind: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The cluster as far as a block needs it: its kind decides which checks apply (an `eks` pool is
    checked against EC2, an `existing` cluster's AWS side is not the program's)."""
    cluster = {"kind": kind, "name": name, **_present({"kubernetesVersion": args.get("kubernetes_version")})}
    if kind == "eks":  # the API endpoint is the user's cluster's business, not the block's
        cluster["endpointPublicAccess"] = False
    return cluster


# The claim every deployment mounts is the namespace's ModelCache's: its StorageClass is that block's
# business, and any valid name lets a block without a cache pass the stack's cache checks.
_ANY_CACHE = {"storage": "existing", "storageClassName": "model-cache"}


def _present(settings: dict[str, Any]) -> dict[str, Any]:
    """Only the settings given: the rest keep the stack config's defaults."""
    return {key: value for key, value in settings.items() if value is not None}
