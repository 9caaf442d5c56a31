"""Every PersistentVolumeClaim a stack makes must get a volume: it names a StorageClass the stack
provides, or asks for the default class and the stack marks one as default.

EKS marks no StorageClass as the cluster default since 1.30 [eks-sc]: a claim that leaves its
class empty stays Pending forever, and so does the pod that mounts it (NATS, and with it the
platform release `pulumi up` waits for). The claims are ours (the model cache) and the ones the
Dynamo chart creates from the values we give it (configs/dynamo/versions.yaml, volumeClaims).

  [eks-sc] https://docs.aws.amazon.com/eks/latest/userguide/create-storage-class.html
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.dynamo import DynamoVersion
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.mappings import deep_merge, value_at

DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


@dataclass(frozen=True)
class VolumeClaim:
    owner: str  # who makes the claim, as a reader would look for it
    storage_class: str | None  # None: the cluster's default class
    key: str  # the stack config key that decides its class


def chart_claims(dynamo: DynamoVersion, values: dict[str, Any], key: str) -> list[VolumeClaim]:
    """The claims the dynamo-platform chart makes with these values (over its defaults)."""
    merged = deep_merge(dynamo.chart_defaults(), values)
    return [
        VolumeClaim(
            f"the dynamo-platform chart's {claim.what} claim ({claim.storage_class_name})",
            value_at(merged, claim.storage_class_name) or None,
            key,
        )
        for claim in dynamo.claims_made(values)
    ]


def manifest_claims(objects: list[dict[str, Any]], key: str) -> list[VolumeClaim]:
    return [
        VolumeClaim(
            f"PersistentVolumeClaim {obj['metadata']['namespace']}/{obj['metadata']['name']}",
            obj["spec"].get("storageClassName"),
            key,
        )
        for obj in objects
        if obj["kind"] == "PersistentVolumeClaim"
    ]


def storage_problems(claims: list[VolumeClaim], provided: dict[str, str]) -> list[Problem]:
    """`provided`: StorageClass name -> where it comes from (see provided_classes)."""
    names = ", ".join(name for name in provided if name != DEFAULT_CLASS_ANNOTATION) or "none"
    problems = []
    for claim in claims:
        if claim.storage_class is None and DEFAULT_CLASS_ANNOTATION not in provided:
            why = "asks for the cluster's default StorageClass, and this stack marks none default (EKS marks none"
            problems.append(Problem(claim.key, f"{claim.owner} {why} since 1.30); it provides: {names}"))
        elif claim.storage_class is not None and claim.storage_class not in provided:
            why = f"names StorageClass {claim.storage_class!r}, which this stack does not provide"
            problems.append(Problem(claim.key, f"{claim.owner} {why}; it provides: {names}"))
    return problems


def provided_classes(storage_classes: list[dict[str, Any]], declared: dict[str, str]) -> dict[str, str]:
    """The classes the stack creates (a default one also under DEFAULT_CLASS_ANNOTATION), and the
    ones an existing cluster's config declares (name -> the key that declares it)."""
    provided = dict(declared)
    for storage_class in storage_classes:
        name = storage_class["metadata"]["name"]
        provided[name] = "created by this stack"
        if storage_class["metadata"].get("annotations", {}).get(DEFAULT_CLASS_ANNOTATION) == "true":
            provided[DEFAULT_CLASS_ANNOTATION] = name
    return provided
