"""The destroy waits of 0.2.0 and earlier, kept only so that live stacks can let them go.

Up to 0.2.0 `pulumi destroy` waited on Pulumi dynamic resources (`volumes-gone`, `load-balancers-gone`)
whose deletion watched the cluster; the teardown guards replace them (core/render/teardown.py), which
every Pulumi language can load. A dynamic resource's state names its provider class by module and name
(the SDK pickles it by reference), so the `pulumi up` that drops an old wait, and a destroy of a stack
still holding one, run the class below, from this module: it deletes at once, waiting for nothing
(the teardown guards, made by that same `up`, wait instead).
"""

from __future__ import annotations

from typing import Any

import pulumi.dynamic


class WaitAtDestroyProvider(pulumi.dynamic.ResourceProvider):
    """A 0.2.0 destroy wait's provider: nothing to create, update, or wait for when deleted."""

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        return pulumi.dynamic.CreateResult(id_=props["wait"]["name"], outs=props)

    def diff(self, _id: str, _olds: dict[str, Any], _news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        return pulumi.dynamic.DiffResult(changes=False, replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(outs=news)

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Gone at once: the teardown guards wait for what this waited for."""
