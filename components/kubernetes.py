"""Helpers shared by components that create Kubernetes objects from the core's manifest dicts."""

from __future__ import annotations

import json
import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component, secret
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


def docker_config_json(ngc_api_key: pulumi.Output[str]) -> pulumi.Output[str]:
    """nvcr.io credentials as a .dockerconfigjson value (NGC's user name is literally $oauthtoken)."""
    return secret(ngc_api_key).apply(
        lambda key: json.dumps({"auths": {"nvcr.io": {"username": "$oauthtoken", "password": key}}})
    )


def crds_provider(
    name: str, kubeconfig: pulumi.Input[str] | None, context: str | None, opts: pulumi.ResourceOptions
) -> k8s.Provider:
    """The provider of the Dynamo CRDs a release up to 1.2.1 has the program apply, and only of them: it
    upserts. From 1.3 the operator applies its own CRDs, so a rollback to 1.2.1 finds them in the cluster
    (the upgrade dropped them from the state, retainOnDelete), and the CRDs of an earlier install are
    the known case of objects taken over on purpose; no other object goes through it."""
    return k8s.Provider(
        name,
        kubeconfig=kubeconfig,
        context=context,
        enable_server_side_apply=True,
        upsert_existing_objects=True,
        opts=opts,
    )


def ngc_pull_secret(
    name: str, manifest: dict[str, Any], ngc_api_key: pulumi.Output[str], opts: pulumi.ResourceOptions
) -> k8s.core.v1.Secret:
    """A namespace's nvcr.io image pull secret: the rendered Secret (no data) with the NGC key as its
    .dockerconfigjson, set here so that the key stays a Pulumi secret."""
    return k8s.core.v1.Secret(
        name, **resource_args(manifest), string_data={".dockerconfigjson": docker_config_json(ngc_api_key)}, opts=opts
    )


def namespace_resource(name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """A namespace of the stack's, or, where the stack adopts it (core/render/ownership.py), a patch that
    marks it adopted and nothing else: its labels (Pod Security Admission too) stay its owner's, and
    `pulumi destroy` takes the mark off and leaves the namespace (a Patch resource never deletes)."""
    metadata = manifest["metadata"]
    adopted_by = metadata.get("annotations", {}).get(ADOPTED_ANNOTATION)
    if adopted_by is None:
        return k8s.core.v1.Namespace(name, **resource_args(manifest), opts=opts)
    return k8s.core.v1.NamespacePatch(
        name, metadata={"name": metadata["name"], "annotations": {ADOPTED_ANNOTATION: adopted_by}}, opts=opts
    )


# The class of each kind the shell registers by its manifest's kind: a Job's access (core.render.scripts.
# ScriptedJob.access) and a teardown guard's namespace and access (core/render/teardown.py).
MANIFEST_CLASSES = {
    "Namespace": k8s.core.v1.Namespace,
    "ServiceAccount": k8s.core.v1.ServiceAccount,
    "Role": k8s.rbac.v1.Role,
    "RoleBinding": k8s.rbac.v1.RoleBinding,
    "ClusterRole": k8s.rbac.v1.ClusterRole,
    "ClusterRoleBinding": k8s.rbac.v1.ClusterRoleBinding,
    "ConfigMap": k8s.core.v1.ConfigMap,
}


def manifest_resources(
    owner: Component, prefix: str, manifests: list[dict[str, Any]], depends_on: list[pulumi.Resource] | None = None
) -> list[pulumi.Resource]:
    """Each manifest (of a kind MANIFEST_CLASSES names) as a child of `owner`, named `<prefix>-<kind>`, after
    `depends_on`."""
    return [
        MANIFEST_CLASSES[obj["kind"]](
            f"{prefix}-{obj['kind'].lower()}", **resource_args(obj), opts=owner.child_opts(depends_on=depends_on or [])
        )
        for obj in manifests
    ]


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
    access = manifest_resources(owner, name, scripted.access, depends_on=access_after)
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
        skip_crds=True if release.skips_crds else None,
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
