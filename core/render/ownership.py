"""What a stack owns in its cluster, and what it must not touch.

A stack on an existing cluster shares it with others: a namespace, CRD or cluster-wide object it would
create may exist already (another team's monitoring, an earlier Dynamo install). Pulumi would fail to
create it (the stack's providers do not upsert: pulumi-kubernetes 4.29 made that opt-in for this
data-loss case; only the Dynamo CRDs a release up to 1.2.1 has the program apply go through one that
does, components/kubernetes.crds_provider), after changing other things; taken over, `pulumi destroy`
would delete it with everything in it. So:

- every Namespace and cluster-scoped object the stack makes carries OWNER_ANNOTATION, its Pulumi
  project and stack: what exists with this stack's annotation is this stack's, from an earlier `up`;
- before anything is changed (the program at `up` and `preview`, and `make preflight`), each of them
  that exists without it, and each Helm release of the stack's release names that runs in another
  namespace (its cluster-wide objects would clash), is refused by name (`ownership_problems`);
- unless `cluster.adopt` lists it ("<Kind>/<name>", Namespaces and CustomResourceDefinitions only):
  then it carries ADOPTED_ANNOTATION and `destroy` leaves it where it is. An adopted Namespace is only
  annotated (a NamespacePatch, which `destroy` takes off); an adopted CRD is applied over by the CRDs'
  provider and retained on delete. The Dynamo CRDs of an earlier install are the known case.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from gpt_oss_infra.core.dynamo import CHART as PLATFORM_RELEASE
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, EksClusterConfig
from gpt_oss_infra.core.render.gateway import GatewaySoftware
from gpt_oss_infra.core.render.gpu_software import DCGM_EXPORTER, SYSTEM_NAMESPACE
from gpt_oss_infra.core.render.platform import PlatformObjects
from gpt_oss_infra.core.render.stack_objects import ModelCacheObjects, Stack
from gpt_oss_infra.core.render.teardown import Teardown

OWNER_ANNOTATION = "gpt-oss-infra/owner"
GPU_NAMESPACES_SINCE = "0.6.7"  # the release from which an existing cluster's GPU software namespaces are the stack's
# Namespaces every cluster has: a created cluster's are not the stack's to create (or delete at destroy).
CLUSTER_NAMESPACES = ("default", SYSTEM_NAMESPACE, "kube-public", "kube-node-lease")
ADOPTED_ANNOTATION = "gpt-oss-infra/adopted-by"
ADOPT_KEY = f"{KEY_PREFIX}cluster.adopt"
GRAPH_CRD = "dynamographdeployments.nvidia.com"  # one of the CRDs every Dynamo install applies
DYNAMO_CRD = re.compile(r"CustomResourceDefinition/dynamo[a-z]+\.nvidia\.com")  # every release's, by name
ENVOY_GATEWAY_RELEASE = "envoy-gateway"  # the Helm release name of Envoy Gateway (components/gateway_resources.py)
ADOPTABLE_KINDS = ("Namespace", "CustomResourceDefinition")
# The cluster-scoped kinds a stack renders, with their REST plural (how a reader finds one by name).
CLUSTER_SCOPED = {
    "Namespace": "namespaces",
    "CustomResourceDefinition": "customresourcedefinitions",
    "StorageClass": "storageclasses",
    "PersistentVolume": "persistentvolumes",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "GatewayClass": "gatewayclasses",
}


@dataclass(frozen=True)
class Claim:
    """A cluster-wide name the stack takes: a Namespace or cluster-scoped object, and the key that makes it."""

    kind: str
    api_version: str
    name: str
    key: str
    # What else makes it this stack's: the Dynamo CRDs are where its platform namespace is, whoever
    # applied them last (the operator from 1.3, carrying no annotation of ours; the program up to 1.2.1).
    owned_with: str | None = None
    # A GPU software namespace of an existing cluster (its name is the chart's; before GPU_NAMESPACES_SINCE
    # its Helm release made it).
    gpu_software: bool = False

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def path(self) -> str:
        """Its REST path, for a GET by name."""
        group = "api" if "/" not in self.api_version else "apis"
        return f"/{group}/{self.api_version}/{CLUSTER_SCOPED[self.kind]}/{self.name}"


@dataclass(frozen=True)
class ReleaseClaim:
    """A Helm release the stack installs under a fixed name (its cluster-wide objects are named after it)."""

    name: str
    namespace: str
    key: str


# The organization Pulumi reports for a stack of a self-managed (DIY) backend; also taken where the
# engine reports none (pulumi.get_organization() is None on a CLI too old to pass it).
SELF_MANAGED_ORGANIZATION = "organization"


def owner_of(organization: str | None, project: str, stack: str) -> str:
    """A Pulumi stack's full name: two organizations' stacks of one name are two owners."""
    return f"{organization or SELF_MANAGED_ORGANIZATION}/{project}/{stack}"


def claims(stack: Stack) -> list[Claim]:
    """Every Namespace and cluster-scoped object the stack makes, once each, with the key that makes it."""
    keys = _keys(stack)
    platform_namespace = f"Namespace/{stack.config.platform.namespace}"
    found: dict[str, Claim] = {}
    for obj in stack.platform.crds:
        claim = Claim(obj["kind"], obj["apiVersion"], obj["metadata"]["name"], "", owned_with=platform_namespace)
        found[claim.ref] = dataclasses.replace(claim, key=keys.get(claim.ref, _default_key(claim)))
    gpu_software = {namespace["metadata"]["name"] for namespace in stack.gpu_namespaces}
    for obj in stack.objects():
        if obj["kind"] in CLUSTER_SCOPED:
            claim = Claim(obj["kind"], obj["apiVersion"], obj["metadata"]["name"], "")
            claim = dataclasses.replace(
                claim,
                key=keys.get(claim.ref, _default_key(claim)),
                gpu_software=claim.kind == "Namespace" and claim.name in gpu_software,
            )
            found.setdefault(claim.ref, claim)
    if not stack.platform.crds:  # the operator applies the release's CRDs: another install's would be taken over
        graphs = Claim(
            "CustomResourceDefinition",
            "apiextensions.k8s.io/v1",
            GRAPH_CRD,
            f"{KEY_PREFIX}release.dynamo",
            owned_with=platform_namespace,
        )
        found.setdefault(graphs.ref, graphs)
    return list(found.values())


def release_claims(stack: Stack) -> list[ReleaseClaim]:
    """The Helm releases of fixed names: the platform's, Envoy Gateway's, kube-prometheus-stack's, the AWS
    Load Balancer Controller's (the GPU software's are named by Pulumi, with a random suffix)."""
    config = stack.config
    found = [ReleaseClaim(PLATFORM_RELEASE, config.platform.namespace, f"{KEY_PREFIX}platform.namespace")]
    if stack.gateways is not None:
        endpoint_key = f"{KEY_PREFIX}deployments.{config.exposed[0]}.endpoint" if config.exposed else ADOPT_KEY
        found.append(ReleaseClaim(ENVOY_GATEWAY_RELEASE, stack.gateways.controller.chart.namespace, endpoint_key))
        if stack.gateways.load_balancers is not None:
            chart = stack.gateways.load_balancers.chart
            found.append(ReleaseClaim(chart.chart, chart.namespace, endpoint_key))
    if stack.observability is not None:
        chart = stack.observability.release.chart
        found.append(ReleaseClaim(chart.chart, chart.namespace, f"{KEY_PREFIX}observability.namespace"))
    return found


def _keys(stack: Stack) -> dict[str, str]:
    """The config key that names or asks for each claim, where one does."""
    keys = {
        f"Namespace/{namespace.name}": namespace.key
        for namespace in _namespaces(stack)
        if namespace.key.startswith(KEY_PREFIX)
    }
    if stack.model_cache.storage_class is not None:
        keys[f"StorageClass/{stack.model_cache.storage_class['metadata']['name']}"] = (
            f"{KEY_PREFIX}modelCache.storageClassName"
        )
    return keys


def name_problems(stack: Stack) -> list[Problem]:
    """Names the cluster cannot hold as the stack would make them: a namespace or StorageClass made twice (the
    second would fail to create, after the first was made; Helm's would be taken over), and, on a cluster the
    stack creates, a namespace every cluster has (it exists there already, and cluster.adopt is an existing
    cluster's). Each under the key that names it, where a key does."""
    created_cluster = isinstance(stack.config.cluster, EksClusterConfig)
    named = _namespaces(stack)
    problems = []
    for index, entry in enumerate(named):
        earlier = next((other for other in named[:index] if other.name == entry.name), None)
        if earlier is not None:
            # under the key the stack file set to it: this one's, unless only the earlier's was
            where = earlier.key if earlier.given and not entry.given else entry.key
            problems.append(
                Problem(
                    where,
                    f"{entry.name} would be both {earlier.what} ({earlier.key}) and {entry.what} ({entry.key}): "
                    "each needs a namespace of its own",
                )
            )
        if created_cluster and entry.key.endswith("namespace") and entry.name in CLUSTER_NAMESPACES:
            problems.append(Problem(entry.key, cluster_namespace(entry.name)))
    cache_class, block_class = stack.model_cache.storage_class, stack.block_storage_class
    if cache_class and block_class and cache_class["metadata"]["name"] == block_class["metadata"]["name"]:
        problems.append(
            Problem(
                f"{KEY_PREFIX}modelCache.storageClassName",
                f"{cache_class['metadata']['name']} is the block StorageClass the created cluster gets: "
                "the model cache's needs a name of its own",
            )
        )
    return problems


def cluster_namespace(name: str) -> str:
    """Why a namespace every cluster has cannot be one the stack (or a block) creates, and what to do."""
    others = ", ".join(CLUSTER_NAMESPACES[:-1])
    return f"{name} exists on every cluster: choose a namespace other than {others} and {CLUSTER_NAMESPACES[-1]}"


@dataclass(frozen=True)
class _Namespace:
    name: str
    key: str  # the key that names it or asks for it, or what fixes its name
    what: str
    given: bool = False  # the stack file sets the key to this name (not a default, derived or fixed)


def _namespaces(stack: Stack) -> list[_Namespace]:
    """Each namespace the stack makes, or has Helm make (a created cluster's GPU software)."""
    config = stack.config
    platform_key, workloads_key = f"{KEY_PREFIX}platform.namespace", f"{KEY_PREFIX}namespace"
    named = [
        _Namespace(
            config.platform.namespace,
            platform_key,
            "the platform's namespace",
            "namespace" in config.platform.model_fields_set,
        ),
        _Namespace(config.namespace, workloads_key, "the workloads' namespace", "namespace" in config.model_fields_set),
    ]
    if stack.teardown is not None:
        named.append(_Namespace(stack.teardown.namespace, platform_key, "the teardown guards' namespace"))
    if stack.observability is not None:
        given = "namespace" in config.observability.model_fields_set
        key = f"{KEY_PREFIX}observability.namespace"
        named.append(_Namespace(config.observability.namespace, key, "the monitoring namespace", given))
    if stack.gateways is not None:
        named.append(_Namespace(stack.gateways.target.namespace, "configs/charts.yaml", "Envoy Gateway's namespace"))
    dcgm_key = "cluster.dcgmExporter" if config.cluster.dcgm_exporter else "observability.enabled"
    named += [
        _Namespace(
            release.chart.namespace,
            KEY_PREFIX + (dcgm_key if release.chart.chart == DCGM_EXPORTER else "cluster.gpuSoftware"),
            "the GPU software's namespace",
        )
        for release in stack.gpu_software
        if release.chart.namespace != SYSTEM_NAMESPACE
    ]
    return named


def _default_key(claim: Claim) -> str:
    return f"{KEY_PREFIX}release.dynamo" if claim.kind == "CustomResourceDefinition" else ADOPT_KEY


def adoption_problems(stack: Stack, adopt: list[str]) -> list[Problem]:
    """Each `cluster.adopt` entry must name a Namespace or CRD the stack makes, or a Dynamo CRD (from 1.3
    the operator applies them, so the entries a stack listed on 1.2.1 stay valid after upgrading)."""
    made = {claim.ref for claim in claims(stack)}
    problems = []
    for index, ref in enumerate(adopt):
        key = f"{ADOPT_KEY}[{index}]"
        kind = ref.split("/", 1)[0]
        if kind not in ADOPTABLE_KINDS:
            problems.append(
                Problem(key, f"{ref!r}: only {'s and '.join(ADOPTABLE_KINDS)}s can be adopted, as <Kind>/<name>")
            )
        elif ref not in made and not DYNAMO_CRD.fullmatch(ref):
            close = difflib.get_close_matches(ref, sorted(made), n=1)
            hint = f": did you mean {close[0]!r}?" if close else f" (it makes: {', '.join(sorted(made))})"
            problems.append(Problem(key, f"{ref!r} is nothing this stack makes{hint}"))
    return problems


def marked(stack: Stack, owner: str, adopt: list[str]) -> Stack:
    """The stack with each Namespace and cluster-scoped object marked as this owner's, or as adopted."""

    def mark(obj: dict[str, Any] | None) -> dict[str, Any] | None:
        return marked_object(obj, owner, adopt)

    replace = dataclasses.replace
    return replace(
        stack,
        block_storage_class=mark(stack.block_storage_class),
        gpu_namespaces=[mark(namespace) for namespace in stack.gpu_namespaces],
        platform=marked_platform(stack.platform, owner, adopt),
        namespace=mark(stack.namespace),
        model_cache=marked_model_cache(stack.model_cache, owner, adopt),
        gateways=marked_gateway(stack.gateways, owner, adopt),
        observability=replace(stack.observability, namespace=mark(stack.observability.namespace))
        if stack.observability
        else None,
        teardown=marked_teardown(stack.teardown, owner, adopt),
    )


Obj = TypeVar("Obj", dict[str, Any], dict[str, Any] | None)  # an object, or one a part may not have


def marked_object(obj: Obj, owner: str, adopt: list[str]) -> Obj:
    """`obj`, where it is a Namespace or cluster-scoped, marked as this owner's, or as adopted."""
    if obj is None or obj["kind"] not in CLUSTER_SCOPED:
        return obj
    annotation = ADOPTED_ANNOTATION if f"{obj['kind']}/{obj['metadata']['name']}" in adopt else OWNER_ANNOTATION
    marked_obj = copy.deepcopy(obj) if obj["kind"] != "CustomResourceDefinition" else dict(obj)
    metadata = dict(obj["metadata"])
    metadata["annotations"] = {**metadata.get("annotations", {}), annotation: owner}
    marked_obj["metadata"] = metadata
    return marked_obj


def marked_platform(platform: PlatformObjects, owner: str, adopt: list[str]) -> PlatformObjects:
    """The platform's namespace and CRDs marked as this owner's (or as adopted)."""
    namespace = marked_object(platform.namespace, owner, adopt)
    crds = [marked_object(crd, owner, adopt) for crd in platform.crds]
    return dataclasses.replace(platform, namespace=namespace, crds=crds)


def marked_model_cache(cache: ModelCacheObjects, owner: str, adopt: list[str]) -> ModelCacheObjects:
    """The cache's StorageClass and static volume marked as this owner's (or as adopted)."""
    return dataclasses.replace(
        cache,
        storage_class=marked_object(cache.storage_class, owner, adopt),
        persistent_volume=marked_object(cache.persistent_volume, owner, adopt),
    )


def marked_gateway(gateways: GatewaySoftware | None, owner: str, adopt: list[str]) -> GatewaySoftware | None:
    """Envoy Gateway's namespace and GatewayClass marked as this owner's (or as adopted)."""
    if gateways is None:
        return None
    return dataclasses.replace(
        gateways,
        namespace=marked_object(gateways.namespace, owner, adopt),
        gateway_class=marked_object(gateways.gateway_class, owner, adopt),
    )


def marked_teardown(guards: Teardown | None, owner: str, adopt: list[str]) -> Teardown | None:
    """The teardown guards' namespace and cluster-wide access marked as this owner's (or as adopted)."""
    if guards is None:
        return None
    return dataclasses.replace(guards, access=[marked_object(obj, owner, adopt) for obj in guards.access])


def ownership_problems(
    claimed: list[Claim],
    live: dict[str, dict[str, str] | None],
    releases: list[ReleaseClaim],
    release_namespaces: dict[str, list[str]],
    owner: str,
    adopt: list[str],
) -> list[Problem]:
    """What the stack would take from someone else. `live`: each claim's ref -> the annotations of the
    object of that name in the cluster (None: there is none); `release_namespaces`: each release name ->
    the namespaces a Helm release of that name runs in."""
    problems = []
    taken_crds: list[Claim] = []
    for claim in claimed:
        annotations = live.get(claim.ref)
        if annotations is None:
            if claim.ref in adopt:  # a NamespacePatch would create it, and leave it behind at destroy
                problems.append(Problem(ADOPT_KEY, f"{claim.ref} is not in the cluster: remove it from cluster.adopt"))
            continue
        with_it = (live.get(claim.owned_with) or {}) if claim.owned_with else {}
        # The platform namespace is the stack's when made by it or adopted by it (at an earlier `up`).
        if owner in (annotations.get(OWNER_ANNOTATION), with_it.get(OWNER_ANNOTATION), with_it.get(ADOPTED_ANNOTATION)):
            if claim.ref in adopt and claim.kind == "Namespace":  # a patch would stand in for the stack's own
                problems.append(Problem(ADOPT_KEY, f"{claim.ref} is this stack's own: remove it from cluster.adopt"))
            continue
        if claim.ref in adopt:
            continue
        if claim.owned_with and not annotations.get(OWNER_ANNOTATION):  # whose Dynamo CRDs, nothing says
            taken_crds.append(claim)
        else:
            problems.append(Problem(claim.key, _taken(claim, annotations, owner)))
    if taken_crds:
        problems.append(Problem(taken_crds[0].key, _crds_taken(taken_crds)))
    for release in releases:
        elsewhere = sorted(set(release_namespaces.get(release.name, [])) - {release.namespace})
        if elsewhere:
            problems.append(
                Problem(
                    release.key,
                    f"a Helm release named {release.name} already runs in namespace {', '.join(elsewhere)}: this "
                    f"stack's, in {release.namespace}, would clash with its cluster-wide objects (ClusterRoles, "
                    "webhooks, CRDs); uninstall it first, or deploy this stack to another cluster",
                )
            )
    return problems


def _crds_taken(crds: list[Claim]) -> str:
    """Why Dynamo CRDs that exist are refused where the stack's platform namespace is not the stack's."""
    namespace = crds[0].owned_with.removeprefix("Namespace/") if crds[0].owned_with else ""
    adopt = ", ".join(repr(claim.ref) for claim in crds)
    return (
        f"the Dynamo CRDs exist in the cluster ({', '.join(claim.name for claim in crds)}) and this stack's platform "
        f"namespace {namespace} is not there as this stack's: another Dynamo install applied them, or one this "
        "stack's `pulumi destroy` removed left them (CRDs outlive it: deleting one deletes every graph of its kind). "
        "Taken over, this stack applies its release's CRDs over them, and any other Dynamo operator still running "
        "reconciles the same graphs: uninstall that one first, if there is one, then list "
        f"{adopt} in cluster.adopt"
    )


def _taken(claim: Claim, annotations: dict[str, str], owner: str) -> str:
    """Why an existing object is refused, whose it is, and what to do."""
    if annotations.get(OWNER_ANNOTATION):
        whose = f"it belongs to stack {annotations[OWNER_ANNOTATION]}"
    elif annotations.get(ADOPTED_ANNOTATION) == owner:
        whose = "this stack adopted it earlier: keep it in cluster.adopt"
    elif annotations.get("meta.helm.sh/release-name"):
        whose = f"Helm release {annotations['meta.helm.sh/release-name']} made it"
    else:
        whose = "this stack did not make it"
    taken = (
        f"{claim.kind} {claim.name} exists in the cluster and {whose}: `pulumi up` would fail to create it, and a "
        "stack that took it over would delete it, with all it holds, at `pulumi destroy`. "
    )
    adopt = f"list {claim.ref!r} in cluster.adopt to use it as it is and leave it in place at destroy"
    if claim.gpu_software:  # its name is the chart's: there is no other to choose
        twice = f"{claim.key} would install GPU software a second time beside what runs there"
        if annotations:  # made by someone: never this stack's Helm release, whose namespace got no annotation
            return f"{taken}{twice}: leave it to its owner"
        return (
            f"{taken}If a Helm release gpu-software-... of this stack runs in it, Helm made it for this stack "
            f"before {GPU_NAMESPACES_SINCE}: {adopt} (as it did). If it is empty, an earlier destroy left "
            f"it: kubectl delete namespace {claim.name}. Otherwise {twice}"
        )
    options = ["Choose another name", *([adopt] if claim.kind in ADOPTABLE_KINDS else [])]
    return (
        f"{taken}{' or '.join(options)} (made by this stack before 0.3.0? claim it: kubectl annotate "
        f"{claim.kind.lower()} {claim.name} {OWNER_ANNOTATION}={owner})"
    )
