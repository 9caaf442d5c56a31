"""The Dynamo platform: the release's CRDs where the program applies them, its namespace, an optional
NGC pull secret, the pinned Helm release. Depend on the component to wait for all of it (every graph
does): the release is deployed once the operator's pods are Ready, after its crd-apply init container
where the operator applies the CRDs."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component, secret
from gpt_oss_infra.components.kubernetes import namespace_resource, resource_args
from gpt_oss_infra.core.dynamo import CHART
from gpt_oss_infra.core.render.stack_objects import PlatformObjects


@dataclass(frozen=True)
class StackPlatformArgs:
    objects: PlatformObjects
    ngc_api_key: pulumi.Output[str] | None
    crds_provider: k8s.Provider | None = None  # the upserting provider of the CRDs (components/kubernetes.py)


def docker_config_json(ngc_api_key: pulumi.Output[str]) -> pulumi.Output[str]:
    """nvcr.io credentials as a .dockerconfigjson value (NGC's user name is literally $oauthtoken)."""
    return secret(ngc_api_key).apply(
        lambda key: json.dumps({"auths": {"nvcr.io": {"username": "$oauthtoken", "password": key}}})
    )


class StackPlatform(Component):
    """GptOssStack's Dynamo platform. Its type keeps the token of the program before 0.1.0, so that
    live stacks keep their URNs; the public DynamoPlatform makes the same resources."""

    def __init__(self, name: str, args: StackPlatformArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:dynamo:DynamoPlatform", name, None, opts)
        self.release = add_dynamo_platform(self, name, args.objects, args.ngc_api_key, crds_provider=args.crds_provider)
        self.register_outputs({"release": self.release.name})


def add_dynamo_platform(
    owner: Component,
    name: str,
    objects: PlatformObjects,
    ngc_api_key: pulumi.Output[str] | None,
    after: list[pulumi.Resource] | None = None,
    crds_provider: k8s.Provider | None = None,
) -> k8s.helm.v3.Release:
    """The platform's resources, children of `owner`: its Helm release is Ready once the operator is.
    `after`: what they are made after and deleted before (its teardown guard); `crds_provider`: the
    CRDs' own, upserting provider (default: the owner's)."""
    after = after or []
    # One owner for the CRDs (configs/dynamo/versions.yaml `crds`). Up to 1.2.1 the program applies
    # the release's CRDs itself, so that a preview of an existing cluster knows them and an upgrade
    # updates them before the operator and the graphs; the operator patches spec.conversion (its
    # conversion webhook) at run time, which Pulumi leaves to it. From 1.3 the list is empty: the
    # operator's crd-apply init container applies its own. Deleting a CRD deletes every object of
    # its kind: removing one from the program (or handing it to the operator) leaves it in the cluster.
    crds = [
        k8s.apiextensions.v1.CustomResourceDefinition(
            f"{name}-crd-{crd['spec']['names']['plural']}",
            **resource_args(crd),
            opts=owner.child_opts(
                depends_on=after,
                ignore_changes=["spec.conversion"],
                retain_on_delete=True,
                **({"provider": crds_provider} if crds_provider else {}),
            ),
        )
        for crd in objects.crds
    ]
    namespace = namespace_resource(f"{name}-namespace", objects.namespace, owner.child_opts(depends_on=after))
    waits_for = [namespace]
    if objects.pull_secret is not None and ngc_api_key is not None:
        waits_for.append(
            k8s.core.v1.Secret(
                f"{name}-ngc-pull",
                **resource_args(objects.pull_secret),
                string_data={".dockerconfigjson": docker_config_json(ngc_api_key)},
                opts=owner.child_opts(depends_on=[namespace]),
            )
        )
    # helm.v3.Release (not v4.Chart): a real Helm release with the chart's own hooks, whose readiness
    # wait covers the operator's init containers. The chart's crds/ folder is always skipped
    # (skipCrds); its crd-apply init container is on only where the operator owns the CRDs.
    return k8s.helm.v3.Release(
        f"{name}-release",
        name=CHART,
        # The release's chart package by its HTTPS URL, as NVIDIA's install guide fetches it: NGC serves
        # no OCI chart, and its repository index is not what the guide relies on.
        chart=objects.dynamo.chart_url,
        version=objects.dynamo.version,
        namespace=objects.namespace["metadata"]["name"],
        values=objects.values,
        skip_crds=True,
        timeout=900,
        max_history=10,
        opts=owner.child_opts(depends_on=[*crds, *waits_for]),
    )
