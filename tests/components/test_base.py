"""components/base.py: Component.child_opts parents children to the component and hands them what it waits for."""

from __future__ import annotations

import pulumi
import pytest

from gpt_oss_infra.components.base import Component

PROBE = "gpt-oss-infra:test:Probe"


def ready(name: str) -> pulumi.Resource:
    return pulumi.ComponentResource("test:index:Ready", name)


@pytest.mark.parametrize(
    ("given", "inherited"),
    [
        pytest.param(lambda first, second: [first, second], ["first", "second"], id="list"),
        pytest.param(lambda first, second: (first, second), ["first", "second"], id="tuple"),
        pytest.param(lambda first, second: first, ["first"], id="one resource"),
        pytest.param(lambda first, second: None, [], id="nothing"),
    ],
)
def test_children_wait_for_what_the_component_waits_for(engine, given, inherited):
    made = {}

    def program():
        first, second = ready("first"), ready("second")
        component = Component(PROBE, "probe", None, pulumi.ResourceOptions(depends_on=given(first, second)))
        made["plain"] = component.child_opts()
        made["extra"] = component.child_opts(depends_on=[ready("extra")], protect=True)
        made["component"] = component
        return {"urn": component.urn}

    engine.run(program)
    resources = {name: built.resource for name, built in engine.built.items()}
    assert made["plain"].parent is made["component"]
    assert made["plain"].depends_on == ([resources[name] for name in inherited] or None)
    assert made["extra"].parent is made["component"]
    assert made["extra"].depends_on == [*(resources[name] for name in inherited), resources["extra"]]
    assert made["extra"].protect is True


def test_a_child_is_registered_under_the_component(engine):
    def program():
        component = Component(PROBE, "probe", None, pulumi.ResourceOptions(depends_on=[ready("before")]))
        pulumi.ComponentResource("test:index:Child", "probe-child", opts=component.child_opts())
        return {}

    engine.run(program)
    assert engine.urns["probe"] == f"urn:pulumi:test::gpt-oss-infra::pulumi:pulumi:Stack${PROBE}::probe"
    assert engine.urns["probe-child"] == f"urn:pulumi:test::gpt-oss-infra::{PROBE}$test:index:Child::probe-child"
    assert engine.waits_for("probe-child") == ["before"]


def test_extra_dependencies_of_one_child_do_not_reach_the_next(engine):
    made = {}

    def program():
        component = Component(PROBE, "probe", None, pulumi.ResourceOptions(depends_on=[ready("before")]))
        component.child_opts(depends_on=[ready("only-for-the-first")])
        made["next"] = component.child_opts()
        return {}

    engine.run(program)
    assert made["next"].depends_on == [engine.built["before"].resource]
