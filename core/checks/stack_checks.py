"""The check stage of a stack: what its cluster-wide parts and its objects must satisfy before anything
is deployed: charts' values, API keys, the platform chart's values, every object against its schema,
every claim's StorageClass, and every pod placed on the stack's nodes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from gpt_oss_infra.core.checks import scheduling, storage
from gpt_oss_infra.core.checks.validation import DGD_KIND, object_problems
from gpt_oss_infra.core.dynamo import DynamoVersion, undeclared_values
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, Catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, SECRET_COMMANDS, EksClusterConfig, EndpointConfig, StackConfig
from gpt_oss_infra.core.inputs.types import is_dns_label
from gpt_oss_infra.core.render import gateway, gpu_software, karpenter
from gpt_oss_infra.core.render.labels import POOL_LABEL
from gpt_oss_infra.core.render.stack_objects import Stack, StackParts
from gpt_oss_infra.core.resolve.recipes import Worker
from gpt_oss_infra.core.resolve.resolution import Resolution
from gpt_oss_infra.core.resolve.sizing import floor_problem


def part_problems(
    config: StackConfig, resolved: Resolution, parts: StackParts, catalog: Catalog, clients: list[str]
) -> list[Problem]:
    """The cluster-wide parts: GPU charts' values (EFA's device plugin for the instance types that use it),
    the gateway's API keys and charts, the monitoring chart, and the platform chart's values."""
    efa_types = {pool.instance_type for name, pool in resolved.pools.items() if resolved.efa_pools[name]}
    problems = gpu_software.chart_problems(parts.charts, efa_types)
    problems += gateway_problems(config, parts.gateways, clients)
    if parts.monitoring is not None:
        problems += gpu_software.chart_problems([parts.monitoring.release], set())
    dynamo = catalog.dynamo_versions[config.release.dynamo]
    return problems + undeclared_platform_values(parts.platform_values, dynamo, f"{KEY_PREFIX}release.dynamo")


def undeclared_platform_values(values: dict[str, Any], dynamo: DynamoVersion, key: str) -> list[Problem]:
    """Every value of the platform chart's `values` its release's chart does not declare, under `key`."""
    return [
        Problem(
            key,
            f"{path}: not a value the dynamo-platform {dynamo.version} chart declares (configs/dynamo/"
            f"{dynamo.version}/chart); the chart would ignore it or refuse the install",
        )
        for path in undeclared_values(values, dynamo.chart_defaults())
    ]


def policy_warnings(config: StackConfig) -> list[str]:
    return network_policy_warnings(
        config.network_policies_enabled,
        config.network_policies.enabled,
        not isinstance(config.cluster, EksClusterConfig),
        config.exposed,
    )


def network_policy_warnings(enabled: bool, asked: bool | None, existing: bool, exposed: list[str]) -> list[str]:
    """NetworkPolicies (`enabled`; `asked`: as set, None where left to the default) that may not hold (on an
    `existing` cluster's network plugin), or are turned off while deployments are `exposed`."""
    warnings = []
    if enabled and existing:
        warnings.append(
            f"{KEY_PREFIX}networkPolicies.enabled: the NetworkPolicies are created, but only a network plugin that "
            "enforces them (on EKS, the VPC CNI with enableNetworkPolicy) makes them hold on an existing cluster"
        )
    if exposed and asked is False:
        warnings.append(
            f"{KEY_PREFIX}networkPolicies.enabled: false, while deployments {', '.join(exposed)} are reached "
            "from outside the cluster: any pod of the cluster can reach their frontends and workers directly, "
            "around the gateway's API keys (the default, with exposed endpoints, is on)"
        )
    return warnings


def stack_problems(stack: Stack, catalog: Catalog) -> tuple[list[Problem], list[str]]:
    """Every object against its schema and every claim's StorageClass; then, where those hold, every pod
    placed on the stack's nodes (placing pods of objects that are wrong would only repeat their problems)."""
    config = stack.config
    dynamo = catalog.dynamo_versions[config.release.dynamo]
    problems = schema_problems(stack.objects(), config.cluster.kubernetes_version, dynamo)
    problems += _storage_problems(stack)
    if problems:
        return problems, []
    pods = object_pods(stack.objects())
    placement, warnings = _placement(stack, catalog, pods)
    return placement + _cpu_floor_problems(stack, catalog, pods), warnings


def schema_problems(
    objects: Sequence[dict[str, Any] | None], kubernetes_version: str, dynamo: DynamoVersion
) -> list[Problem]:
    """Every object against its schema (Kubernetes' at `kubernetes_version`, the release's CRDs), keyed by
    the object: a problem of ours, not of a key."""
    return [
        Problem(f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}", line)
        for obj in objects
        if obj
        for line in object_problems(obj, kubernetes_version, dynamo)
    ]


def _placement(stack: Stack, catalog: Catalog, made_pods: list[scheduling.Pod]) -> tuple[list[Problem], list[str]]:
    """Every pod placed on the stack's nodes, as the scheduler would (core/checks/scheduling.py); `made_pods`:
    those of the stack's Jobs and graphs (object_pods), a cpu pool's autoscaled workers placed at their most."""
    cluster, storage_kind = stack.config.cluster, stack.config.model_cache.storage
    created = isinstance(cluster, EksClusterConfig)
    pools = [
        scheduling.gpu_pool(pool, created, stack.efa_pools[name], catalog, storage_kind)
        for name, pool in stack.pools.items()
    ]
    pods = scheduling.chart_pods(stack.platform.dynamo, stack.platform.values)
    if isinstance(cluster, EksClusterConfig):
        pools.append(
            scheduling.system_pool(
                cluster.system_nodes.instance_type, cluster.system_nodes.nodes, catalog, storage_kind
            )
        )
        pods += scheduling.cluster_pods(catalog.nodes, storage_kind)
        pools += [
            scheduling.cpu_pool(name, pool, catalog, storage_kind)
            for name, pool in stack.config.node_pools.items()
            if pool.hardware == CPU_ONLY
        ]
        if any(pool.scaling for pool in stack.config.node_pools.values()):  # Karpenter, on the system nodes
            chart = catalog.charts[karpenter.CHART]
            pods.append(scheduling.karpenter_pods(chart, catalog.karpenter.controller_resources["requests"]))
    else:
        pools.append(scheduling.OTHER_NODES)
    objects = stack.objects()
    made = {(obj["kind"], obj["metadata"]["name"]) for obj in objects}
    pods += _on_cpu_pools(made_pods, stack, lambda worker: worker.most_replicas)
    return scheduling.placement_problems(pods, pools, made, catalog.image_platforms)


def cpu_pools_at_fewest(stack: Stack, catalog: Catalog, pods: list[scheduling.Pod]) -> dict[str, int]:
    """Each cpu pool: the nodes its graphs' pods (of `pods`, the objects') hold with every worker at its fewest
    replicas (first-fit by CPU and memory): the fewest it keeps, since Karpenter keeps no empty node."""
    fewest = _on_cpu_pools(pods, stack, lambda worker: worker.fewest_replicas)
    storage = stack.config.model_cache.storage
    return {
        name: scheduling.nodes_held(
            scheduling.cpu_pool(name, config, catalog, storage),
            [pod for pod in fewest if pod.node_selector.get(POOL_LABEL) == name],
        )
        for name, config in stack.config.node_pools.items()
        if config.hardware == CPU_ONLY
    }


def _cpu_floor_problems(stack: Stack, catalog: Catalog, pods: list[scheduling.Pod]) -> list[Problem]:
    """A cpu pool's minNodes is at most what its graphs' fewest workers hold (as a GPU pool's:
    core/resolve/sizing.py floor_problems)."""
    return [
        problem
        for name, held in cpu_pools_at_fewest(stack, catalog, pods).items()
        if (scaling := stack.config.node_pools[name].scaling) is not None
        for problem in floor_problem(name, scaling.min_nodes, held)
    ]


def _on_cpu_pools(pods: list[scheduling.Pod], stack: Stack, replicas: Callable[[Worker], int]) -> list[scheduling.Pod]:
    """`pods`, those of each worker of a graph on a cpu pool at `replicas` of it (a GPU pool's workers are
    placed at their most by core/resolve/sizing.py)."""
    counts = {
        scheduling.graph_pod_owner(stack.config.namespace, deployment.name, worker.service_name): replicas(worker)
        for deployment in stack.deployments
        if deployment.pool is None and deployment.config.node_pool
        for worker in deployment.workers
    }
    return [dataclasses.replace(pod, replicas=counts.get(pod.owner, pod.replicas)) for pod in pods]


def object_pods(objects: list[dict[str, Any]]) -> list[scheduling.Pod]:
    """The pods of the Jobs and graphs among `objects`, as the scheduler would be asked to place them."""
    pods = []
    for obj in objects:
        if obj["kind"] == "Job":
            download = obj["metadata"]["labels"].get("app.kubernetes.io/component") == "model-download"
            pods.append(scheduling.job_pod(obj, scheduling.FILLING if download else scheduling.SERVING))
        elif obj["kind"] == DGD_KIND:
            pods += scheduling.graph_pods(obj)
    return pods


def _storage_problems(stack: Stack) -> list[Problem]:
    """Every claim (ours, and the platform chart's from its values) gets a class the stack provides."""
    cluster, cache = stack.config.cluster, stack.config.model_cache
    declared = {}  # classes an existing cluster has, as its config says
    if cluster.kind == "existing" and cluster.block_storage_class_name:
        declared[cluster.block_storage_class_name] = f"{KEY_PREFIX}cluster.blockStorageClassName"
    if cache.storage == "existing" and cache.storage_class_name:
        declared[cache.storage_class_name] = f"{KEY_PREFIX}modelCache.storageClassName"
    created = [obj for obj in stack.objects() if obj["kind"] == "StorageClass"]
    provided = storage.provided_classes(created, declared)
    claims = storage.manifest_claims(stack.objects(), f"{KEY_PREFIX}modelCache.storageClassName")
    claims += storage.chart_claims(
        stack.platform.dynamo, stack.platform.values, f"{KEY_PREFIX}cluster.blockStorageClassName"
    )
    return storage.storage_problems(claims, provided)


def gateway_problems(
    config: StackConfig, gateways: gateway.GatewaySoftware | None, clients: list[str]
) -> list[Problem]:
    """API keys to check callers against, named as Secret keys can be, the clients given their own
    rate limits among them, and chart values each pinned chart declares."""
    if gateways is None:
        return []
    endpoints = {name: deployment.endpoint for name, deployment in config.deployments.items()}
    how = f"set one per client with {SECRET_COMMANDS['apiKeys']}"
    problems = api_key_problems(config.exposed, endpoints, clients, how)
    releases = [gateways.controller]
    if gateways.load_balancers is not None:  # with what the shell sets
        shell_values = dict.fromkeys(gateway.SHELL_VALUES, "")
        releases.append(
            dataclasses.replace(gateways.load_balancers, values=gateways.load_balancers.values | shell_values)
        )
    return problems + gpu_software.chart_problems(releases, set())


def api_key_problems(
    exposed: list[str], endpoints: dict[str, EndpointConfig], clients: list[str], how: str
) -> list[Problem]:
    """API keys to check callers against for the `exposed` deployments' gateways (`how`: how to give them),
    named as Secret keys can be, and the clients the `endpoints` give their own rate limits among them;
    under stack-file keys."""
    problems = []
    if not clients:
        problems.append(
            Problem(
                f"{KEY_PREFIX}apiKeys",
                f"required: deployments {', '.join(exposed)} have a gateway, which admits only API keys; {how}",
            )
        )
    problems += [
        Problem(
            f"{KEY_PREFIX}apiKeys.{client}",
            "not a client name: lower-case letters, digits and '-', at most 63 (it names the key in the "
            "API-key Secret and reaches the frontend as x-client-id)",
        )
        for client in clients
        if not is_dns_label(client)
    ]
    for name, endpoint in endpoints.items():
        problems += [
            Problem(
                f"{KEY_PREFIX}deployments.{name}.endpoint.clientRateLimits.{client}",
                f"no such client in apiKeys (clients: {', '.join(clients) or 'none'}): the limit would never apply",
            )
            for client in endpoint.client_rate_limits
            if clients and client not in clients
        ]
    return problems
