"""The render stage of a stack: every object it deploys, as plain dicts (Stack), in two steps: what
the cluster gets once (StackParts: GPU charts, gateway software, monitoring, platform values), checked
before the objects are made from them, then the objects themselves."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.inputs.catalog import CPU_ONLY, Catalog
from gpt_oss_infra.core.inputs.config import (
    EksClusterConfig,
    ExistingClusterConfig,
    ModelCacheConfig,
    Release,
    StackConfig,
)
from gpt_oss_infra.core.inputs.rules import loads_weights
from gpt_oss_infra.core.render import (
    benchmark,
    gateway,
    gpu_software,
    manifests,
    model_cache,
    network_policy,
    observability,
    planner,
    platform,
    pod_security,
    smoke_test_job,
    teardown,
)
from gpt_oss_infra.core.render.aws import specs
from gpt_oss_infra.core.render.labels import GPU_TAINT, POOL_LABEL, cpu_pool_toleration
from gpt_oss_infra.core.render.platform import PlatformObjects
from gpt_oss_infra.core.render.scripts import Script, ScriptedJob
from gpt_oss_infra.core.resolve import cost, sizing
from gpt_oss_infra.core.resolve.recipes import NodePool, ResolvedDeployment
from gpt_oss_infra.core.resolve.resolution import Resolution


@dataclass(frozen=True)
class Serving:
    """One deployment, the objects that serve it, and how its workers fit their GPUs."""

    deployment: ResolvedDeployment
    engine_config: dict[str, Any] | None  # None: its backend takes every engine setting as a flag
    planner_config: dict[str, Any] | None  # the Planner's (autoscaling), mounted by its graph's Planner
    planner_access: list[dict[str, Any]]  # the Role and RoleBinding its Planner reads pods with (autoscaling)
    graph: dict[str, Any]
    fits: list[sizing.WorkerFit]
    benchmark: ScriptedJob | None  # only when deployments.<name>.benchmark.enabled
    smoke_test: ScriptedJob | None  # None while its nodes cannot exist yet (`deferred` says why)
    gateway: gateway.Gateway | None  # endpoint internal or public: the way in from outside the cluster
    # Its graph pods' NetworkPolicies (the namespace's default deny is the stack's, or a block's caller's).
    network_policies: list[dict[str, Any]]
    deferred: str | None = None

    def objects(self) -> list[dict[str, Any]]:
        jobs = [scripted for scripted in (self.benchmark, self.smoke_test) if scripted]
        gateway_objects = [*self.gateway.objects, self.gateway.api_key_secret] if self.gateway else []
        objects = [
            self.engine_config,
            self.planner_config,
            *self.planner_access,
            self.graph,
            *(obj for each in jobs for obj in each.objects()),
            *gateway_objects,
            *self.network_policies,
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
class Stack:
    config: StackConfig
    pools: dict[str, NodePool]
    block_storage_class: dict[str, Any] | None  # the StorageClass a created cluster gets
    efa_pools: dict[str, bool]  # pool -> gets EFA interfaces (core.resolve.efa.pool_efa)
    gpu_software: list[gpu_software.ChartRelease]
    # Their namespaces, on a cluster the stack does not create (elsewhere Helm makes them and the cluster
    # takes them with it: _gpu_namespaces)
    gpu_namespaces: list[dict[str, Any]]
    gateways: gateway.GatewaySoftware | None  # Envoy Gateway (and the NLB controller) when an endpoint needs them
    network_policies: list[dict[str, Any]]  # the workloads namespace's own (networkPolicies.enabled)
    observability: observability.ObservabilityObjects | None  # observability.enabled
    platform: PlatformObjects
    namespace: dict[str, Any]
    workload_pull_secret: dict[str, Any] | None
    model_cache: ModelCacheObjects
    serving: list[Serving]
    warnings: list[str]  # the shell logs these; nothing is refused for them
    teardown: teardown.Teardown | None = None  # what `pulumi destroy` waits for (None: nothing)

    @property
    def deployments(self) -> list[ResolvedDeployment]:
        return [serving.deployment for serving in self.serving]

    def objects(self) -> list[dict[str, Any]]:
        cache = self.model_cache
        fixed: list[dict[str, Any] | None] = [
            self.block_storage_class,
            *self.gpu_namespaces,
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
            *(self.teardown.objects() if self.teardown else []),
        ]
        per_deployment = [obj for serving in self.serving for obj in serving.objects()]
        return [obj for obj in fixed + per_deployment if obj]


@dataclass(frozen=True)
class StackParts:
    """What the stack's cluster gets once, decided before its objects: checked first."""

    charts: list[gpu_software.ChartRelease]  # GPU software
    gateways: gateway.GatewaySoftware | None
    monitoring: observability.ObservabilityObjects | None
    platform_values: dict[str, Any]  # dynamo-platform chart values


def render_parts(
    config: StackConfig, resolved: Resolution, catalog: Catalog, with_ngc_key: bool, region: str | None
) -> StackParts:
    dynamo = catalog.dynamo_versions[config.release.dynamo]
    return StackParts(
        charts=gpu_software.gpu_software(
            config.cluster,
            catalog.charts,
            efa=any(resolved.efa_pools.values()),
            scraped=config.observability.enabled,
            gpu_pools=bool(resolved.pools),
        ),
        gateways=gateway.gateway_software(config, catalog.charts),
        monitoring=_observability(config, resolved.deployments, catalog, region),
        platform_values=platform.platform_values(
            config.platform, dynamo, config.cluster.block_storage_class, with_ngc_key
        ),
    )


def _gpu_namespaces(
    cluster: EksClusterConfig | ExistingClusterConfig, charts: list[gpu_software.ChartRelease]
) -> list[dict[str, Any]]:
    """The GPU software's namespaces the stack makes: on a cluster it does not create (on one it creates,
    Helm makes them and the cluster takes them with it). Their pods read the host (device files, the
    kubelet's sockets), as node-exporter does."""
    if isinstance(cluster, EksClusterConfig):
        return []
    admission = pod_security.admission_labels(pod_security.PRIVILEGED, cluster.kubernetes_version)
    return [manifests.namespace(name, "gpu-software", admission) for name in gpu_software.release_namespaces(charts)]


def render_stack(
    config: StackConfig,
    resolved: Resolution,
    parts: StackParts,
    catalog: Catalog,
    with_hf_token: bool,
    with_ngc_key: bool,
    clients: list[str],
    warnings: list[str],
) -> Stack:
    """Every object of the stack. `clients`: the API keys' client names."""
    namespace = config.namespace
    cache = config.model_cache
    deployments = resolved.deployments
    weights = loads_weights(config, catalog)  # else a cache of the tokenizer only (mocker recipes)
    context = ServingContext(
        release=config.release,
        namespace=namespace,
        weights=weights,
        with_hf_token=with_hf_token,
        with_ngc_key=with_ngc_key,
        prometheus_namespace=config.observability.namespace if config.observability.enabled else None,
        gateways=parts.gateways,
        clients=clients,
        network_policies=config.network_policies_enabled,
    )
    dynamo = catalog.dynamo_versions[config.release.dynamo]
    return Stack(
        config=config,
        pools=resolved.pools,
        block_storage_class=specs.gp3_storage_class(config.cluster.block_storage_class)
        if isinstance(config.cluster, EksClusterConfig)
        else None,
        efa_pools=resolved.efa_pools,
        gpu_software=parts.charts,
        gpu_namespaces=_gpu_namespaces(config.cluster, parts.charts),
        gateways=parts.gateways,
        network_policies=network_policy.namespace_policies(namespace) if config.network_policies_enabled else [],
        observability=parts.monitoring,
        platform=platform.platform_objects(
            config.platform.namespace, dynamo, config.cluster.kubernetes_version, parts.platform_values, with_ngc_key
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
        model_cache=model_cache_objects(cache, namespace, config.release, catalog, with_hf_token, weights),
        serving=[
            serving_of(deployment, resolved.fits[deployment.name], context, catalog) for deployment in deployments
        ],
        warnings=warnings,
        teardown=teardown_guards(
            config.platform.namespace, config.cluster.kubernetes_version, parts.gateways, parts.monitoring, catalog
        ),
    )


def model_cache_objects(
    cache: ModelCacheConfig,
    namespace: str,
    snapshot: model_cache.Snapshot,
    catalog: Catalog,
    with_hf_token: bool,
    weights: bool,
) -> ModelCacheObjects:
    """The cache of `namespace`'s deployments and its download of `snapshot` (without `weights`: the
    tokenizer and config files only)."""
    return ModelCacheObjects(
        storage_class=model_cache.storage_class(cache),
        persistent_volume=model_cache.fsx_persistent_volume(cache, namespace)
        if cache.storage == "fsx-lustre"
        else None,
        pvc=model_cache.model_cache_pvc(cache, namespace),
        hf_token_secret=manifests.hf_token_secret(namespace) if with_hf_token else None,
        download=model_cache.model_download_job(
            snapshot,
            namespace,
            catalog.model_download,
            _script(catalog, model_cache.DOWNLOAD_SCRIPT),
            with_hf_token,
            weights,
        ),
    )


def teardown_guards(
    platform_namespace: str,
    kubernetes_version: str,
    gateways: gateway.GatewaySoftware | None,
    monitoring: observability.ObservabilityObjects | None,
    catalog: Catalog,
) -> teardown.Teardown | None:
    """The guards of what controllers make for these parts: the NLBs of Envoy Gateway's Services, and the
    volumes of the claims the platform chart and Prometheus make (the model cache's outlive their claim).
    The platform's namespace is guarded whether or not its release's chart claims volumes: a release
    change never removes the guard, whose removal would wait for the claims an earlier release left (a
    StatefulSet's outlive it)."""
    load_balancers = [gateways.target.namespace] if gateways is not None and gateways.target.with_nlb else []
    claims = [platform_namespace]
    if monitoring is not None:
        claims.append(monitoring.namespace["metadata"]["name"])
    return teardown.teardown(
        platform_namespace,
        load_balancers,
        claims,
        catalog.teardown,
        _script(catalog, teardown.SCRIPT),
        kubernetes_version,
    )


def on_callers_file_system(objects: ModelCacheObjects) -> ModelCacheObjects:
    """A model cache made on its own (the ModelCache block) on the caller's EFS file system, which its
    `destroy` does not delete: the driver deletes each claim's access point with the claim (reclaim
    policy Delete), or it would stay on that file system, one per claim."""
    storage_class = objects.storage_class
    if storage_class is None or storage_class["provisioner"] != "efs.csi.aws.com":
        return objects
    return dataclasses.replace(objects, storage_class=storage_class | {"reclaimPolicy": "Delete"})


def model_cache_guards(
    namespace: str, kubernetes_version: str, objects: ModelCacheObjects, catalog: Catalog
) -> teardown.Teardown | None:
    """The guard of a model cache made on its own: where the EFS CSI driver deletes its access point
    with its claim (on_callers_file_system), `volumes-gone` in `<namespace>-teardown` waits for it, so
    that `destroy` takes the driver away only after. None where the volume stays (FSx's static volume,
    an existing StorageClass: the cluster's own)."""
    if objects.storage_class is None or objects.storage_class["reclaimPolicy"] != "Delete":
        return None
    return teardown.teardown(
        namespace, [], [namespace], catalog.teardown, _script(catalog, teardown.SCRIPT), kubernetes_version
    )


@dataclass(frozen=True)
class ServingContext:
    """What a deployment's objects need of the rest of its stack (or of its block's arguments)."""

    release: Release
    namespace: str
    weights: bool  # the cache holds the weights (else the tokenizer only: mocker recipes)
    with_hf_token: bool
    with_ngc_key: bool
    prometheus_namespace: str | None  # the stack's Prometheus (observability.enabled), which scrapes the graph
    gateways: gateway.GatewaySoftware | None  # Envoy Gateway, which an internal or public endpoint goes through
    clients: list[str]  # the API keys' client names
    network_policies: bool  # the graph pods get their NetworkPolicies


def serving_of(
    deployment: ResolvedDeployment, fits: list[sizing.WorkerFit], context: ServingContext, catalog: Catalog
) -> Serving:
    """One deployment's objects: its graph, engine and Planner configs, smoke test, benchmark and gateway."""
    release, namespace = context.release, context.namespace
    # A recipe without GPUs names a pool only when it is a cpu pool (core/inputs/rules.py).
    cpu_pool = deployment.config.node_pool if deployment.pool is None else None
    cpu_selector = {POOL_LABEL: cpu_pool} if cpu_pool else None
    init_container, init_volume = model_cache.wait_for_model(
        release, context.weights, catalog.pod_resources.wait_for_model
    )
    graph = manifests.dynamo_graph_deployment(
        deployment,
        release,
        catalog.dynamo_versions[release.dynamo],
        namespace,
        manifests.PodExtras(
            node_selector=node_selector(deployment.pool) if deployment.pool else cpu_selector,
            init_container=init_container,
            init_volume=init_volume,
            image_pull_secrets=[platform.NGC_PULL_SECRET] if context.with_ngc_key else [],
            with_hf_token=context.with_hf_token,
            observed=context.prometheus_namespace is not None,
            prometheus=planner.prometheus_url(context.prometheus_namespace) if context.prometheus_namespace else None,
            resources=catalog.pod_resources,
            tolerations=[cpu_pool_toleration(cpu_pool)] if cpu_pool else [GPU_TAINT],
            elastic=bool(cpu_pool) or bool(deployment.pool and deployment.pool.config.scaling),
        ),
        smoke_test_job.readiness_annotations(deployment.config.ready_timeout_minutes),
    )
    policies = (
        network_policy.deployment_policies(
            namespace,
            deployment.name,
            context.gateways.controller.chart.namespace if context.gateways else None,
            context.prometheus_namespace,
        )
        if context.network_policies
        else []
    )
    return _serving(deployment, graph, fits, release, catalog, context.gateways, context.clients, policies)


def _serving(
    deployment: ResolvedDeployment,
    graph: dict[str, Any],
    fits: list[sizing.WorkerFit],
    release: Release,
    catalog: Catalog,
    gateways: gateway.GatewaySoftware | None,
    clients: list[str],
    network_policies: list[dict[str, Any]],
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
        planner_config=planner.planner_config_map(deployment, release, namespace)
        if deployment.config.autoscaling is not None
        else None,
        planner_access=planner.planner_access(deployment, namespace)
        if deployment.config.autoscaling is not None
        else [],
        graph=graph,
        fits=fits,
        benchmark=benchmark.benchmark_job(
            deployment, release, namespace, catalog.benchmark, _script(catalog, benchmark.SCRIPT)
        )
        if deployment.config.benchmark.enabled
        else None,
        smoke_test=smoke_test_job.smoke_test(
            graph,
            release,
            catalog.smoke_test,
            _script(catalog, smoke_test_job.SCRIPT),
            simulated=deployment.backend.spec.simulated,
            front_door=front.front_door if front else None,
        ),
        gateway=front,
        network_policies=network_policies,
    )


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
        gpu_nodes=any(pool.hardware != CPU_ONLY for pool in config.node_pools.values()),
        created_cluster=created,
    )


def _script(catalog: Catalog, file_name: str) -> Script:
    return Script(file_name, catalog.scripts[file_name])


def defer_serving(stack: Stack, waiting_pools: dict[str, str]) -> Stack:
    """The stack with the graphs on pools whose nodes do not exist yet (pool -> when they come)
    created without waiting for them, and without a smoke test until a later `pulumi up`."""
    serving = [
        dataclasses.replace(
            each,
            graph=each.graph | {"metadata": each.graph["metadata"] | {"annotations": smoke_test_job.NOT_AWAITED}},
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
