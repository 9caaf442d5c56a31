"""gpt-oss-infra policies. Each validate function takes (args, report_violation) as pulumi-policy
calls it; `args.props` are the engine's camelCase properties, as pulumi-policy's analyzer hands them over:
read-only views whose nested maps and lists are Mappings and Sequences, not dicts and lists (and which
raise on a value unknown at preview), so nothing here asks for a dict or a list, or compares with one."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

# Graphs are read through the project's graph accessor (standard library only), which knows each
# DynamoGraphDeployment apiVersion's shape: the pack runs from this repository, whose root goes on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpt_oss_infra.core.dynamo_graph import GRAPH_TYPES, image_release, resource_components

Report = Callable[[str, str | None], None]

GPU_TAINT_KEY = "nvidia.com/gpu"
LOAD_BALANCER_ALLOW = "gpt-oss-infra/allow-load-balancer"
MODEL_CACHE_PVC = "model-cache"
SECRET_ENV = {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "NGC_API_KEY"}
# EKS's GPU AMI types (botocore's eks AMITypes): the *_NVIDIA ones and Amazon Linux 2's AL2_x86_64_GPU.
GPU_AMI_TYPE = re.compile(r"NVIDIA|^AL2_x86_64_GPU$")


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _walk(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    """Every (key, value) pair in a nested structure, but those unknown at preview: the analyzer's view raises
    on reading one, which would skip the whole resource's check (an advisory "can't run policy"); `up`, where
    every value is known, checks them."""
    yield key, value
    if isinstance(value, Mapping):
        children: Iterator[tuple[Any, str | None]] = ((child_key, child_key) for child_key in value)
    elif _is_list(value):
        children = ((index, key) for index in range(len(value)))
    else:
        return
    for index, child_key in children:
        try:
            child = value[index]
        except UnknownValueError:
            continue
        yield from _walk(child, child_key)


def _known(mapping: Mapping[str, Any], key: str) -> Any:
    """mapping[key]; None where it is missing or unknown at preview (Mapping.get catches only KeyError)."""
    try:
        return mapping.get(key)
    except UnknownValueError:
        return None


def _is_gpu_node_group(props: Mapping[str, Any]) -> bool:
    labelled = (props.get("labels") or {}).get("nvidia.com/gpu.present") == "true"
    return labelled or bool(GPU_AMI_TYPE.search(props.get("amiType") or ""))


def gpu_node_groups_are_tainted(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "aws:eks/nodeGroup:NodeGroup" or not _is_gpu_node_group(args.props):
        return
    taints = args.props.get("taints") or []
    if not any(t.get("key") == GPU_TAINT_KEY and t.get("effect") == "NO_SCHEDULE" for t in taints):
        report(f"GPU node group {args.name} needs the {GPU_TAINT_KEY} NO_SCHEDULE taint, or any pod lands on it", None)


def images_are_pinned(args: ResourceValidationArgs, report: Report) -> None:
    if not args.resource_type.startswith("kubernetes:"):
        return
    for key, value in _walk(args.props):
        if key != "image" or not isinstance(value, str):
            continue
        name, _, tag = value.rpartition(":")
        if "@sha256:" in value:
            continue
        if not name or "/" in tag or tag in ("", "latest"):
            report(f"image {value!r} is not pinned: use a version tag (not latest) or a digest", None)


def hf_token_only_through_secrets(args: ResourceValidationArgs, report: Report) -> None:
    if not args.resource_type.startswith("kubernetes:") or args.resource_type.endswith(":Secret"):
        return
    for key, value in _walk(args.props):
        if key == "env" and _is_list(value):
            for variable in value:
                # Its keys, not its value: a plain value unknown at preview is still a plain value.
                if (
                    isinstance(variable, Mapping)
                    and _known(variable, "name") in SECRET_ENV
                    and "value" in list(variable)
                ):
                    report(f"{variable['name']} is set as a plain env value; reference a Secret instead", None)


def model_cache_is_rwx(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "kubernetes:core/v1:PersistentVolumeClaim":
        return
    if args.props.get("metadata", {}).get("name") != MODEL_CACHE_PVC:
        return
    if list(args.props.get("spec", {}).get("accessModes") or []) != ["ReadWriteMany"]:
        report("the model cache PVC must be ReadWriteMany: every worker mounts it", None)


def nothing_is_protected(args: ResourceValidationArgs, report: Report) -> None:
    if args.opts.protect:
        report(
            f"{args.name} is protected: `pulumi destroy` refuses to delete it and stops, leaving what it uses "
            "billing; keep data with retainOnDelete (the model cache: modelCache.keepOnDestroy) instead",
            None,
        )


def no_unapproved_load_balancers(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "kubernetes:core/v1:Service":
        return
    if args.props.get("spec", {}).get("type") != "LoadBalancer":
        return
    annotations = args.props.get("metadata", {}).get("annotations") or {}
    if annotations.get(LOAD_BALANCER_ALLOW) != "true":
        report(f"Service of type LoadBalancer needs the annotation {LOAD_BALANCER_ALLOW}: 'true'", None)


def eks_public_endpoint_is_restricted(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "aws:eks/cluster:Cluster":
        return
    vpc = args.props.get("vpcConfig") or {}
    if vpc.get("endpointPublicAccess") is False:
        return
    cidrs = vpc.get("publicAccessCidrs") or []
    if not cidrs or "0.0.0.0/0" in cidrs:
        report("the EKS public endpoint must be restricted to known CIDRs (publicAccessCidrs)", None)


def prod_gpus_are_reserved(args: StackValidationArgs, report: Report) -> None:
    for resource in args.resources:
        props = resource.props
        if resource.resource_type != "aws:eks/nodeGroup:NodeGroup" or not _is_gpu_node_group(props):
            continue
        tags = props.get("tags") or {}
        reserved = props.get("capacityType") == "CAPACITY_BLOCK" or "gpt-oss-infra/capacity-reservation" in tags
        if tags.get("gpt-oss-infra/environment") == "prod" and not reserved:
            report(
                f"prod GPU node group {resource.name} has no capacity reservation: on-demand GPUs may not come", None
            )


# --- serving in production (docs/production.md: Endpoint, Network policy, Pod security)

NLB_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"
NLB_CERTIFICATE = "service.beta.kubernetes.io/aws-load-balancer-ssl-cert"
ENVOY_PROXY = "kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyProxy"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
HTTP_ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute"
SECURITY_POLICY = "kubernetes:gateway.envoyproxy.io/v1alpha1:SecurityPolicy"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
AUTHENTICATIONS = ("apiKeyAuth", "jwt", "basicAuth", "extAuth", "oidc")  # what a SecurityPolicy can demand
POD_TEMPLATE_KINDS = ("Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "CronJob")


def _by_type(resources, type_: str) -> list:
    return [resource for resource in resources if resource.resource_type == type_]


def _meta(props: Mapping[str, Any]) -> tuple[str | None, str | None]:
    metadata = props.get("metadata") or {}
    return metadata.get("namespace"), metadata.get("name")


def public_endpoints_have_auth_and_tls(args: StackValidationArgs, report: Report) -> None:
    """An internet-facing load balancer in front of a gateway terminates TLS, and every route through
    that gateway demands authentication (a SecurityPolicy on the route or on the gateway)."""
    proxies = {
        _meta(r.props): r.props
        for r in _by_type(args.resources, ENVOY_PROXY)
        if _envoy_service(r.props).get("annotations", {}).get(NLB_SCHEME) == "internet-facing"
    }
    secured = set()
    for policy in _by_type(args.resources, SECURITY_POLICY):
        spec = policy.props.get("spec") or {}
        if any(spec.get(kind) for kind in AUTHENTICATIONS):
            namespace, _ = _meta(policy.props)
            secured |= {(ref.get("kind"), namespace, ref.get("name")) for ref in spec.get("targetRefs") or []}
    for gateway in _by_type(args.resources, GATEWAY):
        namespace, name = _meta(gateway.props)
        ref = ((gateway.props.get("spec") or {}).get("infrastructure") or {}).get("parametersRef") or {}
        proxy = proxies.get((namespace, ref.get("name")))
        if proxy is None:
            continue
        if not _envoy_service(proxy).get("annotations", {}).get(NLB_CERTIFICATE):
            report(f"gateway {namespace}/{name} is internet-facing without TLS: set an ACM certificate", None)
        if ("Gateway", namespace, name) in secured:
            continue
        for route in _by_type(args.resources, HTTP_ROUTE):
            route_namespace, route_name = _meta(route.props)
            parents = {p.get("name") for p in (route.props.get("spec") or {}).get("parentRefs") or []}
            if route_namespace == namespace and name in parents and ("HTTPRoute", namespace, route_name) not in secured:
                report(f"route {namespace}/{route_name} of internet-facing gateway {name} has no authentication", None)


def _envoy_service(props: Mapping[str, Any]) -> Mapping[str, Any]:
    provider = (props.get("spec") or {}).get("provider") or {}
    return (provider.get("kubernetes") or {}).get("envoyService") or {}


def workloads_namespaces_deny_by_default(args: StackValidationArgs, report: Report) -> None:
    """Where a stack lets traffic in from outside the cluster (a Gateway), every namespace that runs
    a graph has a NetworkPolicy denying all ingress to every pod, so that only the policies that
    open a way (gateway -> frontend) let anything in."""
    if not _by_type(args.resources, GATEWAY):
        return
    denying = set()
    for policy in _by_type(args.resources, NETWORK_POLICY):
        spec = policy.props.get("spec") or {}
        if (
            spec.get("podSelector") in ({}, None)
            and "Ingress" in (spec.get("policyTypes") or [])
            and not spec.get("ingress")
        ):
            denying.add(_meta(policy.props)[0])
    graphs = [resource for resource in args.resources if resource.resource_type in GRAPH_TYPES]
    for namespace in sorted({_meta(graph.props)[0] for graph in graphs} - denying):
        report(f"namespace {namespace} runs graphs behind a gateway without a default-deny ingress NetworkPolicy", None)


def pods_have_security_context(args: ResourceValidationArgs, report: Report) -> None:
    """Every pod the program defines sets a securityContext, for the pod or for each container (a
    Job's or workload's template, and each service of a DynamoGraphDeployment)."""
    kind = args.resource_type.rsplit(":", 1)[-1]
    spec = args.props.get("spec") or {}
    if args.resource_type in GRAPH_TYPES:
        for component in resource_components(args.resource_type, dict(args.props)):
            if not component.pod.get("securityContext") and not component.main.get("securityContext"):
                report(f"graph component {component.name} sets no securityContext (pod or main container)", None)
        return
    if not args.resource_type.startswith("kubernetes:") or kind not in POD_TEMPLATE_KINDS:
        return
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]
    if not pod.get("securityContext") and not all(container.get("securityContext") for container in containers):
        report(f"{kind} {args.name}: its pods set no securityContext (pod, or every container)", None)


HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
# The Dynamo platform chart: by name, OCI reference or package URL (.../dynamo-platform-1.6.1.tgz).
DYNAMO_CHART = re.compile(r"(^|/)dynamo-platform(-[^/]+\.tgz)?$")


def runtime_matches_platform(args: StackValidationArgs, report: Report) -> None:
    """Every graph runs the Dynamo release of the platform that reconciles it: an image tagged for
    another release (1.6.1, 1.6.1-efa ...) or a runtime version override naming one is refused."""
    platforms = {
        r.props.get("version")
        for r in args.resources
        if r.resource_type == HELM_RELEASE and DYNAMO_CHART.search(str(r.props.get("chart", "")))
    }
    if len(platforms) != 1:
        return  # no platform in this stack (or several: nothing to compare against)
    (platform,) = platforms
    for graph in (r for r in args.resources if r.resource_type in GRAPH_TYPES):
        for component in resource_components(graph.resource_type, dict(graph.props)):
            containers = [*(component.pod.get("initContainers") or []), component.main]
            tagged = {image_release(c.get("image", "")) for c in containers} | {component.runtime_version}
            for release in sorted(tagged - {None, platform}):
                report(
                    f"graph {graph.name} component {component.name} runs Dynamo {release}; the platform is {platform}",
                    None,
                )


def _mandatory(name: str, description: str, validate) -> ResourceValidationPolicy:
    return ResourceValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=EnforcementLevel.MANDATORY
    )


POLICIES = [
    _mandatory(
        "gpu-node-groups-tainted",
        "GPU node groups carry the nvidia.com/gpu NoSchedule taint.",
        gpu_node_groups_are_tainted,
    ),
    _mandatory("images-pinned", "Container images have a version tag (not latest) or a digest.", images_are_pinned),
    _mandatory(
        "hf-token-through-secret",
        "The HF token (and NGC key) reach pods only through a Secret.",
        hf_token_only_through_secrets,
    ),
    _mandatory("model-cache-rwx", "The model cache PVC is ReadWriteMany.", model_cache_is_rwx),
    _mandatory(
        "destroy-not-blocked",
        "No resource is protected: `pulumi destroy` deletes everything the stack made, or keeps it by choice.",
        nothing_is_protected,
    ),
    _mandatory(
        "no-unapproved-load-balancer",
        "No Service of type LoadBalancer without the explicit allow annotation.",
        no_unapproved_load_balancers,
    ),
    _mandatory(
        "eks-public-endpoint-restricted",
        "The EKS public endpoint is off or restricted to CIDRs.",
        eks_public_endpoint_is_restricted,
    ),
    _mandatory(
        "pods-have-security-context",
        "Every pod the program defines sets a securityContext (pod, or every container).",
        pods_have_security_context,
    ),
    StackValidationPolicy(
        name="public-endpoint-auth-and-tls",
        description="No internet-facing gateway without TLS, and no route through it without authentication.",
        validate=public_endpoints_have_auth_and_tls,
        enforcement_level=EnforcementLevel.MANDATORY,
    ),
    StackValidationPolicy(
        name="workloads-default-deny",
        description="Behind a gateway, every namespace running graphs denies ingress by default.",
        validate=workloads_namespaces_deny_by_default,
        enforcement_level=EnforcementLevel.MANDATORY,
    ),
    StackValidationPolicy(
        name="runtime-matches-platform",
        description="Every graph runs the Dynamo release of the platform chart that reconciles it.",
        validate=runtime_matches_platform,
        enforcement_level=EnforcementLevel.MANDATORY,
    ),
    StackValidationPolicy(
        name="prod-gpus-reserved",
        description="Prod GPU node groups run on a capacity reservation or Capacity Block.",
        validate=prod_gpus_are_reserved,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
