"""Will every pod be scheduled? A simulation of the Kubernetes scheduler's filters over the plan.

Every pod the plan creates (its Jobs, each DynamoGraphDeployment's frontend and workers with their
replicas, the pods the Dynamo chart creates from our values, and on a created cluster the EKS
add-ons' own) is placed on the stack's node pools, first fit, largest first, as the scheduler's
filters would admit it [k8s-filters]:
- nodeSelector and required node affinity against the pool's node labels;
- tolerations against the pool's taints (NoSchedule and NoExecute must be tolerated);
- CPU, memory, pods, nvidia.com/gpu and vpc.amazonaws.com/efa requests against what a node has
  left after kubelet's reservations and the DaemonSets every node runs (configs/nodes.yaml);
- required pod anti-affinity on the node (EFA decode workers apart from prefill ones);
- the node's CPU architecture against the platforms each image is published for
  (configs/images.yaml; an image listed nowhere is a warning: its platforms are unknown);
- its volumes against what exists: a claim, ConfigMap or Secret the stack makes.
The model download runs while the cache fills, before any graph exists (every graph waits for it),
so it is placed with the long-running pods but not with the graphs; everything else at once.
A node figure nobody publishes (configs/nodes.yaml null) skips that resource on that pool's nodes.

  [k8s-filters] https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/#kube-scheduler-implementation
                (NodeResourcesFit, NodeAffinity, TaintToleration, InterPodAffinity, VolumeBinding)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpt_oss_infra.core.dynamo import ChartPod, DynamoVersion
from gpt_oss_infra.core.dynamo_graph import KIND, graph_components
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import Catalog, Chart, InstanceFacts, NodeFacts, NodePods
from gpt_oss_infra.core.inputs.config import NodePoolConfig
from gpt_oss_infra.core.mappings import deep_merge, value_at
from gpt_oss_infra.core.quantity import parse_quantity
from gpt_oss_infra.core.render.labels import (
    POOL_LABEL,
    SYSTEM_POOL,
    pool_node_labels,
    pool_node_taint,
)
from gpt_oss_infra.core.resolve.recipes import NodePool

GPU_RESOURCE = "nvidia.com/gpu"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
ARCH_LABEL = "kubernetes.io/arch"
KUBERNETES_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
MIB = 2**20
# While the cache fills (the download Job) and while serving (graphs, smoke tests, benchmarks):
# never both, since every graph waits for the download.
FILLING, SERVING, ALWAYS = "filling", "serving", "always"


@dataclass(frozen=True)
class Amounts:
    """Schedulable amounts; None: not known (a node figure nobody publishes)."""

    cpu: int | None = 0  # millicores
    memory: int | None = 0  # MiB
    pods: int | None = 0
    gpus: int = 0
    efa: int = 0

    def minus(self, other: Amounts) -> Amounts:
        return Amounts(
            cpu=_difference(self.cpu, other.cpu),
            memory=_difference(self.memory, other.memory),
            pods=_difference(self.pods, other.pods),
            gpus=self.gpus - other.gpus,
            efa=self.efa - other.efa,
        )

    def shortfalls(self, request: Amounts) -> list[str]:
        """What `request` needs beyond these amounts ([] when it fits)."""
        names = ("CPU (millicores)", "memory (MiB)", "pods", GPU_RESOURCE, EFA_RESOURCE)
        return [
            f"{name}: needs {need}, {have} left"
            for name, have, need in zip(names, self._values(), request._values(), strict=True)
            if have is not None and need is not None and need > have
        ]

    def _values(self) -> tuple[int | None, ...]:
        return (self.cpu, self.memory, self.pods, self.gpus, self.efa)


def _difference(have: int | None, take: int | None) -> int | None:
    return None if have is None or take is None else have - take


@dataclass(frozen=True)
class Pod:
    owner: str  # what a reader looks for: the object (and service) that makes the pod
    replicas: int
    requests: Amounts
    phase: str
    node_selector: dict[str, str] = field(default_factory=dict)
    required_terms: list[dict[str, Any]] = field(default_factory=list)  # nodeSelectorTerms: any one must match
    tolerations: list[dict[str, Any]] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    apart_from: list[dict[str, str]] = field(default_factory=list)  # required anti-affinity (node), matchLabels
    volumes: list[tuple[str, str]] = field(default_factory=list)  # (kind, name) of a claim, ConfigMap or Secret


@dataclass(frozen=True)
class Pool:
    name: str
    nodes: int
    labels: dict[str, str]
    taints: list[dict[str, str]]
    cpu_architecture: str
    free: Amounts  # per node, after reservations and DaemonSets


@dataclass
class _Node:
    pool: Pool
    free: Amounts
    labels: list[dict[str, str]] = field(default_factory=list)  # of the pods placed on it


def placement_problems(
    pods: list[Pod], pools: list[Pool], existing: set[tuple[str, str]], image_platforms: dict[str, list[str]]
) -> tuple[list[Problem], list[str]]:
    """Problems (key: the pod's owner) for every pod that cannot be placed, and warnings."""
    problems = [
        Problem(pod.owner, f"mounts {kind} {name}, which the stack does not make")
        for pod in pods
        for kind, name in pod.volumes
        if (kind, name) not in existing
    ]
    unlisted = sorted({image for pod in pods for image in pod.images if image not in image_platforms})
    warnings = [
        f"image {image}: the CPU architectures it is published for are unknown (configs/images.yaml), so "
        "the placement check does not know whether it runs on its nodes"
        for image in unlisted
    ]
    for phase in (FILLING, SERVING):
        nodes = [_Node(pool, pool.free) for pool in pools for _ in range(pool.nodes)]
        present = sorted((pod for pod in pods if pod.phase in (ALWAYS, phase)), key=_size, reverse=True)
        for pod in present:
            for replica in range(pod.replicas):
                reasons = _place(pod, nodes, image_platforms)
                if reasons is not None:
                    owner = pod.owner if pod.replicas == 1 else f"{pod.owner} (replica {replica + 1} of {pod.replicas})"
                    problems.append(Problem(owner, "cannot be scheduled: " + "; ".join(reasons)))
                    break
    return _unique(problems), warnings


def _place(pod: Pod, nodes: list[_Node], image_platforms: dict[str, list[str]]) -> list[str] | None:
    """Put one replica on the first node that admits it; None, or why no node does (per pool)."""
    reasons: dict[str, str] = {}
    for node in nodes:
        why = _refusal(pod, node, image_platforms)
        if why is None:
            node.free = node.free.minus(pod.requests)
            node.labels.append(pod.labels)
            return None
        reasons.setdefault(node.pool.name, why)
    if not nodes:
        return ["the stack has no nodes"]
    return [f"pool {pool}: {why}" for pool, why in reasons.items()]


def _refusal(pod: Pod, node: _Node, image_platforms: dict[str, list[str]]) -> str | None:
    pool = node.pool
    unmatched = {key: value for key, value in pod.node_selector.items() if pool.labels.get(key) != value}
    if unmatched:
        return f"nodeSelector {unmatched} does not match its node labels {pool.labels}"
    if pod.required_terms and not any(_term_matches(term, pool.labels) for term in pod.required_terms):
        return "required node affinity does not match its node labels"
    untolerated = [taint for taint in pool.taints if not any(tolerates(t, taint) for t in pod.tolerations)]
    if untolerated:
        taint = untolerated[0]
        return f"taint {taint['key']}={taint.get('value', '')}:{taint['effect']} not tolerated"
    wrong_arch = [
        image
        for image in pod.images
        if pool.cpu_architecture and pool.cpu_architecture not in image_platforms.get(image, [pool.cpu_architecture])
    ]
    if wrong_arch:
        return f"image {wrong_arch[0]} is not published for {pool.cpu_architecture} (configs/images.yaml)"
    short = node.free.shortfalls(pod.requests)
    if short:
        return f"every node is short of {', '.join(short)}"
    if any(_selects(selector, labels) for selector in pod.apart_from for labels in node.labels):
        return "required pod anti-affinity: a pod it must not share a node with is on every node with room"
    return None


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def _term_matches(term: dict[str, Any], labels: dict[str, str]) -> bool:
    for expression in term.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def tolerates(toleration: dict[str, Any], taint: dict[str, str]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if not toleration.get("key"):
        return toleration.get("operator") == "Exists"
    if toleration["key"] != taint["key"]:
        return False
    return toleration.get("operator") == "Exists" or toleration.get("value", "") == taint.get("value", "")


def _size(pod: Pod) -> tuple[int, int, int, int]:
    r = pod.requests
    return (r.gpus, r.efa, r.cpu or 0, r.memory or 0)


def _unique(problems: list[Problem]) -> list[Problem]:
    seen, unique = set(), []
    for problem in problems:
        if (problem.key, problem.message) not in seen:
            seen.add((problem.key, problem.message))
            unique.append(problem)
    return unique


# --- the pools' nodes


def node_free(
    facts: InstanceFacts | None, node_facts: NodeFacts, gpus: int, efa: int, daemon_sets: list[NodePods]
) -> Amounts:
    """What one node has for our pods: capacity, less kubelet's reservations and the DaemonSets."""
    if facts is None:
        return Amounts(cpu=None, memory=None, pods=None, gpus=gpus, efa=efa)
    reservation = node_facts.reservation
    cpu = (
        None
        if facts.vcpus is None
        else facts.vcpus * 1000 - _reserved_cpu(facts.vcpus, reservation.cpu_permyriad_by_core)
    )
    memory = (
        None
        if facts.memory_mib is None or facts.max_pods is None
        else facts.memory_mib
        - (reservation.memory_mib_per_pod * facts.max_pods + reservation.memory_mib_base)
        - reservation.eviction_mib
    )
    used = Amounts(
        cpu=_total(ds.cpu for ds in daemon_sets), memory=_total(ds.memory for ds in daemon_sets), pods=len(daemon_sets)
    )
    return Amounts(cpu=cpu, memory=memory, pods=facts.max_pods, gpus=gpus, efa=efa).minus(used)


def _reserved_cpu(vcpus: int, bands: list[tuple[int | None, int]]) -> int:
    reserved, left = 0, vcpus
    for cores, permyriad in bands:
        in_band = left if cores is None else min(cores, left)
        reserved += in_band * 1000 * permyriad // 10000
        left -= in_band
    return reserved


def _total(values: Iterable[int | None]) -> int:
    """A sum where an unknown part (None) is left out: the published parts still count."""
    return sum(value for value in values if value is not None)


def daemon_sets_on(node_facts: NodeFacts, kind: str, storage: str) -> list[NodePods]:
    """The DaemonSets on a node of this kind: system, gpu, or efa (a GPU node with EFA)."""
    kinds = {"system": {"all"}, "gpu": {"all", "gpu"}, "efa": {"all", "gpu", "efa"}}[kind]
    return [ds for ds in node_facts.daemon_sets if ds.runs_on in kinds and ds.storage in (None, storage)]


def system_pool(instance_type: str, nodes: int, catalog: Catalog, storage: str) -> Pool:
    facts = catalog.nodes.instance_types.get(instance_type)
    return Pool(
        name=SYSTEM_POOL,
        nodes=nodes,
        labels={POOL_LABEL: SYSTEM_POOL, **_arch_labels(facts)},
        taints=[],
        cpu_architecture=facts.cpu_architecture if facts else "x86_64",
        free=node_free(facts, catalog.nodes, 0, 0, daemon_sets_on(catalog.nodes, "system", storage)),
    )


def cpu_pool(name: str, config: NodePoolConfig, catalog: Catalog, storage: str) -> Pool:
    """A cpu pool's nodes, at its most (labels and taint as core/render/karpenter.py gives its NodePool)."""
    facts = catalog.nodes.instance_types.get(config.instance_type or "")
    return Pool(
        name=name,
        nodes=config.most_nodes,
        labels=pool_node_labels(config.hardware, name) | _arch_labels(facts),
        taints=[pool_node_taint(config.hardware, name)],
        cpu_architecture=facts.cpu_architecture if facts else "x86_64",
        free=node_free(facts, catalog.nodes, 0, 0, daemon_sets_on(catalog.nodes, "system", storage)),
    )


def nodes_held(pool: Pool, pods: list[Pod]) -> int:
    """How many of the pool's nodes `pods` (each replica) hold, first-fit by CPU and memory, largest first."""
    free: list[list[int]] = []  # per node used: CPU millicores and MiB left
    size = (pool.free.cpu or 0, pool.free.memory or 0)
    for cpu, memory in sorted(
        ((pod.requests.cpu or 0, pod.requests.memory or 0) for pod in pods for _ in range(pod.replicas)), reverse=True
    ):
        node = next((room for room in free if room[0] >= cpu and room[1] >= memory), None)
        if node is None:
            node = list(size)
            free.append(node)
        node[0] -= cpu
        node[1] -= memory
    return len(free)


def gpu_pool(pool: NodePool, created: bool, efa: bool, catalog: Catalog, storage: str) -> Pool:
    """A GPU pool: ours on a created cluster (labels and taint as core.render.aws.specs gives its node group),
    or an existing cluster's nodes as the pool's nodeSelector describes them."""
    facts = catalog.nodes.instance_types.get(pool.instance_type)
    labels = (
        pool_node_labels(pool.config.hardware, pool.name)
        if created
        else dict(pool.config.node_selector or {POOL_LABEL: pool.name})
    )
    daemon_sets = daemon_sets_on(catalog.nodes, "efa" if efa else "gpu", storage)
    return Pool(
        name=pool.name,
        nodes=pool.config.most_nodes,
        labels=labels | _arch_labels(facts),
        taints=[pool_node_taint(pool.config.hardware, pool.name)] if created else [],
        cpu_architecture=pool.hardware.cpu_architecture,
        free=node_free(
            facts,
            catalog.nodes,
            pool.instance.gpus_per_node,
            pool.instance.efa_interfaces if efa else 0,
            daemon_sets,
        ),
    )


def _arch_labels(facts: InstanceFacts | None) -> dict[str, str]:
    return {ARCH_LABEL: KUBERNETES_ARCH[facts.cpu_architecture]} if facts else {}


# --- the pods


def job_pod(job: dict[str, Any], phase: str) -> Pod:
    metadata = job["metadata"]
    return _pod(f"Job {metadata['namespace']}/{metadata['name']}", 1, job["spec"]["template"], phase)


def graph_pod_owner(namespace: str, graph: str, component: str) -> str:
    """What a graph component's pods are reported as (and found by)."""
    return f"{KIND} {namespace}/{graph} {component}"


def graph_pods(graph: dict[str, Any]) -> list[Pod]:
    """The frontend and the workers of a DynamoGraphDeployment, as the operator makes their pods."""
    metadata = graph["metadata"]
    return [
        _pod(
            graph_pod_owner(metadata["namespace"], metadata["name"], component.name),
            component.replicas,
            component.pod_template(),
            SERVING,
        )
        for component in graph_components(graph)
    ]


def _pod(owner: str, replicas: int, template: dict[str, Any], phase: str) -> Pod:
    spec = template["spec"]
    containers = spec.get("containers", [])
    init = spec.get("initContainers", [])
    running = _container_requests(containers)
    first = [_container_requests([c]) for c in init]
    # The scheduler counts the larger of the init containers (one at a time) and the containers together.
    requests = Amounts(
        cpu=max([running.cpu, *(i.cpu for i in first)]),
        memory=max([running.memory, *(i.memory for i in first)]),
        pods=1,
        gpus=max([running.gpus, *(i.gpus for i in first)]),
        efa=max([running.efa, *(i.efa for i in first)]),
    )
    affinity = spec.get("affinity", {})
    required = affinity.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    anti = affinity.get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
    return Pod(
        owner=owner,
        replicas=replicas,
        requests=requests,
        phase=phase,
        node_selector=spec.get("nodeSelector") or {},
        required_terms=required.get("nodeSelectorTerms", []),
        tolerations=spec.get("tolerations") or [],
        images=[c["image"] for c in [*init, *containers] if c.get("image")],
        labels=template.get("metadata", {}).get("labels", {}),
        apart_from=[term["labelSelector"].get("matchLabels", {}) for term in anti if "labelSelector" in term],
        volumes=[ref for volume in spec.get("volumes", []) if (ref := _volume_ref(volume))],
    )


class _Requests(NamedTuple):
    """What containers request together: every figure known, unlike a node's Amounts."""

    cpu: int  # millicores
    memory: int  # MiB
    gpus: int
    efa: int


def _container_requests(containers: list[dict[str, Any]]) -> _Requests:
    cpu = memory = gpus = efa = 0
    for container in containers:
        requests = container.get("resources", {}).get("requests", {})
        cpu += _millicores(requests.get("cpu", "0"))
        memory += _mebibytes(requests.get("memory", "0"))
        gpus += int(requests.get(GPU_RESOURCE, 0))
        efa += int(requests.get(EFA_RESOURCE, 0))
    return _Requests(cpu, memory, gpus, efa)


def _volume_ref(volume: dict[str, Any]) -> tuple[str, str] | None:
    if "persistentVolumeClaim" in volume:
        return ("PersistentVolumeClaim", volume["persistentVolumeClaim"]["claimName"])
    if "configMap" in volume:
        return ("ConfigMap", volume["configMap"]["name"])
    if "secret" in volume:
        return ("Secret", volume["secret"]["secretName"])
    return None


def chart_pods(dynamo: DynamoVersion, values: dict[str, Any]) -> list[Pod]:
    """The pods the dynamo-platform chart creates with these values (configs/dynamo/versions.yaml pods)."""
    merged = deep_merge(dynamo.chart_defaults(), values)
    return [
        _chart_pod(pod, merged, dynamo.version)
        for pod in dynamo.spec.pods
        if all(value_at(merged, p) for p in pod.when)
    ]


def _chart_pod(pod: ChartPod, values: dict[str, Any], app_version: str) -> Pod:
    requests = value_at(values, pod.requests) if pod.requests else None
    affinity = (value_at(values, pod.affinity) if pod.affinity else None) or {}
    required = affinity.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    return Pod(
        owner=f"dynamo-platform chart: {pod.what}",
        replicas=pod.replicas if isinstance(pod.replicas, int) else int(value_at(values, pod.replicas)),
        requests=Amounts(
            cpu=_millicores((requests or {}).get("cpu", "0")),
            memory=_mebibytes((requests or {}).get("memory", "0")),
            pods=1,
        ),
        phase=ALWAYS,
        node_selector=(value_at(values, pod.node_selector) if pod.node_selector else None) or {},
        required_terms=required.get("nodeSelectorTerms", []),
        tolerations=(value_at(values, pod.tolerations) if pod.tolerations else None) or [],
        images=[
            f"{value_at(values, repository)}:{value_at(values, tag) or app_version}" for repository, tag in pod.images
        ],
    )


def cluster_pods(node_facts: NodeFacts, storage: str) -> list[Pod]:
    """The EKS add-ons' own Deployments on a created cluster (they tolerate no GPU taint)."""
    return [
        Pod(
            owner=f"EKS add-on {pods.name}",
            replicas=pods.replicas,
            requests=Amounts(cpu=pods.cpu or 0, memory=pods.memory or 0, pods=1),
            phase=ALWAYS,
        )
        for pods in node_facts.cluster_pods
        if pods.storage in (None, storage)
    ]


def karpenter_pods(chart: Chart, requests: dict[str, str]) -> Pod:
    """Karpenter's controller (elastic pools): its chart's replicas, one per node (the chart's required
    hostname anti-affinity), off Karpenter's own nodes (its affinity), each with `requests`."""
    labels = {"app.kubernetes.io/name": "karpenter"}
    return Pod(
        owner=f"chart {chart.chart} (its controller)",
        replicas=chart.default_values()["replicas"],
        requests=Amounts(cpu=_millicores(requests["cpu"]), memory=_mebibytes(requests["memory"]), pods=1),
        phase=ALWAYS,
        labels=labels,
        apart_from=[labels],
        images=[],
    )


def _millicores(quantity: str | int) -> int:
    return int(parse_quantity(str(quantity)) * 1000)


def _mebibytes(quantity: str | int) -> int:
    return int(-(-parse_quantity(str(quantity)) // MIB))


# An existing cluster's nodes other than its GPU pools: the program knows nothing of them (their
# number, size, labels, taints or architecture), so what lands there is checked only for its volumes.
OTHER_NODES = Pool(
    name="the cluster's other nodes",
    nodes=1,
    labels={},
    taints=[],
    cpu_architecture="",
    free=Amounts(cpu=None, memory=None, pods=None, gpus=0, efa=0),
)
