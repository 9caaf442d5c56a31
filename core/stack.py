"""The whole functional core in one call: raw config keys -> everything the shell deploys."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.aws import specs
from gpt_oss_infra.core.dynamo import DynamoVersion, undeclared_values
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, SECRET_COMMANDS, EksClusterConfig, Release, StackConfig
from gpt_oss_infra.core.inputs.rules import aws_problems, loads_weights, parse_stack_config
from gpt_oss_infra.core.inputs.types import is_dns_label
from gpt_oss_infra.core.render import (
    benchmark,
    cost,
    destroy_waits,
    gateway,
    gpu_software,
    manifests,
    model_cache,
    network_policy,
    observability,
    platform,
    pod_security,
    scheduling,
    smoke_test,
    storage,
)
from gpt_oss_infra.core.render.labels import POOL_LABEL
from gpt_oss_infra.core.render.scripts import Script, ScriptedJob
from gpt_oss_infra.core.render.validation import DGD_KIND, object_problems
from gpt_oss_infra.core.resolve import efa, sizing
from gpt_oss_infra.core.resolve.recipes import NodePool, ResolvedDeployment, resolve_deployments, resolve_pools


@dataclass(frozen=True)
class Serving:
    """One deployment, the objects that serve it, and how its workers fit their GPUs."""

    deployment: ResolvedDeployment
    engine_config: dict[str, Any] | None  # None: its backend takes every engine setting as a flag
    graph: dict[str, Any]
    fits: list[sizing.WorkerFit]
    benchmark: ScriptedJob | None  # only when deployments.<name>.benchmark.enabled
    smoke_test: ScriptedJob | None  # None while its nodes cannot exist yet (`deferred` says why)
    gateway: gateway.Gateway | None  # endpoint internal or public: the way in from outside the cluster
    deferred: str | None = None

    def objects(self) -> list[dict[str, Any]]:
        jobs = [scripted for scripted in (self.benchmark, self.smoke_test) if scripted]
        gateway_objects = [*self.gateway.objects, self.gateway.api_key_secret] if self.gateway else []
        objects = [
            self.engine_config,
            self.graph,
            *(obj for each in jobs for obj in each.objects()),
            *gateway_objects,
        ]
        return [obj for obj in objects if obj]


@dataclass(frozen=True)
class ModelCacheObjects:
    storage_class: dict[str, Any] | None  # None: an existing StorageClass
    persistent_volume: dict[str, Any] | None  # FSx for Lustre only: a static PV
    pvc: dict[str, Any]
    hf_token_secret: dict[str, Any] | None  # without data: the shell adds the secret value
    download: ScriptedJob


@dataclass(frozen=True)
class PlatformObjects:
    dynamo: DynamoVersion  # the pinned release: chart, CRDs
    crds: list[dict[str, Any]]  # the release's CRDs, applied by the program before the chart and every graph
    namespace: dict[str, Any]
    values: dict[str, Any]  # dynamo-platform chart values
    pull_secret: dict[str, Any] | None  # without data


@dataclass(frozen=True)
class Stack:
    config: StackConfig
    pools: dict[str, NodePool]
    block_storage_class: dict[str, Any] | None  # the StorageClass a created cluster gets
    efa_pools: dict[str, bool]  # pool -> gets EFA interfaces (core.resolve.efa.pool_efa)
    gpu_software: list[gpu_software.ChartRelease]
    gateways: gateway.GatewaySoftware | None  # Envoy Gateway (and the NLB controller) when an endpoint needs them
    network_policies: list[dict[str, Any]]  # the workloads namespace's (networkPolicies.enabled)
    observability: observability.ObservabilityObjects | None  # observability.enabled
    platform: PlatformObjects
    namespace: dict[str, Any]
    workload_pull_secret: dict[str, Any] | None
    model_cache: ModelCacheObjects
    serving: list[Serving]
    warnings: list[str]  # the shell logs these; nothing is refused for them

    @property
    def load_balancers_gone(self) -> destroy_waits.DestroyWait | None:
        """At destroy: the gateways' NLBs gone before their controller (core/render/destroy_waits.py)."""
        if self.gateways is None or not self.gateways.target.with_nlb:
            return None
        target = self.gateways.target
        services = [
            f"{target.namespace}/{serving.gateway.front_door.service}" for serving in self.serving if serving.gateway
        ]
        return destroy_waits.load_balancer_wait(services, self.config.cluster.name)

    @property
    def volumes_gone(self) -> destroy_waits.DestroyWait:
        """At destroy: the charts' claims' volumes gone before the nodes and the CSI drivers."""
        namespaces = [self.platform.namespace["metadata"]["name"]]
        if self.observability is not None:
            namespaces.append(self.observability.namespace["metadata"]["name"])
        return destroy_waits.volume_wait(namespaces)

    def deployment_network_policies(self, deployment: str) -> list[dict[str, Any]]:
        """The NetworkPolicies of one deployment's graph pods, among the namespace's."""
        names = network_policy.deployment_policy_names(deployment)
        return [policy for policy in self.network_policies if policy["metadata"]["name"] in names]

    @property
    def deployments(self) -> list[ResolvedDeployment]:
        return [serving.deployment for serving in self.serving]

    def objects(self) -> list[dict[str, Any]]:
        cache = self.model_cache
        fixed: list[dict[str, Any] | None] = [
            self.block_storage_class,
            self.platform.namespace,
            self.platform.pull_secret,
            self.namespace,
            self.workload_pull_secret,
            cache.storage_class,
            cache.persistent_volume,
            cache.pvc,
            cache.hf_token_secret,
            *cache.download.objects(),
            *([self.gateways.namespace, self.gateways.gateway_class] if self.gateways else []),
            *self.network_policies,
            *([self.observability.namespace, *self.observability.objects] if self.observability else []),
        ]
        per_deployment = [obj for serving in self.serving for obj in serving.objects()]
        return [obj for obj in fixed + per_deployment if obj]


def build_stack(
    raw_config: dict[str, Any],
    catalog: Catalog,
    with_hf_token: bool,
    with_ngc_key: bool = False,
    api_key_clients: list[str] | None = None,
    region: str | None = None,
) -> Stack:
    """Validate, resolve and render; ConfigError (every bad key named) before anything is built.
    `api_key_clients`: the client names of apiKeys (its keys; the values are secrets the shell keeps)."""
    clients = sorted(api_key_clients or [])
    config, warnings = parse_stack_config(raw_config, catalog)
    refused_by_aws = aws_problems(config, region)
    if refused_by_aws:
        raise ConfigError(refused_by_aws)
    pools = resolve_pools(config, catalog)
    namespace = config.namespace
    cache = config.model_cache
    pull_secrets = [platform.NGC_PULL_SECRET] if with_ngc_key else []
    weights = loads_weights(config, catalog)  # else a cache of the tokenizer only (mocker recipes)
    init_container, init_volume = model_cache.wait_for_model(config.release, weights)
    dynamo = catalog.dynamo_versions[config.release.dynamo]
    deployments = resolve_deployments(config, catalog, pools)
    efa_pools, efa_warnings = efa.pool_efa(pools, deployments, dynamo)
    warnings += efa_warnings
    deployments = [efa.with_efa(d, efa_pools, dynamo, catalog.efa) for d in deployments]
    unsizable = _kv_dtype_problems(deployments, catalog)
    if unsizable:  # the sizing below reads the KV dtype's element size
        raise ConfigError(unsizable)
    problems = sizing.placement_problems(deployments, pools)
    fits = {}
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
    charts = gpu_software.gpu_software(
        config.cluster,
        catalog.charts,
        efa=any(efa_pools.values()),
        scraped=config.observability.enabled,
        gpu_pools=bool(pools),
    )
    problems += gpu_software.chart_problems(
        charts, {pool.instance_type for name, pool in pools.items() if efa_pools[name]}
    )
    if config.network_policies_enabled and not isinstance(config.cluster, EksClusterConfig):
        warnings.append(
            f"{KEY_PREFIX}networkPolicies.enabled: the NetworkPolicies are created, but only a network plugin that "
            "enforces them (on EKS, the VPC CNI with enableNetworkPolicy) makes them hold on an existing cluster"
        )
    gateways = gateway.gateway_software(config, catalog.charts)
    problems += _gateway_problems(config, gateways, clients)
    if config.exposed and config.network_policies.enabled is False:
        warnings.append(
            f"{KEY_PREFIX}networkPolicies.enabled: false, while deployments {', '.join(config.exposed)} are reached "
            "from outside the cluster: any pod of the cluster can reach their frontends and workers directly, "
            "around the gateway's API keys (the default, with exposed endpoints, is on)"
        )
    monitoring = _observability(config, deployments, catalog, region)
    if monitoring is not None:
        problems += gpu_software.chart_problems([monitoring.release], set())
    values = platform.platform_values(config.platform, dynamo, config.cluster.block_storage_class, with_ngc_key)
    problems += [
        Problem(
            f"{KEY_PREFIX}release.dynamo",
            f"{path}: not a value the dynamo-platform {dynamo.version} chart declares (configs/dynamo/"
            f"{dynamo.version}/chart); the chart would ignore it or refuse the install",
        )
        for path in undeclared_values(values, dynamo.chart_defaults())
    ]
    if problems:
        raise ConfigError(problems)
    stack = Stack(
        config=config,
        pools=pools,
        block_storage_class=specs.gp3_storage_class(config.cluster.block_storage_class)
        if isinstance(config.cluster, EksClusterConfig)
        else None,
        efa_pools=efa_pools,
        gpu_software=charts,
        gateways=gateways,
        network_policies=network_policy.network_policies(
            namespace,
            [deployment.name for deployment in deployments],
            gateways.controller.chart.namespace if gateways else None,
            config.observability.namespace if monitoring else None,
        )
        if config.network_policies_enabled
        else [],
        observability=monitoring,
        platform=PlatformObjects(
            dynamo=dynamo,
            crds=dynamo.owned_crds(),
            namespace=manifests.namespace(
                config.platform.namespace,
                "dynamo-platform",
                pod_security.admission_labels(pod_security.BASELINE, config.cluster.kubernetes_version),
            ),
            values=values,
            pull_secret=manifests.ngc_pull_secret(config.platform.namespace, platform.NGC_PULL_SECRET)
            if with_ngc_key
            else None,
        ),
        namespace=manifests.namespace(
            namespace,
            "workloads",
            pod_security.admission_labels(
                pod_security.workloads_level(any(w.efa for d in deployments for w in d.workers)),
                config.cluster.kubernetes_version,
            ),
        ),
        workload_pull_secret=manifests.ngc_pull_secret(namespace, platform.NGC_PULL_SECRET) if with_ngc_key else None,
        model_cache=ModelCacheObjects(
            storage_class=model_cache.storage_class(cache),
            persistent_volume=model_cache.fsx_persistent_volume(cache, namespace)
            if cache.storage == "fsx-lustre"
            else None,
            pvc=model_cache.model_cache_pvc(cache, namespace),
            hf_token_secret=manifests.hf_token_secret(namespace) if with_hf_token else None,
            download=model_cache.model_download_job(
                config.release,
                namespace,
                catalog.model_download,
                _script(catalog, model_cache.DOWNLOAD_SCRIPT),
                with_hf_token,
                weights,
            ),
        ),
        serving=[
            _serving(
                deployment,
                manifests.dynamo_graph_deployment(
                    deployment,
                    config.release,
                    dynamo,
                    namespace,
                    manifests.PodExtras(
                        node_selector=node_selector(deployment.pool) if deployment.pool else None,
                        init_container=init_container,
                        init_volume=init_volume,
                        image_pull_secrets=pull_secrets,
                        with_hf_token=with_hf_token,
                        observed=config.observability.enabled,
                    ),
                    smoke_test.readiness_annotations(deployment.config.ready_timeout_minutes),
                ),
                fits[deployment.name],
                config.release,
                catalog,
                gateways,
                clients,
            )
            for deployment in deployments
        ],
        warnings=warnings,
    )
    problems = [
        Problem(f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}", line)
        for obj in stack.objects()
        for line in object_problems(obj, config.cluster.kubernetes_version, dynamo)
    ]
    problems += _storage_problems(stack)
    if not problems:  # placing pods of objects that are wrong would only repeat their problems
        placement, placement_warnings = _placement(stack, catalog)
        problems += placement
        stack.warnings.extend(placement_warnings)
    if problems:
        raise ConfigError(problems)
    return stack


def _placement(stack: Stack, catalog: Catalog) -> tuple[list[Problem], list[str]]:
    """Every pod placed on the stack's nodes, as the scheduler would (core/render/scheduling.py)."""
    cluster, storage_kind = stack.config.cluster, stack.config.model_cache.storage
    created = isinstance(cluster, EksClusterConfig)
    pools = [
        scheduling.gpu_pool(pool, created, stack.efa_pools[name], catalog, storage_kind)
        for name, pool in stack.pools.items()
    ]
    pods = scheduling.chart_pods(stack.platform.dynamo, stack.platform.values)
    if created:
        pools.append(
            scheduling.system_pool(
                cluster.system_nodes.instance_type, cluster.system_nodes.nodes, catalog, storage_kind
            )
        )
        pods += scheduling.cluster_pods(catalog.nodes, storage_kind)
    else:
        pools.append(scheduling.OTHER_NODES)
    objects = stack.objects()
    for obj in objects:
        if obj["kind"] == "Job":
            download = obj["metadata"]["labels"].get("app.kubernetes.io/component") == "model-download"
            pods.append(scheduling.job_pod(obj, scheduling.FILLING if download else scheduling.SERVING))
        elif obj["kind"] == DGD_KIND:
            pods += scheduling.graph_pods(obj)
    made = {(obj["kind"], obj["metadata"]["name"]) for obj in objects}
    return scheduling.placement_problems(pods, pools, made, catalog.image_platforms)


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


def _serving(
    deployment: ResolvedDeployment,
    graph: dict[str, Any],
    fits: list[sizing.WorkerFit],
    release: Release,
    catalog: Catalog,
    gateways: gateway.GatewaySoftware | None,
    clients: list[str],
) -> Serving:
    namespace = graph["metadata"]["namespace"]
    endpoint = deployment.config.endpoint
    front = (
        gateway.gateway(deployment.name, namespace, endpoint, release.model, gateways.target, clients)
        if gateways is not None and endpoint.exposure != "cluster"
        else None
    )
    return Serving(
        deployment=deployment,
        engine_config=manifests.engine_config_map(deployment, catalog.dynamo_versions[release.dynamo], namespace),
        graph=graph,
        fits=fits,
        benchmark=benchmark.benchmark_job(
            deployment, release, namespace, catalog.benchmark, _script(catalog, benchmark.SCRIPT)
        )
        if deployment.config.benchmark.enabled
        else None,
        smoke_test=smoke_test.smoke_test(
            graph,
            release,
            catalog.smoke_test,
            _script(catalog, smoke_test.SCRIPT),
            simulated=deployment.backend.spec.simulated,
            front_door=front.front_door if front else None,
        ),
        gateway=front,
    )


def _kv_dtype_problems(deployments: list[ResolvedDeployment], catalog: Catalog) -> list[Problem]:
    """The KV cache's element size comes from configs/model.yaml: a dtype it does not list cannot
    be sized (nor, most likely, served: TensorRT-LLM knows the same few)."""
    known = catalog.model.kv_bytes_per_element
    problems = []
    for deployment in deployments:
        for worker in deployment.workers if deployment.pool else []:  # CPU workers: no GPU memory to size
            dtype = deployment.backend.view(worker.engine).kv_cache_dtype
            if dtype not in known:
                key = f"{KEY_PREFIX}deployments.{deployment.name}.overrides.kv_cache_config.dtype"
                problems.append(Problem(key, f"{dtype!r} is not a KV cache dtype: one of {', '.join(known)}"))
    return problems


def _observability(
    config: StackConfig, deployments: list[ResolvedDeployment], catalog: Catalog, region: str | None
) -> observability.ObservabilityObjects | None:
    """Prometheus, Grafana and Alertmanager, our dashboards and alerts, when asked for. A
    deployment's live $ per million tokens divides its share of its pool's cost (all the nodes, idle
    ones too, shared by GPUs among the pool's deployments) by its tokens; a simulated engine's has none."""
    if not config.observability.enabled:
        return None
    pools = {deployment.pool.name: deployment.pool for deployment in deployments if deployment.pool}
    created = isinstance(config.cluster, EksClusterConfig)
    pool_costs = cost.pool_costs(pools, deployments, catalog.prices, region, created)
    metrics = [
        observability.DeploymentMetrics(
            name=deployment.name,
            namespace=config.namespace,
            mode=deployment.recipe.mode,
            dollars_per_hour=pool_costs[deployment.pool.name].share_of(deployment) if deployment.pool else None,
            ttft_p95_seconds=deployment.config.alerts.ttft_p95_seconds
            or observability.default_ttft_p95_seconds(deployment.recipe.mode),
            simulated=deployment.backend.spec.simulated,
        )
        for deployment in deployments
    ]
    return observability.observability(
        config.observability,
        catalog.charts["kube-prometheus-stack"],
        config.cluster.block_storage_class,
        metrics,
        model_cache.download_job_name(config.release, loads_weights(config, catalog)),
        config.cluster.kubernetes_version,
        gpu_nodes=bool(config.node_pools),
    )


def _gateway_problems(
    config: StackConfig, gateways: gateway.GatewaySoftware | None, clients: list[str]
) -> list[Problem]:
    """API keys to check callers against, named as Secret keys can be, the clients given their own
    rate limits among them, and chart values each pinned chart declares."""
    if gateways is None:
        return []
    problems = []
    if not clients:
        problems.append(
            Problem(
                f"{KEY_PREFIX}apiKeys",
                f"required: deployments {', '.join(config.exposed)} have a gateway, which admits only API keys; "
                f"set one per client with {SECRET_COMMANDS['apiKeys']}",
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
    for name, deployment in config.deployments.items():
        problems += [
            Problem(
                f"{KEY_PREFIX}deployments.{name}.endpoint.clientRateLimits.{client}",
                f"no such client in apiKeys (clients: {', '.join(clients) or 'none'}): the limit would never apply",
            )
            for client in deployment.endpoint.client_rate_limits
            if clients and client not in clients
        ]
    releases = [gateways.controller]
    if gateways.load_balancers is not None:  # with what the shell sets
        shell_values = dict.fromkeys(gateway.SHELL_VALUES, "")
        releases.append(
            dataclasses.replace(gateways.load_balancers, values=gateways.load_balancers.values | shell_values)
        )
    return problems + gpu_software.chart_problems(releases, set())


def _script(catalog: Catalog, file_name: str) -> Script:
    return Script(file_name, catalog.scripts[file_name])


def defer_serving(stack: Stack, waiting_pools: dict[str, str]) -> Stack:
    """The stack with the graphs on pools whose nodes do not exist yet (pool -> when they come)
    created without waiting for them, and without a smoke test until a later `pulumi up`."""
    serving = [
        dataclasses.replace(
            each,
            graph=each.graph | {"metadata": each.graph["metadata"] | {"annotations": smoke_test.NOT_AWAITED}},
            smoke_test=None,
            deferred=waiting_pools[each.deployment.pool.name],
        )
        if each.deployment.pool and each.deployment.pool.name in waiting_pools
        else each
        for each in stack.serving
    ]
    return dataclasses.replace(stack, serving=serving)


def node_selector(pool: NodePool) -> dict[str, str]:
    return pool.config.node_selector or {POOL_LABEL: pool.name}
