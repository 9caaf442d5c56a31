"""The whole functional core in one call: raw config keys -> everything the shell deploys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import manifests
from core.catalog import Catalog
from core.config import StackConfig, parse_stack_config
from core.errors import ConfigError, Problem
from core.recipes import Pool, ResolvedDeployment, resolve_deployments, resolve_pools
from core.validation import object_problems


@dataclass(frozen=True)
class Serving:
    """One deployment and the objects that serve it."""

    deployment: ResolvedDeployment
    engine_config: dict[str, Any]
    graph: dict[str, Any]


@dataclass(frozen=True)
class Stack:
    config: StackConfig
    pools: dict[str, Pool]
    namespace: dict[str, Any]
    model_cache_pvc: dict[str, Any]
    hf_token_secret: dict[str, Any] | None  # without its data: the shell adds the secret value
    serving: list[Serving]

    @property
    def deployments(self) -> list[ResolvedDeployment]:
        return [serving.deployment for serving in self.serving]

    def objects(self) -> list[dict[str, Any]]:
        fixed = [self.namespace, self.model_cache_pvc, self.hf_token_secret]
        return [obj for obj in fixed if obj] + [
            obj for serving in self.serving for obj in (serving.engine_config, serving.graph)
        ]


def build_stack(raw_config: dict[str, Any], catalog: Catalog, with_hf_token: bool) -> Stack:
    """Validate, resolve and render; ConfigError (every bad key named) before anything is built."""
    config = parse_stack_config(raw_config, catalog)
    pools = resolve_pools(config, catalog)
    namespace = config.namespace
    stack = Stack(
        config=config,
        pools=pools,
        namespace=manifests.namespace(namespace),
        model_cache_pvc=manifests.model_cache_pvc(
            namespace, config.model_cache.size, manifests.storage_class_name(config.model_cache)
        ),
        hf_token_secret=manifests.hf_token_secret(namespace) if with_hf_token else None,
        serving=[
            Serving(
                deployment=deployment,
                engine_config=manifests.engine_config_map(deployment, namespace),
                graph=manifests.dynamo_graph_deployment(
                    deployment,
                    config.release,
                    namespace,
                    node_selector(pools[deployment.config.node_pool]),
                    with_hf_token,
                ),
            )
            for deployment in resolve_deployments(config, catalog, pools)
        ],
    )
    problems = [
        Problem(f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}", line)
        for obj in stack.objects()
        for line in object_problems(obj, config.cluster.kubernetes_version)
    ]
    if problems:
        raise ConfigError(problems)
    return stack


def node_selector(pool: Pool) -> dict[str, str]:
    return pool.config.node_selector or {manifests.POOL_LABEL: pool.name}
