"""The base of every component here."""

from __future__ import annotations

from typing import Any

import pulumi


class Component(pulumi.ComponentResource):
    """A ComponentResource whose children wait for what the component waits for.

    Pulumi does not pass a component's `depends_on` to its children, so a node group inside a
    component that depends on the add-ons would not wait for them; `child_opts` does.
    """

    def __init__(self, t: str, name: str, props: Any, opts: pulumi.ResourceOptions | None):
        super().__init__(t, name, props, opts)
        depends_on = opts.depends_on if opts else None
        self._inherited_depends_on = (
            list(depends_on) if isinstance(depends_on, list | tuple) else ([depends_on] if depends_on else [])
        )

    def child_opts(self, *, depends_on: list[pulumi.Resource] | None = None, **extra: Any) -> pulumi.ResourceOptions:
        waits_for = [*self._inherited_depends_on, *(depends_on or [])]
        return pulumi.ResourceOptions(parent=self, depends_on=waits_for or None, **extra)
