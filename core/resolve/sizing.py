"""Will it fit? Placement of workers on a pool's nodes, and weights + KV cache in GPU memory.

An estimate, before an hour of GPU time finds out: it ignores activations, CUDA graphs and
runtime buffers, which come out of the same memory, so a config it passes can still need a
smaller KV fraction; a config it refuses cannot work.

Weights per GPU: the experts (MXFP4) are split over all tensor-parallel ranks (TRT-LLM's
moe_tp x moe_ep = tp); the dense BF16 part is split over TP, or replicated with attention data
parallel. KV per token and layer = 2 (K and V) x KV heads x head_dim x bytes(dtype); full-attention
layers keep every token, sliding-window layers the last `window`; without attention data parallel
the KV heads are split over min(TP, KV heads) ranks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpt_oss_infra.core.backends import EngineView
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import ModelSpec, Traffic
from gpt_oss_infra.core.inputs.config import KEY_PREFIX
from gpt_oss_infra.core.quantity import gibibytes
from gpt_oss_infra.core.resolve.recipes import NodePool, ResolvedDeployment, Worker

GIB = 2**30
GB = 10**9


@dataclass(frozen=True)
class WorkerFit:
    service: str
    weights_gib_per_gpu: float
    kv_budget_gib_per_gpu: float
    kv_token_capacity: int  # per worker (all its GPUs)
    sequence_tokens: int  # input + output of the recipe's traffic shape
    max_concurrency: int  # sequences of that shape the KV cache holds, per worker
    max_batch_size: int  # per worker, as configured (per rank x ranks with attention DP)


def gpu_memory_gib(pool: NodePool) -> float:
    """The catalog's published GB (10^9 bytes) per GPU, in GiB: conservative against nvidia-smi."""
    return pool.instance.gpu_memory_gb * GB / GIB


def worker_fit(worker: Worker, pool: NodePool, model: ModelSpec, traffic: Traffic, engine: EngineView) -> WorkerFit:
    tensor = engine.tensor_parallel
    attention_dp = engine.attention_data_parallel
    weights = model.checkpoint_gib - model.dense_gib
    weights_per_gpu = weights / tensor + model.dense_gib / (1 if attention_dp else tensor)

    gpu_gib = gpu_memory_gib(pool)
    budget_per_gpu = max(gpu_gib - weights_per_gpu, 0.0) * engine.kv_cache_fraction

    kv_dtype = engine.kv_cache_dtype
    head_ranks = 1 if attention_dp else min(tensor, model.kv_heads)
    token_layer_bytes = 2 * model.kv_heads * model.head_dim * model.kv_bytes_per_element[kv_dtype] / head_ranks
    full_layers = model.layers - model.sliding_window_layers
    sequence = min(traffic.sequence_tokens, engine.max_seq_len or model.max_position_embeddings)
    sequence_bytes = token_layer_bytes * (
        full_layers * sequence + model.sliding_window_layers * min(sequence, model.sliding_window)
    )
    # With attention DP each GPU holds its own sequences; otherwise one sequence spans the ranks.
    kv_pools = worker.gpus if attention_dp else 1
    budget_bytes = budget_per_gpu * GIB * kv_pools
    per_token_bytes = token_layer_bytes * full_layers  # capacity counted in full-attention tokens
    return WorkerFit(
        service=worker.service_name,
        weights_gib_per_gpu=round(weights_per_gpu, 2),
        kv_budget_gib_per_gpu=round(budget_per_gpu, 2),
        kv_token_capacity=int(budget_bytes // per_token_bytes),
        sequence_tokens=sequence,
        max_concurrency=int(budget_bytes // sequence_bytes),
        max_batch_size=engine.max_batch_size * kv_pools,
    )


def fit_problems(deployment: ResolvedDeployment, fits: list[WorkerFit], key: str) -> tuple[list[Problem], list[str]]:
    """Refuse what cannot load, or a batch size the user asked for that the KV cache cannot hold;
    warn when a recipe's own batch size cannot be reached (TRT-LLM then caps concurrency)."""
    problems, warnings = [], []
    gpu_gib = gpu_memory_gib(deployment.gpu_pool)
    for worker, fit in zip(deployment.workers, fits, strict=True):
        role_key = f"{key}.overrides" + (f".{worker.role}" if len(deployment.workers) > 1 else "")
        if fit.kv_budget_gib_per_gpu <= 0 or fit.max_concurrency < 1:
            problems.append(
                Problem(
                    f"{key}.gpus",
                    f"{fit.service}: {fit.weights_gib_per_gpu} GiB of weights per GPU leave no KV cache for one "
                    f"{fit.sequence_tokens}-token sequence on {gpu_gib:.0f} GiB GPUs; use more GPUs per worker",
                )
            )
        elif fit.max_concurrency < fit.max_batch_size:
            message = (
                f"{fit.service}: max_batch_size {fit.max_batch_size} needs KV for {fit.max_batch_size} "
                f"{fit.sequence_tokens}-token sequences; the cache holds about {fit.max_concurrency} "
                f"({fit.kv_token_capacity} tokens)"
            )
            overrides = deployment.config.overrides
            asked = overrides.get(worker.role, {}) if len(deployment.workers) > 1 else overrides
            if "max_batch_size" in asked:
                problems.append(Problem(f"{role_key}.max_batch_size", message))
            else:
                warnings.append(f"{key}: {message} (estimate; TRT-LLM will cap concurrency)")
    return problems, warnings


def placement_problems(deployments: list[ResolvedDeployment], pools: dict[str, NodePool]) -> list[Problem]:
    """First-fit decreasing of every worker pod (GPUs x replicas) of every deployment of a pool
    onto its nodes: a total that fits can still leave no node with room for one worker. A worker
    that must not share a node with another role of its deployment (EFA prefill and decode) is
    kept apart from it, as its pod anti-affinity will. Every role at its most replicas first; then, for
    a deployment whose Planner scales several roles, every split of its GPU budget the Planner may
    choose (it bounds the total, not each role's maximum), the pool's other deployments at their most."""
    problems = []
    for pool_name, pool in pools.items():
        on_pool = [d for d in deployments if d.pool and d.pool.name == pool_name]
        most = {(d.name, w.role): w.most_replicas for d in on_pool for w in d.workers}
        splits: list[tuple[dict[tuple[str, str], int], ResolvedDeployment | None]] = [({}, None)]
        splits += [({**most, **split}, d) for d in on_pool for split in budget_splits(d)]
        for counts, split_of in splits:
            problem = _unplaced(pool, on_pool, most | counts, split_of)
            if problem is not None:
                problems.append(problem)
                break
    return problems


def budget_splits(deployment: ResolvedDeployment) -> list[dict[tuple[str, str], int]]:
    """The most workers of each scaled role the Planner may run together within the deployment's GPU budget
    (every role at least its minimum; none of them could take one more worker), where it scales more than
    one role: a disaggregated graph may run more prefill workers than their maxReplicas, fewer decode ones."""
    scaled = [worker for worker in deployment.workers if worker.scaling is not None]
    if len(scaled) < 2:
        return []
    budget = sum(worker.most_replicas * max(worker.gpus, 1) for worker in scaled)

    def splits(roles: list[Worker], left: int) -> list[list[int]]:
        first, *rest = roles
        assert first.scaling is not None
        gpus = max(first.gpus, 1)
        if not rest:
            return [[left // gpus]] if left // gpus >= first.scaling.min_replicas else []
        floor = sum(w.scaling.min_replicas * max(w.gpus, 1) for w in rest if w.scaling is not None)
        return [
            [count, *tail]
            for count in range(first.scaling.min_replicas, (left - floor) // gpus + 1)
            for tail in splits(rest, left - count * gpus)
        ]

    def full(split: list[int]) -> bool:  # another worker of any role would exceed the budget
        used = sum(count * max(worker.gpus, 1) for worker, count in zip(scaled, split, strict=True))
        return all(used + max(worker.gpus, 1) > budget for worker in scaled)

    return [
        {(deployment.name, worker.role): count for worker, count in zip(scaled, split, strict=True)}
        for split in splits(scaled, budget)
        if full(split)
    ]


def _unplaced(
    pool: NodePool,
    on_pool: list[ResolvedDeployment],
    counts: dict[tuple[str, str], int],
    split_of: ResolvedDeployment | None,
) -> Problem | None:
    """The first worker pod of the pool's deployments, `counts` of each (deployment, role), that no node
    has room for; None when they all fit."""
    pods = _pods(on_pool, counts)
    unplaced = _first_fit(pool, pods)
    if unplaced is None:
        return None
    gpus, name, role, conflicts = unplaced
    need = sum(pod[0] for pod in pods)
    apart_note = "; its prefill and decode workers need different nodes (EFA)" if conflicts else ""
    scaling = next(w.scaling for d in on_pool for w in d.workers if (d.name, w.role) == (name, role))
    at_most = " with every autoscaled role at its maxReplicas" if scaling else ""
    if split_of is not None:
        split = ", ".join(f"{w.service_name} {counts[(split_of.name, w.role)]}" for w in split_of.workers)
        at_most = f" with {split_of.name}'s Planner running {split} within its GPU budget"
    size = (
        f"at most {pool.config.most_nodes} (scaling.maxNodes)" if pool.config.scaling else str(pool.config.most_nodes)
    )
    return Problem(
        f"{scaling.key}.maxReplicas" if scaling else f"{KEY_PREFIX}deployments.{name}.nodePool",
        f"pool {pool.name} ({size} x {pool.instance_type}, "
        f"{pool.instance.gpus_per_node} GPUs each, {pool.total_gpus} in all) cannot place a "
        f"{gpus}-GPU {'' if role == 'worker' else role + ' '}worker: the "
        f"pool's deployments need {need} GPUs{at_most} as {[pod[0] for pod in pods]}{apart_note}; "
        + ("raise maxNodes or reduce " if pool.config.scaling else "add nodes or reduce ")
        + ("maxReplicas" if scaling else "replicas"),
    )


_Pod = tuple[int, str, str, str | None]  # GPUs, deployment, role, the role it is kept apart from


def _pods(on_pool: list[ResolvedDeployment], counts: dict[tuple[str, str], int]) -> list[_Pod]:
    """Each worker pod, `counts` of each (deployment, role), largest first."""
    return sorted(
        (
            (worker.gpus, d.name, worker.role, worker.efa.apart_from if worker.efa else None)
            for d in on_pool
            for worker in d.workers
            for _ in range(counts[(d.name, worker.role)])
        ),
        reverse=True,
        key=lambda pod: pod[:3],
    )


def _first_fit(pool: NodePool, pods: list[_Pod]) -> tuple[int, str, str, set[tuple[str, str]]] | None:
    """The pods on the pool's nodes in turn, each on the first with room that holds no worker it is kept
    apart from; the first that no node takes (its GPUs, deployment, role, what it is kept apart from), or None."""
    return _packed(pool.instance.gpus_per_node, pool.config.most_nodes, pods)[1]


def _packed(
    gpus_per_node: int, nodes: int, pods: list[_Pod]
) -> tuple[int, tuple[int, str, str, set[tuple[str, str]]] | None]:
    """First-fit of `pods` onto `nodes` nodes: how many nodes hold a pod, and the first pod none takes."""
    free = [gpus_per_node] * nodes
    placed: list[set[tuple[str, str]]] = [set() for _ in free]  # (deployment, role) on each node
    kept_apart = {(name, role, avoid) for _, name, role, avoid in pods if avoid}
    for gpus, name, role, _ in pods:
        conflicts = {(name, b) for n, a, b in kept_apart if n == name and a == role}
        conflicts |= {(name, a) for n, a, b in kept_apart if n == name and b == role}
        node = next((i for i, room in enumerate(free) if room >= gpus and not placed[i] & conflicts), None)
        if node is None:
            return sum(1 for held in placed if held), (gpus, name, role, conflicts)
        free[node] -= gpus
        placed[node].add((name, role))
    return sum(1 for held in placed if held), None


def nodes_at_minimum(pool: NodePool, deployments: list[ResolvedDeployment]) -> int:
    """The nodes the pool's graphs hold with every role at its fewest workers (first-fit, as placement
    checks them): the fewest an elastic pool keeps while they run, since Karpenter keeps no empty node."""
    on_pool = [d for d in deployments if d.pool and d.pool.name == pool.name]
    fewest = {(d.name, w.role): w.fewest_replicas for d in on_pool for w in d.workers}
    pods = _pods(on_pool, fewest)
    return _packed(pool.instance.gpus_per_node, len(pods), pods)[0]


def floor_problems(deployments: list[ResolvedDeployment], pools: dict[str, NodePool]) -> list[Problem]:
    """An elastic pool's minNodes is at most what its graphs' fewest workers hold: Karpenter keeps no node
    that no pod needs, so a higher floor would be a figure the pool never keeps."""
    problems = []
    for name, pool in pools.items():
        scaling = pool.config.scaling
        if scaling is None:
            continue
        problems += floor_problem(name, scaling.min_nodes, nodes_at_minimum(pool, deployments))
    return problems


def floor_problem(pool: str, min_nodes: int, held: int) -> list[Problem]:
    """An elastic pool's minNodes (GPU or cpu) against the nodes its graphs' fewest workers hold."""
    if min_nodes <= held:
        return []
    return [
        Problem(
            f"{KEY_PREFIX}nodePools.{pool}.scaling.minNodes",
            f"{min_nodes}, but the pool's graphs at their fewest workers hold {held} node(s), and Karpenter keeps "
            f"no node that no worker needs: set minNodes to at most {held}, or raise the graphs' minReplicas",
        )
    ]


def kv_dtype_problems(deployments: list[ResolvedDeployment], model: ModelSpec) -> list[Problem]:
    """The KV cache's element size comes from configs/model.yaml: a dtype it does not list cannot
    be sized (nor, most likely, served: TensorRT-LLM knows the same few)."""
    known = model.kv_bytes_per_element
    problems = []
    for deployment in deployments:
        for worker in deployment.workers if deployment.pool else []:  # CPU workers: no GPU memory to size
            dtype = deployment.backend.view(worker.engine).kv_cache_dtype
            if dtype not in known:
                key = f"{KEY_PREFIX}deployments.{deployment.name}.overrides.kv_cache_config.dtype"
                problems.append(Problem(key, f"{dtype!r} is not a KV cache dtype: one of {', '.join(known)}"))
    return problems


# FSx for Lustre PERSISTENT_2 sizes: 1,200 GiB, then multiples of 2,400 GiB (FSx API reference).
FSX_MIN_GIB, FSX_STEP_GIB = 1200, 2400


def fsx_capacity_gib(size: str) -> int:
    """The FSx for Lustre file system a cache of `size` needs: its smallest capacity that holds it."""
    wanted = math.ceil(gibibytes(size))
    if wanted <= FSX_MIN_GIB:
        return FSX_MIN_GIB
    return math.ceil(wanted / FSX_STEP_GIB) * FSX_STEP_GIB
