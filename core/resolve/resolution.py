"""The resolve stage of a stack: its node pools and deployments (recipes resolved to workers), which
pools get EFA, and how each worker fits its GPUs; the problems and warnings found on the way."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, DeploymentConfig, StackConfig
from gpt_oss_infra.core.resolve import drain, efa, sizing, targets
from gpt_oss_infra.core.resolve.recipes import NodePool, ResolvedDeployment, resolve_deployments, resolve_pools


@dataclass(frozen=True)
class Resolution:
    pools: dict[str, NodePool]
    deployments: list[ResolvedDeployment]  # with their EFA where their KV cache crosses nodes
    efa_pools: dict[str, bool]  # pool -> gets EFA interfaces
    fits: dict[str, list[sizing.WorkerFit]]  # deployment -> each worker's fit ([] on CPU nodes)
    problems: list[Problem]  # placement on the pools, GPU fit: refused with the rendered values' problems
    warnings: list[str]


def resolve_stack(config: StackConfig, catalog: Catalog) -> Resolution:
    """ConfigError at once where a KV cache dtype cannot be sized; the rest is collected."""
    return resolve_on(resolve_pools(config, catalog), config.deployments, config.release.dynamo, catalog)


def resolve_on(
    pools: dict[str, NodePool], configs: dict[str, DeploymentConfig], release: str, catalog: Catalog
) -> Resolution:
    """The deployments `configs` resolved on `pools`, at Dynamo `release`."""
    dynamo = catalog.dynamo_versions[release]
    deployments = resolve_deployments(configs, catalog, pools)
    efa_pools, warnings = efa.pool_efa(pools, deployments, dynamo)
    deployments = [efa.with_efa(d, efa_pools, dynamo, catalog.efa) for d in deployments]
    drains = {d.name: drain.drain(d, catalog) for d in deployments}
    deployments = [dataclasses.replace(d, drain=drains[d.name][0]) for d in deployments]
    unsizable = sizing.kv_dtype_problems(deployments, catalog.model)
    if unsizable:  # the sizing below reads the KV dtype's element size
        raise ConfigError(unsizable)
    problems = sizing.placement_problems(deployments, pools) + sizing.floor_problems(deployments, pools)
    problems += [problem for _, found in drains.values() for problem in found]
    for deployment in deployments:
        found, warned = targets.target_problems(deployment, catalog)
        problems += found
        warnings += warned
    fits: dict[str, list[sizing.WorkerFit]] = {}
    for deployment in deployments:
        if deployment.pool is None:  # a CPU recipe: no GPU memory to fit
            fits[deployment.name] = []
            continue
        fits[deployment.name] = [
            sizing.worker_fit(
                worker,
                deployment.pool,
                catalog.model,
                deployment.recipe.traffic,
                deployment.backend.view(worker.engine),
            )
            for worker in deployment.workers
        ]
        found, warned = sizing.fit_problems(
            deployment, fits[deployment.name], f"{KEY_PREFIX}deployments.{deployment.name}"
        )
        problems += found
        warnings += warned
    return Resolution(pools, deployments, efa_pools, fits, problems, warnings)
