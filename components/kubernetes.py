"""Helpers shared by components that create Kubernetes objects from the core's manifest dicts."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.core.render.gpu_software import ChartRelease
from gpt_oss_infra.core.render.ownership import ADOPTED_ANNOTATION
from gpt_oss_infra.core.render.scripts import ScriptedJob


def resource_args(manifest: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of a typed pulumi-kubernetes resource for a manifest dict.

    apiVersion/kind are implied by the resource class; top-level keys become snake_case
    (stringData -> string_data). Nested dicts keep Kubernetes' camelCase names, which the SDK
    passes through unchanged.
    """
    return {
        re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value
        for key, value in manifest.items()
        if key not in ("apiVersion", "kind")
    }


def adopted(manifest: dict[str, Any]) -> dict[str, Any]:
    """Resource options for an object the stack adopts (core/render/ownership.py): imported as it is in
    the cluster instead of created, and left there by `pulumi destroy`. None for the stack's own."""
    metadata = manifest["metadata"]
    if ADOPTED_ANNOTATION not in metadata.get("annotations", {}):
        return {}
    name = f"{metadata['namespace']}/{metadata['name']}" if "namespace" in metadata else metadata["name"]
    return {"import_": name, "retain_on_delete": True}


# What a Job's pod may read the Kubernetes API with (core.render.scripts.ScriptedJob.access).
ACCESS_KINDS = {
    "ServiceAccount": k8s.core.v1.ServiceAccount,
    "Role": k8s.rbac.v1.Role,
    "RoleBinding": k8s.rbac.v1.RoleBinding,
}


def scripted_job(
    owner: Component,
    name: str,
    scripted: ScriptedJob,
    depends_on: list[pulumi.Resource],
    access_after: list[pulumi.Resource] | None = None,
    **job_opts: Any,
) -> k8s.batch.v1.Job:
    """A Job's script ConfigMap (`<name>-script`), its API access (`<name>-<kind>`, after
    `access_after`: the namespaces it lives in) and the Job (`<name>`), which waits for them and for
    `depends_on`."""
    script = k8s.core.v1.ConfigMap(f"{name}-script", **resource_args(scripted.script), opts=owner.child_opts())
    access = [
        ACCESS_KINDS[obj["kind"]](
            f"{name}-{obj['kind'].lower()}", **resource_args(obj), opts=owner.child_opts(depends_on=access_after or [])
        )
        for obj in scripted.access
    ]
    return k8s.batch.v1.Job(
        name,
        **resource_args(scripted.job),
        opts=owner.child_opts(depends_on=[*depends_on, script, *access], **job_opts),
    )


def chart_release(
    parent: Component,
    name: str,
    release: ChartRelease,
    depends_on: list[pulumi.Resource] | None = None,
    release_name: str | None = None,
    create_namespace: bool = True,
    **shell_values: Any,
) -> k8s.helm.v3.Release:
    """A pinned chart (configs/charts.yaml) with the core's values and those only the shell knows.
    `release_name`: the Helm release's own name, which the chart's object names start with (else
    Pulumi's auto-name, with a random suffix). `create_namespace`: False where the caller creates the
    namespace itself (with labels Helm cannot set)."""
    chart = release.chart
    oci = chart.repo.startswith("oci://")  # an OCI chart is named by its full reference, no repository
    return k8s.helm.v3.Release(
        name,
        name=release_name,
        chart=f"{chart.repo}/{chart.chart}" if oci else chart.chart,
        repository_opts=None if oci else {"repo": chart.repo},
        version=chart.version,
        namespace=chart.namespace,
        create_namespace=create_namespace,
        values=release.values | shell_values,
        opts=parent.child_opts(depends_on=depends_on),
    )


def custom_resource(
    owner: Component, name: str, manifest: dict[str, Any], **opts: Any
) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(
        name,
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata=manifest["metadata"],
        spec=manifest["spec"],
        opts=owner.child_opts(**opts),
    )
