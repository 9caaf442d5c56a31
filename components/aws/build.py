"""Register the AWS resources the core describes (core/render/aws/resources.py), as they are: each
one's pulumi_aws class from its type token, its inputs with every Ref made the Output it stands for."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.core.render.aws.resources import GIVEN, AwsResource, Ref

Built = dict[str, pulumi.CustomResource]


def register(
    owner: Component,
    resources: list[AwsResource],
    built: Built,
    given: Mapping[str, Any] | None = None,
    aliases: list[pulumi.Alias] | None = None,
) -> Built:
    """Each resource as a child of `owner`, in order; `built` (the resources registered so far, by name,
    which later Refs may name) gains them. `given`: the values GIVEN Refs name; `aliases`: each one's
    earlier URNs (where they were before a move)."""
    for resource in resources:
        options: dict[str, Any] = {"aliases": aliases} if aliases else {}
        if resource.ignore_changes:
            options["ignore_changes"] = list(resource.ignore_changes)
        if resource.retain_on_delete:
            options["retain_on_delete"] = True
        waits_for = [built[name] for name in resource.depends_on]
        built[resource.name] = resource_class(resource.type)(
            resource.name,
            **resolved(resource.inputs, built, given),
            opts=owner.child_opts(depends_on=waits_for, **options),
        )
    return built


@functools.cache
def resource_class(type_token: str) -> type[pulumi.CustomResource]:
    """aws:ec2/launchTemplate:LaunchTemplate -> pulumi_aws.ec2.LaunchTemplate."""
    module, class_name = type_token.split(":")[1].split("/")[0], type_token.rsplit(":", 1)[1]
    found: type[pulumi.CustomResource] = getattr(getattr(aws, module), class_name)
    return found


def resolved(value: Any, built: Built, given: Mapping[str, Any] | None = None) -> Any:
    """`value` with every Ref in it made the Output (or given value) it stands for."""
    if isinstance(value, Ref):
        return _output(value, built, given or {})
    if isinstance(value, dict):
        return {key: resolved(item, built, given) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item, built, given) for item in value]
    return value


def _output(ref: Ref, built: Built, given: Mapping[str, Any]) -> Any:
    if ref.source == GIVEN:
        value = given[ref.attribute]
    else:
        value = built[ref.source]
        for attribute in ref.attribute.split("."):
            value = getattr(value, attribute)
    if ref.then is None:
        return value
    # An Output's own apply: Output.from_input would turn its typed values (e.g. a node group's
    # resources) into plain dicts first.
    return (value if isinstance(value, pulumi.Output) else pulumi.Output.from_input(value)).apply(ref.then)


class AwsResources(Component):
    """A part of the AWS resources (a network, node groups, add-ons, a file system), registered as the
    core describes them; `made`: each by name. Its type is the part's (gpt-oss-infra:aws:<type_name>)."""

    def __init__(
        self,
        type_name: str,
        name: str,
        resources: list[AwsResource],
        built: Built,
        given: Mapping[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__(f"gpt-oss-infra:aws:{type_name}", name, None, opts)
        register(self, resources, built, given)
        self.made = {resource.name: built[resource.name] for resource in resources}
        self.register_outputs({})
