"""What a stack deploys, as plain data (stack outputs) and as Markdown (the plan summary)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from core.aws.capacity import BlockPlan
from core.backends import EngineView
from core.cluster_plan import ClusterPlan
from core.inputs.catalog import Performance, Traffic
from core.inputs.config import EndpointConfig
from core.render.gateway import ENVOY_REPLICAS, Gateway
from core.render.manifests import FRONTEND_PORT, frontend_service_name
from core.resolve.efa import crosses_nodes
from core.resolve.recipes import NodePool, ResolvedDeployment, Worker
from core.resolve.sizing import WorkerFit
from core.stack import Serving, Stack


def stack_report(stack: Stack, performance: Performance, cluster: ClusterPlan) -> dict[str, Any]:
    """Node pools and deployments with their topology; exported as stack outputs."""
    config = stack.config
    blocks = cluster.blocks
    return {
        "environment": config.environment,
        "apiAccess": cluster.api_access,
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
                "efa": stack.efa_pools[name],
            }
            | ({"capacityBlock": _block_report(blocks[name])} if name in blocks else {})
            for name, pool in stack.pools.items()
        },
        "deployments": {
            serving.deployment.name: _deployment_report(serving, config.namespace, config.release.model, performance)
            for serving in stack.serving
        },
        "warnings": stack.warnings + cluster.warnings,
    }


def _block_report(plan: BlockPlan) -> dict[str, Any]:
    block = plan.block
    scale_up = next((s for s in plan.schedules if s.desired > 0), None)
    return {
        "reservation": block.reservation_id,
        "state": block.state,
        "start": _timestamp(block.start),
        "end": _timestamp(block.end),
        # When the pool's nodes come: at the scheduled scale-up, now, or never (an ended block).
        "nodesAppear": "now" if plan.nodes_now else (_timestamp(scale_up.at) if scale_up else "never"),
        "drainedAt": _timestamp(plan.drained_at),
    }


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _pool_usd_per_hour(pool: NodePool) -> float | None:
    price = pool.instance.on_demand_usd_per_hour
    return None if price is None else round(price * pool.config.nodes, 2)


def _deployment_report(serving: Serving, namespace: str, model: str, performance: Performance) -> dict[str, Any]:
    deployment = serving.deployment
    pool, traffic = deployment.pool, deployment.recipe.traffic
    gpus = deployment.total_gpus
    service = frontend_service_name(deployment.name)
    usd_per_hour = None if deployment.usd_per_hour is None else round(deployment.usd_per_hour, 2)
    report = {
        "recipe": deployment.recipe_name,
        "mode": deployment.recipe.mode,
        "nodePool": pool.name,
        "gpus": gpus,
        "nodes": -(-gpus // pool.instance.gpus_per_node),  # at least; placement may use more
        "usdPerHour": usd_per_hour,
        "traffic": {
            "inputTokens": traffic.input_tokens,
            "outputTokens": traffic.output_tokens,
            "concurrency": traffic.concurrency_per_gpu * gpus,
        },
        "estimate": _throughput_estimate(performance, pool.config.hardware, traffic, gpus, usd_per_hour),
        "routerMode": deployment.config.router_mode,
        "kvTransfer": _kv_transfer(deployment),
        # What `pulumi up` checks before it ends (core.render.smoke_test), or why it cannot yet.
        "smokeTestJob": serving.smoke_test.job["metadata"]["name"] if serving.smoke_test else None,
        "notCheckedBecause": serving.deferred,
        "frontend": f"{service}.{namespace}",
        "endpoint": f"http://{service}.{namespace}.svc.cluster.local:{FRONTEND_PORT}",
        "tryIt": (
            f"kubectl port-forward svc/{service} {FRONTEND_PORT}:{FRONTEND_PORT} -n {namespace} & "
            f"curl -s http://localhost:{FRONTEND_PORT}/v1/chat/completions -H 'Content-Type: application/json' "
            f'-d \'{{"model":"{model}","messages":[{{"role":"user","content":"Ready?"}}],"max_tokens":64}}\''
        ),
        "health": f"curl -s http://localhost:{FRONTEND_PORT}/health",
        "workers": {
            worker.service_name: _worker_report(worker, deployment.backend.view(worker.engine), fit)
            for worker, fit in zip(deployment.workers, serving.fits, strict=True)
        },
    }
    if serving.gateway is not None:
        report["gateway"] = _gateway_report(serving.gateway, deployment.config.endpoint)
    return report


def _gateway_report(gateway: Gateway, endpoint: EndpointConfig) -> dict[str, Any]:
    limit = endpoint.rate_limit
    return {
        "exposure": endpoint.exposure,
        "url": gateway.url or "the NLB's DNS name, once it exists (stack output gateways)",
        "tls": "on the NLB, ACM certificate" if endpoint.certificate_arn else "none (plain HTTP)",
        "rateLimit": f"{limit.requests} requests per {limit.unit.lower()} per API key and gateway replica "
        f"({ENVOY_REPLICAS} replicas)"
        + (f"; own limits for {', '.join(sorted(endpoint.client_rate_limits))}" if endpoint.client_rate_limits else ""),
        "curl": gateway.curl,
    }


def _kv_transfer(deployment: ResolvedDeployment) -> str:
    if deployment.recipe.mode == "aggregated" and not crosses_nodes(deployment):
        return "none (aggregated workers)"
    if not crosses_nodes(deployment):
        return "within one node"
    devices = [f"{worker.role} {worker.efa.devices}" for worker in deployment.workers if worker.efa]
    if devices:
        return f"between nodes over EFA (EFA devices per worker: {', '.join(devices)}; NIXL LIBFABRIC)"
    return "between nodes over TCP: no EFA (see warnings)"


def _throughput_estimate(
    performance: Performance, hardware: str, traffic: Traffic, gpus: int, usd_per_hour: float | None
) -> dict[str, Any]:
    """Published max-load tokens/s/GPU for the nearest traffic shape; an estimate, labelled so."""
    shape = min(performance.tokens_per_gpu_second, key=lambda name: abs(_input_tokens(name) - traffic.input_tokens))
    per_gpu = performance.tokens_per_gpu_second[shape].get(hardware)
    per_second = None if per_gpu is None else per_gpu * gpus
    usd_per_million = None
    if per_second and usd_per_hour is not None:
        usd_per_million = round(usd_per_hour / (per_second * 3600) * 1e6, 3)
    return {
        "basis": f"{performance.source}, {shape}: an estimate, not a measurement of this recipe",
        "tokensPerGpuSecond": per_gpu,
        "tokensPerSecond": per_second,
        "usdPerMillionTokens": usd_per_million,
    }


def _input_tokens(shape: str) -> int:
    """'8k/1k' -> 8192."""
    return int(shape.split("/")[0].removesuffix("k")) * 1024


def _worker_report(worker: Worker, engine: EngineView, fit: WorkerFit) -> dict[str, Any]:
    return {
        "role": worker.role,
        "replicas": worker.replicas,
        "gpusPerWorker": worker.gpus,
        "tensorParallel": engine.tensor_parallel,
        "expertParallel": engine.expert_parallel,
        "attentionDataParallel": engine.attention_data_parallel,
        "moeBackend": engine.moe_backend,
        "weightsGiBPerGpu": fit.weights_gib_per_gpu,
        "kvCacheGiBPerGpu": fit.kv_budget_gib_per_gpu,
        "kvTokenCapacity": fit.kv_token_capacity,
        "maxConcurrency": fit.max_concurrency,
        "maxBatchSize": fit.max_batch_size,
    }


def render_summary(
    project: str, stack_name: str, report: dict[str, Any], resource_types: list[str], critical_path: list[str]
) -> str:
    """The plan's summary.md; `critical_path`: its lines (tools/critical_path.py), from the dependency graph."""
    release = report["release"]
    lines = [
        f"# Plan: {project} / {stack_name}",
        "",
        f"- environment: {report['environment']}",
        f"- release: Dynamo {release['dynamo']}, image `{release['runtimeImage']}`, "
        f"model {release['model']}@{release['modelRevision'][:12]}",
        f"- Kubernetes API: {report['apiAccess']}",
        "",
        "## Node pools",
        "",
        "| pool | hardware | instance type | nodes | GPUs/node | GPUs | capacity | EFA | $/hour (est.) |",
        "|---|---|---|---:|---:|---:|---|---|---:|",
    ]
    for name, pool in report["nodePools"].items():
        cost = _money(pool["usdPerHour"]).removeprefix("$")
        lines.append(
            f"| {name} | {pool['hardware']} | {pool['instanceType']} | {pool['nodes']} "
            f"| {pool['gpusPerNode']} | {pool['gpus']} | {pool['capacityType']} | {'yes' if pool['efa'] else 'no'} "
            f"| {cost} |"
        )
    lines += [
        "",
        "$/hour: on-demand list price in us-east-1 (configs/hardware.yaml) x nodes; an estimate that "
        "ignores spot, reservation and Capacity Block prices and the system nodes.",
    ]
    for name, pool in report["nodePools"].items():
        block = pool.get("capacityBlock")
        if block:
            lines.append(
                f"- {name}: Capacity Block {block['reservation']} ({block['state']}, {_when(block['start'])} to "
                f"{_when(block['end'])}): nodes appear {_when(block['nodesAppear'])}, drained to 0 at "
                f"{_when(block['drainedAt'])}"
            )
    if any(pool.get("capacityBlock") for pool in report["nodePools"].values()):
        lines.append(
            "- Block windows come from EC2 at `pulumi up`; in an offline plan the mock gives every block a "
            "placeholder window (tools/mock_engine.py)."
        )
    lines += ["", "## Deployments", ""]
    if not report["deployments"]:
        lines.append("(none)")
    for name, deployment in report["deployments"].items():
        estimate, traffic = deployment["estimate"], deployment["traffic"]
        lines += [
            f"### {name}",
            "",
            f"- recipe: {deployment['recipe']} ({deployment['mode']}), pool {deployment['nodePool']}, "
            f"{deployment['gpus']} GPUs on at least {deployment['nodes']} node(s), "
            f"cost {_money(deployment['usdPerHour'])} per hour (est.)",
            f"- traffic shape: {traffic['inputTokens']} in / {traffic['outputTokens']} out, "
            f"concurrency {traffic['concurrency']}",
            f"- throughput (estimate): {_number(estimate['tokensPerGpuSecond'])} tok/s/GPU, "
            f"{_number(estimate['tokensPerSecond'])} tok/s, {_money(estimate['usdPerMillionTokens'])} per million "
            f"tokens ({estimate['basis']})",
            f"- endpoint: {deployment['endpoint']} (router {deployment['routerMode']})",
            f"- `pulumi up` waits for the graph to be Ready, then for smoke-test Job {deployment['smokeTestJob']} "
            "to get a chat completion with content"
            if deployment["smokeTestJob"]
            else f"- `pulumi up` does not wait for serving yet: {deployment['notCheckedBecause']}",
            f"- KV transfer: {deployment['kvTransfer']}",
            f"- try it: `{deployment['tryIt']}`; health: `{deployment['health']}`",
            *_gateway_lines(deployment.get("gateway")),
            "",
            "| service | role | replicas | GPUs/worker | TP | EP | attention DP | MoE backend "
            "| weights GiB/GPU | KV GiB/GPU | KV tokens | max concurrency | max batch |",
            "|---|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|",
        ]
        for service, worker in deployment["workers"].items():
            lines.append(
                f"| {service} | {worker['role']} | {worker['replicas']} | {worker['gpusPerWorker']} "
                f"| {worker['tensorParallel']} | {worker['expertParallel']} "
                f"| {'on' if worker['attentionDataParallel'] else 'off'} | {worker['moeBackend']} "
                f"| {worker['weightsGiBPerGpu']} | {worker['kvCacheGiBPerGpu']} | {worker['kvTokenCapacity']:,} "
                f"| {worker['maxConcurrency']:,} | {worker['maxBatchSize']:,} |"
            )
        lines.append("")
    if report["warnings"]:
        lines += ["## Warnings", "", *(f"- {warning}" for warning in report["warnings"]), ""]
    lines += [
        "KV and concurrency figures are estimates from weights and KV cache alone (core/resolve/sizing.py); "
        "activations and CUDA graphs use part of the same memory.",
        "",
    ]
    counts = Counter(resource_types)
    lines += critical_path
    lines += [
        f"## Resources ({len(resource_types)})",
        "",
        *(f"- {count} x `{type_}`" for type_, count in sorted(counts.items())),
        "",
    ]
    return "\n".join(lines)


def _gateway_lines(gateway: dict[str, Any] | None) -> list[str]:
    if gateway is None:
        return []
    return [
        f"- gateway ({gateway['exposure']} NLB, API keys, 401 without one): {gateway['url']}; TLS {gateway['tls']}; "
        f"{gateway['rateLimit']}",
        f"- call it: `{gateway['curl']}`",
    ]


def _when(timestamp: str) -> str:
    """2030-01-07T11:30:00Z -> 2030-01-07 11:30 UTC ('now', 'never' as they are)."""
    if "T" not in timestamp:
        return timestamp
    return timestamp.replace("T", " ")[:16] + " UTC"


def _money(value: float | None) -> str:
    return "n/a (no on-demand price)" if value is None else f"${value:,.2f}" if value >= 1 else f"${value:.3f}"


def _number(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"
