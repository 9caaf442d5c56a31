"""The teardown guards (core/render/teardown.py): what `pulumi destroy` waits on, as Kubernetes objects
every Pulumi language can load. Their namespace and access come first; each guard's Deployment is
placed by its caller, between what it guards (which depends on it) and what must outlive it (which it
depends on)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import MANIFEST_CLASSES, namespace_resource, resource_args
from gpt_oss_infra.core.render.teardown import Teardown


@dataclass(frozen=True)
class TeardownArgs:
    teardown: Teardown


class TeardownGuards(Component):
    """The guards' namespace, ServiceAccount, RBAC and script, and the `volumes-gone` guard. `access`: what
    the `load-balancers-gone` guard (made with the gateways, by `add_guard`) waits for too."""

    def __init__(self, name: str, args: TeardownArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:teardown:TeardownGuards", name, None, opts)
        teardown = args.teardown
        namespace, *rest = teardown.access
        made_namespace = namespace_resource(f"{name}-namespace", namespace, self.child_opts())
        self.access: list[pulumi.Resource] = [
            made_namespace,
            *(
                MANIFEST_CLASSES[obj["kind"]](
                    f"{name}-{obj['kind'].lower()}",
                    **resource_args(obj),
                    opts=self.child_opts(depends_on=[made_namespace]),
                )
                for obj in rest
            ),
        ]
        self.volumes_gone = (
            add_guard(self, name, teardown.volumes_gone, self.access) if teardown.volumes_gone is not None else None
        )
        self.register_outputs({})


def add_guard(
    owner: Component,
    name: str,
    guard: dict[str, Any],
    access: list[pulumi.Resource],
    after: list[pulumi.Resource] | None = None,
) -> k8s.apps.v1.Deployment:
    """One guard's Deployment (`<name>-<its name>`), a child of `owner`, after its access and `after`
    (what must outlive it)."""
    return k8s.apps.v1.Deployment(
        f"{name}-{guard['metadata']['name']}",
        **resource_args(guard),
        opts=owner.child_opts(depends_on=[*access, *(after or [])]),
    )


def guards_of(name: str, teardown: Teardown | None, opts: pulumi.ResourceOptions) -> TeardownGuards | None:
    """The teardown guards `teardown` asks for, or None where destroy waits for nothing."""
    return TeardownGuards(name, TeardownArgs(teardown), opts=opts) if teardown else None


def volumes_gone(guards: TeardownGuards | None) -> list[pulumi.Resource]:
    """What the owners of guarded claims are made after and deleted before: `volumes-gone`, where there is one."""
    return [guards.volumes_gone] if guards and guards.volumes_gone else []
