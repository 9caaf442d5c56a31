"""What a stack deploys, as plain data (stack outputs) and as Markdown (the plan summary)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from core.manifests import frontend_service_name
from core.recipes import Pool, ResolvedDeployment, Worker
from core.stack import Stack


def stack_report(stack: Stack) -> dict[str, Any]:
    """Node pools and deployments with their topology; exported as stack outputs."""
    config = stack.config
    return {
        "environment": config.environment,
        "release": config.release.model_dump(by_alias=True),
        "nodePools": {
            name: {
                "hardware": pool.config.hardware,
                "instanceType": pool.instance_type,
                "nodes": pool.config.nodes,
                "gpusPerNode": pool.instance.gpus_per_node,
                "gpus": pool.total_gpus,
                "capacityType": pool.config.capacity_type,
                # Estimate: catalog on-demand price (us-east-1) x nodes; None where AWS publishes none.
                "usdPerHour": _pool_usd_per_hour(pool),
            }
            for name, pool in stack.pools.items()
        },
        "deployments": {
            deployment.name: _deployment_report(deployment, config.namespace)
            for deployment in stack.deployments
        },
    }


def _pool_usd_per_hour(pool: Pool) -> float | None:
    price = pool.instance.on_demand_usd_per_hour
    return None if price is None else round(price * pool.config.nodes, 2)


def _deployment_report(deployment: ResolvedDeployment, namespace: str) -> dict[str, Any]:
    return {
        "recipe": deployment.recipe_name,
        "mode": deployment.recipe.mode,
        "nodePool": deployment.pool.name,
        "gpus": deployment.total_gpus,
        "routerMode": deployment.config.router_mode,
        "frontend": f"{frontend_service_name(deployment.name)}.{namespace}",
        "workers": {worker.service_name: _worker_report(worker) for worker in deployment.workers},
    }


def _worker_report(worker: Worker) -> dict[str, Any]:
    engine = worker.engine
    return {
        "role": worker.role,
        "replicas": worker.replicas,
        "gpusPerWorker": worker.gpus,
        "tensorParallel": engine.get("tensor_parallel_size", 1),
        "expertParallel": engine.get("moe_expert_parallel_size"),
        "attentionDataParallel": engine.get("enable_attention_dp", False),
        "moeBackend": engine.get("moe_config", {}).get("backend"),
    }


def render_summary(project: str, stack_name: str, report: dict[str, Any], resource_types: list[str]) -> str:
    release = report["release"]
    lines = [
        f"# Plan: {project} / {stack_name}",
        "",
        f"- environment: {report['environment']}",
        f"- release: Dynamo {release['dynamo']}, image `{release['runtimeImage']}`, "
        f"model {release['model']}@{release['modelRevision'][:12]}",
        "",
        "## Node pools",
        "",
        "| pool | hardware | instance type | nodes | GPUs/node | GPUs | capacity | $/hour (est.) |",
        "|---|---|---|---:|---:|---:|---|---:|",
    ]
    for name, pool in report["nodePools"].items():
        cost = "n/a (no on-demand price)" if pool["usdPerHour"] is None else f"{pool['usdPerHour']:,.2f}"
        lines.append(
            f"| {name} | {pool['hardware']} | {pool['instanceType']} | {pool['nodes']} "
            f"| {pool['gpusPerNode']} | {pool['gpus']} | {pool['capacityType']} | {cost} |"
        )
    lines += [
        "",
        "$/hour: on-demand list price in us-east-1 (configs/hardware.yaml) x nodes; an estimate that "
        "ignores spot, reservation and Capacity Block prices and the system nodes.",
    ]
    lines += ["", "## Deployments", ""]
    if not report["deployments"]:
        lines.append("(none)")
    for name, deployment in report["deployments"].items():
        lines += [
            f"### {name}",
            "",
            f"- recipe: {deployment['recipe']} ({deployment['mode']}), pool {deployment['nodePool']}, "
            f"{deployment['gpus']} GPUs",
            f"- frontend: {deployment['frontend']} (router {deployment['routerMode']})",
            "",
            "| service | role | replicas | GPUs/worker | TP | EP | attention DP | MoE backend |",
            "|---|---|---:|---:|---:|---:|---|---|",
        ]
        for service, worker in deployment["workers"].items():
            lines.append(
                f"| {service} | {worker['role']} | {worker['replicas']} | {worker['gpusPerWorker']} "
                f"| {worker['tensorParallel']} | {worker['expertParallel']} "
                f"| {'on' if worker['attentionDataParallel'] else 'off'} | {worker['moeBackend']} |"
            )
        lines.append("")
    counts = Counter(resource_types)
    lines += [
        f"## Resources ({len(resource_types)})",
        "",
        *(f"- {count} x `{type_}`" for type_, count in sorted(counts.items())),
        "",
    ]
    return "\n".join(lines)
