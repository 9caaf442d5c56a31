"""EFA: which pools get it, which workers use it, and how a node's EFA interfaces are laid out.

A pool gets EFA interfaces when one of its deployments moves KV cache between nodes (or the pool's
`efa` says so): a worker wider than a node, or a disaggregated deployment whose prefill and decode
workers can land on different nodes. Those workers request their GPUs' share of the node's EFA
devices and run with the settings of Dynamo's EFA guide (configs/efa.yaml for the pod, the
backend's configs/backends/<name>.yaml for its engine and env), in the Dynamo release's EFA
runtime image for that backend. Pools where nothing crosses nodes stay without EFA: the interfaces
cost IP addresses and a placement group, and buy nothing there.

  [dynamo-disagg] ai-dynamo/dynamo docs/kubernetes/disagg-communication-guide.md ("Pod Anti-Affinity
                  (Required): ... Prefill and decode workers must be scheduled on different nodes
                  to avoid EAGAIN errors"), in the 1.2 release line
"""

from __future__ import annotations

import dataclasses
import math

from gpt_oss_infra.core.backends import BackendEfa
from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.inputs.catalog import EfaPodSettings
from gpt_oss_infra.core.inputs.config import KEY_PREFIX
from gpt_oss_infra.core.mappings import deep_merge
from gpt_oss_infra.core.resolve.recipes import NodePool, ResolvedDeployment, WorkerEfa


def crosses_nodes(deployment: ResolvedDeployment) -> bool:
    """KV cache (or a worker's own tensors) can travel between nodes. A CPU deployment's (the mocker's)
    KV cache is simulated: nothing travels."""
    if deployment.pool is None:
        return False
    per_node = deployment.pool.instance.gpus_per_node
    if any(worker.gpus > per_node for worker in deployment.workers):
        return True
    if deployment.recipe.mode != "disaggregated":
        return False
    return deployment.pool.config.most_nodes > 1 or deployment.total_gpus > per_node


def efa_image(dynamo: DynamoVersion, deployment: ResolvedDeployment) -> str | None:
    """The Dynamo release's EFA runtime image for the deployment's backend and node CPU architecture."""
    images = dynamo.spec.efa_runtime_images.get(deployment.recipe.backend, {})
    return images.get(deployment.gpu_pool.hardware.cpu_architecture)


def pool_gets_efa(pool: NodePool, wanted_by_deployments: bool) -> bool:
    """Whether a pool's nodes get EFA interfaces: as its `efa` says, else where its deployments' KV cache
    crosses nodes on an EFA image; never on an instance type without them."""
    wanted = pool.config.efa if pool.config.efa is not None else wanted_by_deployments
    return wanted and pool.instance.efa_interfaces > 0


def pool_efa(
    pools: dict[str, NodePool], deployments: list[ResolvedDeployment], dynamo: DynamoVersion
) -> tuple[dict[str, bool], list[str]]:
    """Whether each pool gets EFA interfaces, and warnings for KV transfer that will run over TCP."""
    efa, warnings = {}, []
    for name, pool in pools.items():
        crossing = [d for d in deployments if crosses_nodes(d) and d.gpu_pool.name == name]
        with_image = [d for d in crossing if efa_image(dynamo, d)]
        efa[name] = pool_gets_efa(pool, wanted_by_deployments=bool(with_image))
        for deployment in crossing:
            why = None
            if deployment not in with_image:
                why = (
                    f"Dynamo {dynamo.version} publishes no {deployment.backend.spec.title} EFA runtime image for "
                    f"{pool.hardware.cpu_architecture} nodes (configs/dynamo/versions.yaml)"
                )
            elif not efa[name]:
                why = f"node pool {name} has no EFA (nodePools.{name}.efa)"
            if why:
                warnings.append(
                    f"{KEY_PREFIX}deployments.{deployment.name}: its KV cache moves between nodes, but {why}: "
                    "the transfer falls back to TCP, which upstream reports as seconds of TTFT (ai-dynamo/dynamo#4185)"
                )
            elif "efaRuntimeImages" in dynamo.spec.unverified:
                image = efa_image(dynamo, deployment)
                warnings.append(
                    f"{KEY_PREFIX}deployments.{deployment.name}: its workers run {image}, a tag no Dynamo "
                    f"{dynamo.version} artifact list read here names (configs/dynamo/versions.yaml): make "
                    "check-versions looks it up in the registry"
                )
    return efa, warnings


def with_efa(
    deployment: ResolvedDeployment, efa_pools: dict[str, bool], dynamo: DynamoVersion, pod: EfaPodSettings
) -> ResolvedDeployment:
    """The deployment with EFA on each worker, when its KV cache crosses nodes of an EFA pool
    (efa_pools, from pool_efa): its GPUs' share of the node's EFA devices (rounded up), the EFA
    image, and the guide's engine and env settings (the backend's) on top of the recipe's."""
    if not (crosses_nodes(deployment) and efa_pools[deployment.gpu_pool.name]):
        return deployment
    image = efa_image(dynamo, deployment)
    backend_efa: BackendEfa | None = deployment.backend.spec.efa
    if not (image and backend_efa):
        return deployment
    instance = deployment.gpu_pool.instance
    workers = [
        dataclasses.replace(
            worker,
            engine=deep_merge(worker.engine, backend_efa.engine),
            env=worker.env | backend_efa.env,
            efa=WorkerEfa(
                devices=math.ceil(worker.gpus * instance.efa_interfaces / instance.gpus_per_node),
                image=image,
                pod=pod,
                apart_from="prefill" if worker.role == "decode" else None,
            ),
        )
        for worker in deployment.workers
    ]
    return dataclasses.replace(deployment, workers=workers)
