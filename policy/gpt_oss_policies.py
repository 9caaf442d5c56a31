"""gpt-oss-infra policies. Each validate function takes (args, report_violation) as pulumi-policy
calls it; `args.props` are the engine's camelCase properties."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

Report = Callable[[str, str | None], None]

GPU_TAINT_KEY = "nvidia.com/gpu"
LOAD_BALANCER_ALLOW = "gpt-oss-infra/allow-load-balancer"
MODEL_CACHE_PVC = "model-cache"
SECRET_ENV = {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "NGC_API_KEY"}


def _walk(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    """Every (key, value) pair in a nested structure."""
    yield key, value
    if isinstance(value, dict):
        for child_key, child in value.items():
            yield from _walk(child, child_key)
    elif isinstance(value, list):
        for child in value:
            yield from _walk(child, key)


def _is_gpu_node_group(props: dict) -> bool:
    return props.get("labels", {}).get("nvidia.com/gpu.present") == "true" or "NVIDIA" in props.get("amiType", "")


def gpu_node_groups_are_tainted(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "aws:eks/nodeGroup:NodeGroup" or not _is_gpu_node_group(args.props):
        return
    taints = args.props.get("taints") or []
    if not any(t.get("key") == GPU_TAINT_KEY and t.get("effect") == "NO_SCHEDULE" for t in taints):
        report(f"GPU node group {args.name} needs the {GPU_TAINT_KEY} NO_SCHEDULE taint, or any pod lands on it", None)


def images_are_pinned(args: ResourceValidationArgs, report: Report) -> None:
    if not args.resource_type.startswith("kubernetes:"):
        return
    for key, value in _walk(dict(args.props)):
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
    for key, value in _walk(dict(args.props)):
        if key == "env" and isinstance(value, list):
            for variable in value:
                if isinstance(variable, dict) and variable.get("name") in SECRET_ENV and "value" in variable:
                    report(f"{variable['name']} is set as a plain env value; reference a Secret instead", None)


def model_cache_is_rwx_and_protected(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "kubernetes:core/v1:PersistentVolumeClaim":
        return
    if args.props.get("metadata", {}).get("name") != MODEL_CACHE_PVC:
        return
    if args.props.get("spec", {}).get("accessModes") != ["ReadWriteMany"]:
        report("the model cache PVC must be ReadWriteMany: every worker mounts it", None)
    if not args.opts.protect:
        report("the model cache PVC must be protected: deleting it deletes 60 GiB of weights", None)


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
    _mandatory(
        "model-cache-rwx-protected",
        "The model cache PVC is ReadWriteMany and protected.",
        model_cache_is_rwx_and_protected,
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
    StackValidationPolicy(
        name="prod-gpus-reserved",
        description="Prod GPU node groups run on a capacity reservation or Capacity Block.",
        validate=prod_gpus_are_reserved,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
