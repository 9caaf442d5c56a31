"""Recipe resolution: a deployment's config + its recipe + its pool -> concrete workers.

Engine config precedence, lowest first: the recipe's role engine config, the parallel sizes the
worker's GPU count implies, the deployment's `overrides`. The recipe's backend (core/backends/)
checks the result: every key must be one its engine accepts, and the parallel sizes must fit the
worker's GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.backends import Backend
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import (
    CPU_ONLY,
    Catalog,
    EfaPodSettings,
    Hardware,
    InstanceType,
    Recipe,
    WorkerRole,
)
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, DeploymentConfig, NodePoolConfig, StackConfig
from gpt_oss_infra.core.mappings import deep_merge
from gpt_oss_infra.core.resolve.autoscaling import Drain, RoleBounds, role_bounds


@dataclass(frozen=True)
class WorkerEfa:
    """What one worker of a deployment that crosses nodes gets on an EFA pool (core/resolve/efa.py decides)."""

    devices: int  # vpc.amazonaws.com/efa requested (= limit)
    image: str  # the Dynamo release's EFA runtime image for the pool's CPU architecture
    pod: EfaPodSettings  # the pod's security context and host IPC
    # The role this worker's pods must not share a node with: EFA transfers between prefill and
    # decode fail on one node ("fi_read ... EAGAIN"), so Dynamo's guide requires them apart [dynamo-disagg].
    apart_from: str | None = None


@dataclass(frozen=True)
class Worker:
    role: str  # worker | prefill | decode
    service_name: str
    gpus: int  # per worker (pod); 0 for a CPU worker
    replicas: int
    engine: dict[str, Any]
    env: dict[str, str]
    args: list[str]
    resources: dict[str, dict[str, str]] | None = None  # a CPU worker's requests and limits
    efa: WorkerEfa | None = None  # set (core.resolve.efa.with_efa) when its KV cache crosses nodes over EFA
    scaling: RoleBounds | None = None  # Dynamo's Planner scales it within these (autoscaling); else fixed

    @property
    def total_gpus(self) -> int:
        return self.gpus * self.replicas

    @property
    def most_replicas(self) -> int:
        """As many as it may ever run: what its pool must hold."""
        return self.scaling.max_replicas if self.scaling else self.replicas

    @property
    def fewest_replicas(self) -> int:
        """As few as it ever runs: what keeps an elastic pool's nodes."""
        return self.scaling.min_replicas if self.scaling else self.replicas


@dataclass(frozen=True)
class NodePool:
    name: str
    config: NodePoolConfig
    hardware: Hardware
    instance_type: str

    @property
    def instance(self) -> InstanceType:
        return self.hardware.instance_types[self.instance_type]

    @property
    def total_gpus(self) -> int:
        return self.instance.gpus_per_node * self.config.most_nodes


@dataclass(frozen=True)
class ResolvedDeployment:
    name: str
    config: DeploymentConfig
    recipe_name: str
    recipe: Recipe
    backend: Backend
    pool: NodePool | None  # None: a recipe without GPUs, on CPU nodes
    workers: list[Worker]
    drain: Drain | None = None  # with autoscaling: how long a worker the Planner stops may take (resolve_stack)

    @property
    def total_gpus(self) -> int:
        return sum(worker.total_gpus for worker in self.workers)

    @property
    def router_mode(self) -> str:
        """The frontend's router: the one configured, else KV-aware where a role can have several workers
        (requests that share a prefix go where its KV cache is) and every worker reuses KV blocks (one that
        does not publishes no reuse events: Dynamo 1.6.1's TensorRT-LLM worker warns that KV routing then
        falls back to load balancing), else round-robin."""
        if self.config.router_mode is not None:
            return self.config.router_mode
        several = any(worker.most_replicas > 1 for worker in self.workers)
        reused = all(self.backend.view(worker.engine).prefix_caching for worker in self.workers)
        return "kv" if several and reused else "round-robin"

    @property
    def gpu_pool(self) -> NodePool:
        """The pool of a deployment on GPU nodes; ValueError for one on CPU nodes."""
        if self.pool is None:
            raise ValueError(f"deployment {self.name} runs on CPU nodes: it has no node pool")
        return self.pool

    @property
    def concurrency(self) -> int:
        """The recipe's traffic concurrency at this deployment's size: per GPU it really uses, or per replica."""
        traffic = self.recipe.traffic
        if traffic.concurrency_per_gpu is not None:
            return traffic.concurrency_per_gpu * self.total_gpus
        assert traffic.concurrency_per_replica is not None  # Traffic's check: one of the two is set
        return traffic.concurrency_per_replica * self.config.replicas


def resolve_pools(config: StackConfig, catalog: Catalog) -> dict[str, NodePool]:
    """The GPU pools (a cpu pool is its CPU workers' placement only: core/render/karpenter.py)."""
    return {
        name: resolve_pool(name, pool, catalog) for name, pool in config.node_pools.items() if pool.hardware != CPU_ONLY
    }


def resolve_pool(name: str, pool: NodePoolConfig, catalog: Catalog) -> NodePool:
    """A pool of known hardware (core/inputs/rules.pool_problems checked it)."""
    hardware = catalog.hardware[pool.hardware]
    instance_type = pool.instance_type or hardware.default_instance_type
    return NodePool(name=name, config=pool, hardware=hardware, instance_type=instance_type)


def resolve_deployments(
    deployments: dict[str, DeploymentConfig], catalog: Catalog, pools: dict[str, NodePool]
) -> list[ResolvedDeployment]:
    """Resolve every deployment; ConfigError lists every problem found in any of them."""
    resolved, problems = [], []
    for name, deployment in deployments.items():
        recipe = catalog.recipes[deployment.recipe]
        pool = pools[deployment.node_pool] if deployment.node_pool and not recipe.gpu_free else None
        key = f"{KEY_PREFIX}deployments.{name}"
        backend = catalog.backends[recipe.backend]
        workers, worker_problems = _resolve_workers(deployment, recipe, backend, pool, key)
        problems += worker_problems
        resolved.append(ResolvedDeployment(name, deployment, deployment.recipe, recipe, backend, pool, workers))
    if problems:
        raise ConfigError(problems)
    return resolved


def _resolve_workers(
    deployment: DeploymentConfig, recipe: Recipe, backend: Backend, pool: NodePool | None, key: str
) -> tuple[list[Worker], list[Problem]]:
    problems = _gpus_problems(deployment, recipe, pool, key) if pool else []
    bounds, bound_problems = role_bounds(deployment, recipe, key)
    problems += bound_problems
    overrides_by_role, override_problems = _split_overrides(deployment, recipe, key)
    problems += override_problems
    workers = []
    for role, spec in recipe.workers.items():
        gpus = _worker_gpus(deployment, spec)
        overrides = overrides_by_role.get(role, {})
        overrides_key = f"{key}.overrides" + (f".{role}" if len(recipe.workers) > 1 else "")
        problems += backend.check(overrides, overrides_key)
        engine = deep_merge(recipe_engine(spec, gpus, backend), overrides)
        problems += backend.consistency_problems(engine, gpus, overrides, overrides_key, f"{key}.gpus")
        workers.append(
            Worker(
                role=role,
                service_name=backend.spec.service_names[role],
                gpus=gpus,
                replicas=deployment.replicas,
                engine=engine,
                env=dict(spec.env),
                args=list(spec.args),
                resources=spec.resources,
                scaling=bounds.get(role),
            )
        )
    return workers, problems


def _worker_gpus(deployment: DeploymentConfig, spec: WorkerRole) -> int:
    if spec.gpus is None:  # a CPU worker
        return 0
    sizable = len(spec.gpus.allowed) > 1
    return deployment.gpus if sizable and deployment.gpus else spec.gpus.default


def _gpus_problems(deployment: DeploymentConfig, recipe: Recipe, pool: NodePool, key: str) -> list[Problem]:
    sizable = {role: spec for role, spec in recipe.workers.items() if len(spec.gpu_sizes.allowed) > 1}
    sizes = {spec.gpu_sizes.default for spec in recipe.workers.values()}
    if deployment.gpus is not None and not sizable and sizes != {deployment.gpus}:
        fixed = ", ".join(f"{spec.gpu_sizes.default} per {role}" for role, spec in recipe.workers.items())
        write = f"leave gpus out, or write gpus: {min(sizes)}" if len(sizes) == 1 else "leave gpus out"
        return [Problem(f"{key}.gpus", f"recipe {deployment.recipe} runs fixed GPU counts ({fixed}): {write}")]
    problems = []
    for role, spec in sizable.items():
        allowed = spec.gpu_sizes.allowed
        if deployment.gpus is not None and deployment.gpus not in allowed:
            message = f"recipe {deployment.recipe} allows {allowed} GPUs per {role}, not {deployment.gpus}"
            problems.append(Problem(f"{key}.gpus", message))
    per_node = pool.instance.gpus_per_node
    for role, spec in recipe.workers.items():
        gpus = _worker_gpus(deployment, spec)
        if gpus > per_node:
            problems.append(
                Problem(
                    f"{key}.gpus",
                    f"{gpus} GPUs per {role} exceed the {per_node} GPUs of a "
                    f"{pool.instance_type} node in pool {pool.name}",
                )
            )
    return problems


def _split_overrides(
    deployment: DeploymentConfig, recipe: Recipe, key: str
) -> tuple[dict[str, dict[str, Any]], list[Problem]]:
    """One role: overrides are its engine keys. Several: overrides are keyed by role."""
    if len(recipe.workers) == 1:
        return {next(iter(recipe.workers)): deployment.overrides}, []
    unknown = sorted(set(deployment.overrides) - set(recipe.workers))
    problems = [
        Problem(
            f"{key}.overrides.{role}",
            f"not a role of recipe {deployment.recipe}; one of {', '.join(recipe.workers)}",
        )
        for role in unknown
    ]
    return {role: value for role, value in deployment.overrides.items() if role not in unknown}, problems


def recipe_engine(spec: WorkerRole, gpus: int, backend: Backend) -> dict[str, Any]:
    """A recipe worker's engine config at a GPU count, before a deployment's overrides."""

    def size(value: str | int) -> int:
        return gpus if value == "gpus" else int(value)

    parallel = backend.parallel_sizes(tensor=size(spec.parallelism.tensor), expert=size(spec.parallelism.expert))
    return deep_merge(spec.engine, parallel)
