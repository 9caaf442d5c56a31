"""The whole functional core in one call: raw config keys -> everything the shell deploys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.catalog import Catalog
from core.config import StackConfig, parse_stack_config
from core.manifests import POOL_LABEL
from core.recipes import Pool, ResolvedDeployment, resolve_deployments, resolve_pools


@dataclass(frozen=True)
class Stack:
    config: StackConfig
    pools: dict[str, Pool]
    deployments: list[ResolvedDeployment]

    def node_selector(self, pool_name: str) -> dict[str, str]:
        return self.pools[pool_name].config.node_selector or {POOL_LABEL: pool_name}


def build_stack(raw_config: dict[str, Any], catalog: Catalog) -> Stack:
    """Validate and resolve; raises ConfigError (every bad key named) before anything is built."""
    config = parse_stack_config(raw_config, catalog)
    pools = resolve_pools(config, catalog)
    return Stack(config, pools, resolve_deployments(config, catalog, pools))
