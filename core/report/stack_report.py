"""What a stack deploys, as plain data (stack outputs) and as Markdown (the plan summary)."""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gpt_oss_infra.core.backends import EngineView
from gpt_oss_infra.core.checks.stack_checks import cpu_pools_at_fewest, object_pods
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, EksClusterConfig, EndpointConfig, NodePoolConfig, StackConfig
from gpt_oss_infra.core.inputs.rules import has_load_balancer_controller, loads_weights
from gpt_oss_infra.core.render.aws.capacity import BlockPlan
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan
from gpt_oss_infra.core.render.gateway import ENVOY_REPLICAS, IN_CLUSTER_SERVICE, Gateway
from gpt_oss_infra.core.render.manifests import FRONTEND_PORT, frontend_service_name
from gpt_oss_infra.core.render.planner import CONFIG_FILE
from gpt_oss_infra.core.render.stack_objects import Serving, Stack
from gpt_oss_infra.core.report import figures
from gpt_oss_infra.core.report.simulated import change, kept, simulated_report
from gpt_oss_infra.core.resolve import cost
from gpt_oss_infra.core.resolve.efa import crosses_nodes
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment, Worker
from gpt_oss_infra.core.resolve.sizing import WorkerFit


def stack_report(stack: Stack, catalog: Catalog, cluster: ClusterPlan, region: str | None) -> dict[str, Any]:
    """Node pools, cost and deployments with their topology; exported as stack outputs."""
    config = stack.config
    blocks = cluster.blocks
    created = isinstance(config.cluster, EksClusterConfig)
    pools = cost.pool_costs(stack.pools, stack.deployments, catalog.prices, region, created)
    cpu_pools = {
        name: (*cost.cpu_pool_lines(name, config.node_pools[name], fewest, catalog.prices, region), fewest)
        for name, fewest in cpu_pools_at_fewest(stack, catalog, object_pods(stack.objects())).items()
    }
    gateways = sum(1 for serving in stack.serving if serving.gateway)
    pool_lines = [pool.line for pool in pools.values()] + [most for most, _, _ in cpu_pools.values()]
    lines = cost.stack_cost(catalog, config, pool_lines, region, gateways, loads_weights(config, catalog))
    known, unknown = cost.total(lines)
    deployments = {
        serving.deployment.name: _deployment_report(serving, config, catalog, pools) for serving in stack.serving
    }
    return {
        "environment": config.environment,
        "region": region,
        "apiAccess": cluster.api_access,
        "release": config.release.model_dump(by_alias=True),
        "nodePools": {
            name: {
                "hardware": pool.config.hardware,
                "instanceType": pool.instance_type,
                "nodes": pool.config.most_nodes,
                "gpusPerNode": pool.instance.gpus_per_node,
                "gpus": pool.total_gpus,
                "gpusUsed": pools[name].gpus_used,
                "gpusIdle": pools[name].gpus_idle,
                "capacityType": pool.config.capacity_type,
                "usdPerHour": _rounded(pools[name].line.usd_per_hour),
                "efa": stack.efa_pools[name],
            }
            | ({"capacityBlock": _block_report(blocks[name])} if name in blocks else {})
            | ({"scaling": _elastic_report(pools[name], stack, catalog)} if pool.config.scaling else {})
            for name, pool in stack.pools.items()
        }
        | {name: _cpu_pool_report(config.node_pools[name], *lines, catalog) for name, lines in cpu_pools.items()},
        "cost": {
            "lines": [
                {
                    "item": line.item,
                    "quantity": line.quantity,
                    "usdPerHour": _rounded(line.usd_per_hour),
                    "basis": line.basis,
                }
                for line in lines
            ],
            "knownUsdPerHour": round(known, 2),
            "unknown": unknown,
            "pricesReadOn": catalog.prices.read_on.isoformat(),
        },
        "deployments": deployments,
        "warnings": stack.warnings
        + cluster.warnings
        + cost.region_warnings(catalog.prices, region, created)
        + _idle_pool_warnings(pools)
        + _planner_sla_warnings(deployments),
    }


# How many percentage points fewer requests than static at the peak size the Planner may keep within the SLA on
# the simulated day before the plan warns: ours, not a published figure.
SLA_SHORTFALL_POINTS = 5


def _planner_sla_warnings(deployments: dict[str, dict[str, Any]]) -> list[str]:
    """An autoscaled deployment whose replayed day (make simulate) kept clearly fewer requests within its targets
    with the Planner than at a fixed peak size: its targets are what the Planner aims at, not what it keeps."""
    warnings = []
    for name, report in deployments.items():
        autoscaling, simulated = report.get("autoscaling"), report.get("simulated")
        if autoscaling is None or simulated is None or "planner" not in simulated["day"]:
            continue
        planner, static = simulated["day"]["planner"]["withinSla"], simulated["day"]["static"]["withinSla"]
        if planner is not None and static is not None and planner < static - SLA_SHORTFALL_POINTS:
            warnings.append(
                f"{KEY_PREFIX}deployments.{name}.autoscaling: on the simulated day ({simulated['basis']}) the Planner "
                f"kept {planner:g}% of requests within TTFT {autoscaling['ttftMs']:g} ms and ITL "
                f"{autoscaling['itlMs']:g} ms, a fixed peak size {static:g}%: replay your own traffic (make simulate) "
                "before relying on these targets, or relax them (docs/autoscaling.md)"
            )
    return warnings


def _idle_pool_warnings(pools: dict[str, cost.PoolCost]) -> list[str]:
    """A GPU pool no deployment uses still bills every node."""
    return [
        f"{KEY_PREFIX}nodePools.{name}: its {pool.pool.total_gpus} GPUs serve no deployment, and still cost "
        + (
            f"${pool.line.usd_per_hour:,.2f} per hour"
            if pool.line.usd_per_hour is not None
            else "their price (unknown)"
        )
        for name, pool in pools.items()
        if pool.gpus_used == 0 and pool.pool.config.nodes  # an elastic pool keeps no node no worker needs
    ]


def _elastic_report(pool: cost.PoolCost, stack: Stack, catalog: Catalog) -> dict[str, Any]:
    """An elastic pool's bounds and GPU budget, what it costs at both ends and over make simulate's day, and
    a new node's wait."""
    assert pool.fewest is not None and pool.fewest_nodes is not None, "an elastic pool's"
    return _scaling_report(
        pool.pool.config,
        {"gpuBudget": pool.pool.total_gpus},
        (pool.fewest_nodes, pool.fewest, pool.line),
        _simulated_day(pool, stack, catalog),
        True,
        catalog,
    )


def _scaling_report(
    config: NodePoolConfig,
    budget: dict[str, int],
    costs: tuple[int, cost.CostLine, cost.CostLine],
    simulated_day: dict[str, Any],
    weights: bool,
    catalog: Catalog,
) -> dict[str, Any]:
    """An elastic pool's bounds, its budget, its cost at its fewest (`costs`: those nodes, that line) and its
    most, and a new node's wait for graphs that load `weights` or none."""
    scaling = config.scaling
    assert scaling is not None, "an elastic pool's"
    fewest_nodes, fewest, most = costs
    chart = catalog.charts["karpenter"]
    return {
        "provisioner": f"Karpenter {chart.version} (chart {chart.repo}/{chart.chart})",
        "minNodes": scaling.min_nodes,
        "maxNodes": scaling.max_nodes,
        **budget,
        "nodesAtFewest": fewest_nodes,
        "usdPerHourAtFewest": _rounded(fewest.usd_per_hour),
        "usdPerHourAtMost": _rounded(most.usd_per_hour),
        "simulatedDay": simulated_day,
        "coldStartMinutes": list(catalog.karpenter.cold_start_minutes(weights)),
        "coldStart": [phase.model_dump(by_alias=True) for phase in catalog.karpenter.cold_start_phases(weights)],
    }


def _cpu_pool_report(
    config: NodePoolConfig, most: cost.CostLine, fewest: cost.CostLine, fewest_nodes: int, catalog: Catalog
) -> dict[str, Any]:
    """A cpu pool (elastic, Karpenter's) in the node pools' table: no GPU, its vCPUs the NodePool's limit."""
    vcpus = catalog.nodes.instance_types[config.instance_type or ""].vcpus or 0
    return {
        "hardware": config.hardware,
        "instanceType": config.instance_type,
        "nodes": config.most_nodes,
        "gpusPerNode": 0,
        "gpus": 0,
        "gpusUsed": 0,
        "gpusIdle": 0,
        "capacityType": config.capacity_type,
        "usdPerHour": _rounded(most.usd_per_hour),
        "efa": False,
        # A cpu pool's graphs (the mocker's) load no weights: they wait for the node alone.
        "scaling": _scaling_report(
            config,
            {"cpuBudget": config.most_nodes * vcpus},
            (fewest_nodes, fewest, most),
            {"usdPerHour": None, "basis": "not simulated: make simulate replays GPU recipes only"},
            False,
            catalog,
        ),
    }


def _simulated_day(pool: cost.PoolCost, stack: Stack, catalog: Catalog) -> dict[str, Any]:
    """What the pool costs per hour over make simulate's day, from the replays of its graphs with their
    Planners (a fixed graph's at its size): their GPU-hours at the pool's price per GPU, as if nodes came and
    went with the workers (Karpenter keeps an empty node consolidateAfter longer)."""
    on_pool = [d for d in stack.deployments if d.pool and d.pool.name == pool.pool.name]
    per_gpu_hour = (pool.line.usd_per_hour or 0) / pool.pool.total_gpus if pool.line.usd_per_hour else None
    gpu_hours = 0.0
    keys = []
    for deployment in on_pool:
        simulated = simulated_report(catalog, deployment)
        day = simulated["day"] if simulated else {}
        run = day.get("planner") or day.get("static")
        if simulated is None or run is None:
            return {"usdPerHour": None, "basis": f"not simulated: make simulate has no replay of {deployment.name}"}
        gpu_hours += run["gpuHours"]
        keys.append(simulated["basis"].removeprefix("simulated: "))
    usd = None
    if per_gpu_hour is not None and on_pool:
        # Never below the whole nodes the graphs hold at their minimum workers.
        usd = round(max(gpu_hours * per_gpu_hour / 24, pool.fewest.usd_per_hour or 0), 2) if pool.fewest else None
    return {
        "usdPerHour": usd,
        "gpuHoursPerDay": round(gpu_hours, 1),
        "basis": "; ".join(keys)
        + "; a lower bound: its GPU-hours at the pool's price per GPU, not below its fewest nodes' cost, while EC2 "
        "bills whole nodes, workers kept apart need more of them, a new node bills through its cold start, and "
        f"Karpenter keeps an empty node {catalog.karpenter.consolidate_after} longer",
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


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


def _elastic_lines(name: str, scaling: dict[str, Any]) -> list[str]:
    day = scaling["simulatedDay"]
    fewest, most = scaling["coldStartMinutes"]
    return [
        f"- {name}: elastic, nodes started and removed by {scaling['provisioner']}: at most {scaling['maxNodes']} "
        + (
            f"nodes, a budget of {scaling['gpuBudget']} GPUs for its Planners (the NodePool's nvidia.com/gpu limit)"
            if "gpuBudget" in scaling
            else f"nodes, {scaling['cpuBudget']} vCPUs for its workers (the NodePool's cpu limit)"
        ),
        f"  - cost: at its fewest ({scaling['nodesAtFewest']} node(s), what its graphs' minimum workers hold) "
        f"{_money(scaling['usdPerHourAtFewest'])}/hour; at its most {_money(scaling['usdPerHourAtMost'])}/hour; "
        + (
            f"over the simulated day at least {_money(day['usdPerHour'])}/hour on average (simulated: {day['basis']})"
            if day["usdPerHour"] is not None
            else f"over a day: {day['basis']}"
        ),
        f"  - a worker with no node free waits {fewest:g}-{most:g} minutes before it serves (published figures, "
        f"configs/karpenter.yaml coldStart: {'; '.join(map(_phase_text, scaling['coldStart']))})"
        + ("; its image pull comes on top, for which no figure is published" if "cpuBudget" in scaling else ""),
    ]


def _phase_text(phase: dict[str, Any]) -> str:
    low, high = phase["minutes"], phase["atMostMinutes"]
    return f"{phase['phase']}: " + (f"up to {high:g}" if low is None else f"{low:g}-{high:g}") + " min"


def _timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _deployment_report(
    serving: Serving, config: StackConfig, catalog: Catalog, pools: dict[str, cost.PoolCost]
) -> dict[str, Any]:
    deployment = serving.deployment
    namespace, model = config.namespace, config.release.model
    pool, traffic = deployment.pool, deployment.recipe.traffic
    gpus = deployment.total_gpus
    service = frontend_service_name(deployment.name)
    # Its share of all the pool's nodes, idle ones too; a CPU deployment's is in the CPU nodes' cost.
    occupied = pools[pool.name].share_of(deployment) if pool else None
    fits: Sequence[WorkerFit | None] = serving.fits or [None] * len(deployment.workers)  # none on CPU nodes
    report = {
        "recipe": deployment.recipe_name,
        "mode": deployment.recipe.mode,
        "nodePool": pool.name if pool else None,
        "gpus": gpus,
        "nodes": -(-gpus // pool.instance.gpus_per_node) if pool else None,  # at least; placement may use more
        "usdPerHour": _rounded(occupied),  # its share of its pool's cost
        "traffic": {
            "inputTokens": traffic.input_tokens,
            "outputTokens": traffic.output_tokens,
            "concurrency": deployment.concurrency,
        },
        "estimate": figures.throughput_estimate(catalog, deployment, occupied),
        "routerMode": deployment.router_mode,
        "kvTransfer": _kv_transfer(deployment),
        # What `pulumi up` checks before it ends (core.render.smoke_test), or why it cannot yet.
        "smokeTestJob": serving.smoke_test.job["metadata"]["name"] if serving.smoke_test else None,
        "notCheckedBecause": serving.deferred,
        "frontend": f"{service}.{namespace}",
        "endpoint": f"http://{service}.{namespace}.svc.cluster.local:{FRONTEND_PORT}",
        "tryIt": (
            f"kubectl port-forward svc/{service} {FRONTEND_PORT}:{FRONTEND_PORT} -n {namespace} &\n"
            f"curl -s http://localhost:{FRONTEND_PORT}/v1/chat/completions \\\n"
            "  -H 'Content-Type: application/json' \\\n"
            f'  -d \'{{"model":"{model}","messages":[{{"role":"user","content":"Hi"}}],"max_tokens":64}}\''
        ),
        "health": f"curl -s http://localhost:{FRONTEND_PORT}/health",
        "workers": {
            worker.service_name: _worker_report(worker, deployment.backend.view(worker.engine), fit)
            for worker, fit in zip(deployment.workers, fits, strict=True)
        },
    }
    if deployment.config.autoscaling is not None:
        report["autoscaling"] = _autoscaling_report(deployment, serving.planner_config)
    simulated = simulated_report(catalog, deployment)
    if simulated is not None:
        report["simulated"] = simulated
    if serving.gateway is not None:
        report["gateway"] = _gateway_report(
            serving.gateway, deployment.config.endpoint, has_load_balancer_controller(config)
        )
    return report


def _autoscaling_report(deployment: ResolvedDeployment, planner_config: dict[str, Any] | None) -> dict[str, Any]:
    """What Dynamo's Planner is told: its targets, each role's bounds, the GPUs it may ask for at most."""
    assert deployment.config.autoscaling is not None and planner_config is not None and deployment.drain is not None
    settings = json.loads(planner_config["data"][CONFIG_FILE])
    return {
        "ttftMs": settings["ttft_ms"],
        "itlMs": settings["itl_ms"],
        "workers": {
            worker.service_name: {"min": worker.scaling.min_replicas, "max": worker.scaling.max_replicas}
            for worker in deployment.workers
            if worker.scaling is not None
        },
        "startsWith": deployment.config.replicas,
        "maxGpuBudget": settings["max_gpu_budget"],
        "plannerConfig": planner_config["metadata"]["name"],
        "drain": {
            "seconds": deployment.drain.grace_seconds,
            "graceSeconds": deployment.drain.request_seconds,
            "longestTokens": deployment.drain.longest_tokens,
            "tpotMs": deployment.drain.tpot_ms,
            "basis": deployment.drain.basis,
        },
    }


def _gateway_report(gateway: Gateway, endpoint: EndpointConfig, with_nlb: bool) -> dict[str, Any]:
    limit = endpoint.rate_limit
    return {
        "exposure": endpoint.exposure,
        # What clients reach: an NLB only where the cluster makes one (the AWS Load Balancer Controller).
        "reachedThrough": ("internet-facing NLB" if endpoint.exposure == "public" else "internal NLB")
        if with_nlb
        else IN_CLUSTER_SERVICE,
        "url": gateway.url or "the NLB's DNS name, once it exists (stack output gateways)",
        "tls": "on the NLB, ACM certificate" if endpoint.certificate_arn else "none (plain HTTP)",
        "rateLimit": f"{limit.requests} requests per {limit.unit.lower()} per API key and gateway replica "
        f"({ENVOY_REPLICAS} replicas)"
        + (f"; own limits for {', '.join(sorted(endpoint.client_rate_limits))}" if endpoint.client_rate_limits else ""),
        "curl": gateway.curl,
    }


def _kv_transfer(deployment: ResolvedDeployment) -> str:
    if deployment.pool is None:
        return "simulated (the mocker's; no GPU memory, nothing crosses nodes)"
    if deployment.recipe.mode == "aggregated" and not crosses_nodes(deployment):
        return "none (aggregated workers)"
    if not crosses_nodes(deployment):
        return "within one node"
    devices = [f"{worker.role} {worker.efa.devices}" for worker in deployment.workers if worker.efa]
    if devices:
        return f"between nodes over EFA (EFA devices per worker: {', '.join(devices)}; NIXL LIBFABRIC)"
    return "between nodes over TCP: no EFA (see warnings)"


def _throughput_basis(basis: str) -> str:
    """Where the throughput line's figure comes from; the modelled figure's own line (below it) says the rest."""
    if basis.startswith("modelled"):
        return "modelled: its basis below"
    if basis.startswith("unknown: not modelled"):
        return "unknown: nothing published at this point, and not modelled: why below"
    return basis


def _figure_lines(estimate: dict[str, Any]) -> list[str]:
    """The published and modelled figures side by side, and how the recipe compares with the best
    configuration AISimulate found."""
    modelled = estimate["modelled"]
    lines = [f"- published: {estimate['published']}"]
    if "ttftMs" in modelled:
        lines.append(
            f"- modelled: TTFT {modelled['ttftMs']:,.0f} ms, TPOT {modelled['tpotMs']:.1f} ms, "
            f"{modelled['tokensPerSecondPerUser']:,.1f} tok/s per user, {modelled['tokensPerSecondPerGpu']:,.0f} tok/s "
            f"per GPU, {_money(modelled['usdPerMillionTokens'])} per million output tokens ({modelled['basis']})"
        )
    else:
        lines.append(f"- modelled: none ({modelled['basis']})")
    best = estimate.get("bestConfiguration")
    if best is None:
        return lines
    where = f"{best['gpus']} GPUs, goal {best['goal']}: {best['targets']}"
    if "fractionOfBest" not in best:
        return [*lines, f"- best configuration (modelled; {where}): {best['best']}"]
    margin = f"{1 - best['flagBelowFraction']:.0%}"
    verdict = f"FLAGGED: more than {margin} below the best" if best["flagged"] else f"within {margin} of the best"
    targets = "meets" if best["meetsTargets"] else "misses"
    return [
        *lines,
        f"- against the best configuration (modelled; {where}): this recipe {targets} the targets and makes "
        f"{best['fractionOfBest']:.0%} of the best's throughput per GPU, {verdict}; the best: {best['best']}",
    ]


def _worker_report(worker: Worker, engine: EngineView, fit: WorkerFit | None) -> dict[str, Any]:
    if fit is None:  # a CPU worker of a simulated engine: its requests, and the limits it simulates
        return {
            "role": worker.role,
            "replicas": worker.replicas,
            "gpusPerWorker": 0,
            "resources": worker.resources,
            "maxBatchSize": engine.max_batch_size,
            "maxSeqLen": engine.max_seq_len,
        }
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


WIDTH = 100  # the summary's lines fit a terminal of this many columns


def render_summary(
    project: str, stack_name: str, report: dict[str, Any], resource_types: list[str], critical_path: list[str]
) -> str:
    """The plan's summary.md; `critical_path`: its lines (tools/critical_path.py), from the dependency graph."""
    release = report["release"]
    lines = [
        f"# Plan: {project} / {stack_name}",
        "",
        f"- environment: {report['environment']}, region {report['region'] or '(none: aws:region unset)'}",
        f"- release: Dynamo {release['dynamo']}, image `{release['runtimeImage']}`, "
        f"model {release['model']}@{release['modelRevision'][:12]}",
        f"- Kubernetes API: {report['apiAccess']}",
        "",
        "## Node pools",
        "",
        "| pool | hardware | instance type | nodes | GPUs used / idle | capacity | EFA | $/hour |",
        "|---|---|---|---:|---:|---|---|---:|",
    ]
    for name, pool in report["nodePools"].items():
        scaling = pool.get("scaling")
        nodes = f"{scaling['nodesAtFewest']}..{pool['nodes']} (elastic)" if scaling else pool["nodes"]
        lines.append(
            f"| {name} | {pool['hardware']} | {pool['instanceType']} | {nodes} "
            f"| {pool['gpusUsed']} / {pool['gpusIdle']} | {pool['capacityType']} | {'yes' if pool['efa'] else 'no'} "
            f"| {_money(pool['usdPerHour'])} |"
        )
    if not report["nodePools"]:
        lines.append("| (none: no GPU node pool) | | | | | | | |")
    elastic = any(pool.get("scaling") for pool in report["nodePools"].values())
    lines += [
        "",
        "A pool bills all its nodes, idle GPUs included"
        + ("; an elastic pool's $/hour is at its most." if elastic else "."),
    ]
    for name, pool in report["nodePools"].items():
        if pool.get("scaling"):
            lines += _elastic_lines(name, pool["scaling"])
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
            "placeholder window (tools/pulumi_engine.py)."
        )
    lines += _cost_lines(report["cost"], report["region"])
    lines += ["", "## Deployments", ""]
    if not report["deployments"]:
        lines.append("(none)")
    for name, deployment in report["deployments"].items():
        lines += _deployment_lines(name, deployment)
    if report["warnings"]:
        lines += ["## Warnings", "", *(f"- {warning}" for warning in report["warnings"]), ""]
    lines += [
        "KV and concurrency figures are estimates from weights and KV cache alone (core/resolve/sizing.py); "
        "activations and CUDA graphs use part of the same memory.",
        "",
    ]
    return _joined(lines + _resource_lines(resource_types, critical_path))


def render_program_summary(project: str, stack_name: str, resource_types: list[str], critical_path: list[str]) -> str:
    """summary.md of a program that composes the building blocks itself: it exports no stack report,
    so the plan shows what it registers and in which order; its outputs are in outputs.json."""
    header = [
        f"# Plan: {project} / {stack_name}",
        "",
        "No stack report: this program composes the components itself.",
        "",
    ]
    return _joined(header + _resource_lines(resource_types, critical_path))


def _resource_lines(resource_types: list[str], critical_path: list[str]) -> list[str]:
    counts = Counter(resource_types)
    return [
        *critical_path,
        f"## Resources ({len(resource_types)})",
        "",
        *(f"- {count} x `{type_}`" for type_, count in sorted(counts.items())),
        "",
    ]


def _joined(lines: list[str]) -> str:
    return "\n".join(line for text in lines for line in _wrapped(text))


def _cost_lines(stack_cost: dict[str, Any], region: str | None) -> list[str]:
    lines = [
        "",
        f"## Cost per hour ({region or 'no region'}, prices of {stack_cost['pricesReadOn']})",
        "",
        "| item | quantity | $/hour |",
        "|---|---|---:|",
        *(f"| {line['item']} | {line['quantity']} | {_money(line['usdPerHour'])} |" for line in stack_cost["lines"]),
        "",
        f"- known: ${stack_cost['knownUsdPerHour']:,.2f} per hour"
        + (f", plus what is unknown: {', '.join(stack_cost['unknown'])}" if stack_cost["unknown"] else ""),
    ]
    lines += [f"- {line['item']}: {line['basis']}" for line in stack_cost["lines"]]
    return lines


def _deployment_lines(name: str, deployment: dict[str, Any]) -> list[str]:
    estimate, traffic = deployment["estimate"], deployment["traffic"]
    per_million = estimate["usdPerMillionTokens"]
    on_cpu = deployment["nodePool"] is None  # a simulated engine's workers, on CPU nodes
    lines = [
        f"### {name}",
        "",
        f"- recipe: {deployment['recipe']} ({deployment['mode']}), on CPU nodes, no GPU; its cost is in theirs"
        if on_cpu
        else f"- recipe: {deployment['recipe']} ({deployment['mode']}), pool {deployment['nodePool']}, "
        f"{deployment['gpus']} GPUs on at least {deployment['nodes']} node(s); its share of the pool's cost: "
        f"{_money(deployment['usdPerHour'])} per hour",
        f"- traffic shape: {traffic['inputTokens']} in / {traffic['outputTokens']} out, "
        f"concurrency {traffic['concurrency']}",
        f"- throughput and latency: {estimate['basis']}"
        if on_cpu
        else f"- throughput: {_number(estimate['tokensPerSecond'])} output tok/s, "
        f"{'unknown' if per_million is None else _money(per_million)} per million tokens "
        f"({_throughput_basis(estimate['basis'])})",
        *([] if on_cpu else _figure_lines(estimate)),
        f"- endpoint: {deployment['endpoint']} (router {deployment['routerMode']})",
        *_autoscaling_lines(deployment.get("autoscaling")),
        *_simulated_lines(deployment.get("simulated")),
        f"- `pulumi up` waits for the graph to be Ready, then for smoke-test Job {deployment['smokeTestJob']} "
        + (
            "to get a chat completion's tokens (a simulated engine's answer may have no text)"
            if on_cpu
            else "to get a chat completion with content"
        )
        if deployment["smokeTestJob"]
        else f"- `pulumi up` does not wait for serving yet: {deployment['notCheckedBecause']}",
        f"- KV transfer: {deployment['kvTransfer']}",
        "- try it (health: `curl -s http://localhost:8000/health`):",
        "",
        "```",
        *deployment["tryIt"].split("\n"),
        "```",
        *_gateway_lines(deployment.get("gateway")),
        "",
    ]
    workers = deployment["workers"]
    if on_cpu:
        return [*lines, *_cpu_worker_lines(workers), ""]
    lines += [
        "| service | role | replicas | GPUs/worker | TP | EP | attention DP | MoE backend |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for service, worker in workers.items():
        lines.append(
            f"| {service} | {worker['role']} | {worker['replicas']} | {worker['gpusPerWorker']} "
            f"| {worker['tensorParallel']} | {worker['expertParallel']} "
            f"| {'on' if worker['attentionDataParallel'] else 'off'} | {worker['moeBackend']} |"
        )
    lines += [
        "",
        "| service | weights GiB/GPU | KV GiB/GPU | KV tokens | max concurrency | max batch |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for service, worker in workers.items():
        lines.append(
            f"| {service} | {worker['weightsGiBPerGpu']} | {worker['kvCacheGiBPerGpu']} "
            f"| {worker['kvTokenCapacity']:,} | {worker['maxConcurrency']:,} | {worker['maxBatchSize']:,} |"
        )
    return [*lines, ""]


def _cpu_worker_lines(workers: dict[str, Any]) -> list[str]:
    lines = [
        "| service | role | replicas | CPU | memory request / limit | max batch | max sequence |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for service, worker in workers.items():
        requests, limits = worker["resources"].get("requests", {}), worker["resources"].get("limits", {})
        lines.append(
            f"| {service} | {worker['role']} | {worker['replicas']} | {requests.get('cpu', '-')} "
            f"| {requests.get('memory', '-')} / {limits.get('memory', '-')} | {worker['maxBatchSize']:,} "
            f"| {_number(worker['maxSeqLen'])} |"
        )
    return lines


def _autoscaling_lines(autoscaling: dict[str, Any] | None) -> list[str]:
    if autoscaling is None:
        return []
    bounds = ", ".join(f"{name} {b['min']}..{b['max']}" for name, b in autoscaling["workers"].items())
    drain = autoscaling["drain"]
    return [
        f"- autoscaling: Dynamo's SLA Planner scales to keep TTFT within {autoscaling['ttftMs']:g} ms and ITL "
        f"within {autoscaling['itlMs']:g} ms (its targets; the simulated day below says how often it does) with "
        f"{bounds} workers (starting with {autoscaling['startsWith']} each), "
        f"at most {autoscaling['maxGpuBudget']} GPUs (its config: ConfigMap {autoscaling['plannerConfig']})",
        f"- scale-down: a worker the Planner stops finishes its requests first: its grace period is "
        f"{drain['graceSeconds']} s, the longest answer ({drain['longestTokens']:,} tokens at {drain['tpotMs']:g} ms "
        f"each, {drain['basis']}), and its pod's terminationGracePeriodSeconds {drain['seconds']} s (with "
        "the prefill drain's 30 s and a 30 s margin)",
    ]


def _simulated_lines(simulated: dict[str, Any] | None) -> list[str]:
    """The replayed comparison (make simulate): GPU-hours and dollars a day, and the share of requests within
    the SLA, static at the peak size against the Planner and the oracle; then KV routing on shared prefixes."""
    if simulated is None:
        return []
    day, steady, shared = simulated["day"], simulated["steady"], simulated["sharedPrefixes"]

    def cost(run: dict[str, Any], static: dict[str, Any] = day["static"]) -> str:
        """GPU-hours (and dollars) of a run, against static at the peak size on the same trace."""
        difference = change(run["gpuHours"], static["gpuHours"]) if static["gpuHours"] else ""
        saved = f", {difference} than static" if difference else ""
        money = f" ({_money(run['usd'])})" if run["usd"] is not None else ""
        return f"{_number(run['gpuHours'])} GPU-hours{money}{saved}, {run['withinSla']:g}% within the SLA"

    sla, planner, configured = simulated["sla"], day["planner"], day.get("configured")
    as_configured = f"as configured {cost(configured)}; " if configured else ""
    delay_kept = kept(day["static"]["gpuHours"], planner["gpuHours"], day["planner-delayed"]["gpuHours"])
    return [
        f"- simulated day ({simulated['basis']}; {simulated['scaling']}; SLA TTFT {sla['ttftMs']:g} ms, ITL "
        f"{sla['itlMs']:g} ms; the peak size serves {simulated['servesPerSecond']:g} requests/s within it, found by "
        f"replay from {simulated['modelledRate']}; the day's shape is assumed, configs/simulation.yaml, its peak at "
        f"80% of that): {as_configured}static at the peak size {cost(day['static'])}; Planner "
        f"({planner['scalingEvents']} scaling decisions) {cost(planner)}, TTFT p50/p99 {_ms(planner['ttftP50Ms'])}/"
        f"{_ms(planner['ttftP99Ms'])} ms, each request's mean ITL p50/p99 {_ms(planner['itlP50Ms'])}/"
        f"{_ms(planner['itlP99Ms'])} ms; Planner with new workers serving after {simulated['startDelayMinutes']:g} min "
        f"{cost(day['planner-delayed'])}{delay_kept}; oracle (instant starts) {cost(day['oracle'])}",
        "- simulated steady traffic at the peak, an hour: "
        + "; ".join(
            f"{label} {cost(steady[name], steady['static'])}, TTFT p50/p99 {_ms(steady[name]['ttftP50Ms'])}/"
            f"{_ms(steady[name]['ttftP99Ms'])} ms"
            for label, name in (("static", "static"), ("Planner", "planner"), ("oracle", "oracle"))
        ),
        f"- simulated shared prompt prefixes at the peak size: KV-aware routing p50/p99 TTFT "
        f"{_ms(shared['kv']['ttftP50Ms'])}/{_ms(shared['kv']['ttftP99Ms'])} ms ({shared['kv']['withinSla']:g}% "
        f"within the SLA), round-robin {_ms(shared['round-robin']['ttftP50Ms'])}/"
        f"{_ms(shared['round-robin']['ttftP99Ms'])} ms ({shared['round-robin']['withinSla']:g}%)",
    ]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _gateway_lines(gateway: dict[str, Any] | None) -> list[str]:
    if gateway is None:
        return []
    # "internal NLB" only where there is an NLB; else the in-cluster Service clients reach.
    nlb = gateway["reachedThrough"].endswith("NLB")
    way = f"{gateway['exposure']} NLB" if nlb else gateway["exposure"]
    through = "" if nlb else f", reached through {gateway['reachedThrough']}"
    return [
        f"- gateway ({way}, API keys, 401 without one){through}: {gateway['url']}; TLS {gateway['tls']}; "
        f"{gateway['rateLimit']}",
        "- call it:",
        "",
        "```",
        *gateway["curl"].split("\n"),
        "```",
    ]


def _wrapped(text: str) -> list[str]:
    """A long bullet or paragraph wrapped to WIDTH, continued under its text; tables and code as they are."""
    if len(text) <= WIDTH or text.startswith(("|", "```", "    ")):
        return [text]
    bullet = text[: len(text) - len(text.lstrip("-0123456789. "))]
    return textwrap.wrap(
        text, WIDTH, subsequent_indent=" " * len(bullet), break_on_hyphens=False, break_long_words=False
    )


def _when(timestamp: str) -> str:
    """2030-01-07T11:30:00Z -> 2030-01-07 11:30 UTC ('now', 'never' as they are)."""
    if "T" not in timestamp:
        return timestamp
    return timestamp.replace("T", " ")[:16] + " UTC"


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}" if value >= 0.1 else f"${value:.3f}"


def _number(value: float | None) -> str:
    return "unknown" if value is None else f"{value:,.0f}"
