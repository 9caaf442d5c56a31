"""components/base.py: Component.child_opts parents children to the component and hands them what it waits for."""

from __future__ import annotations

import weakref

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


@pytest.mark.filterwarnings("ignore:There is a conflict between the `provider` field")  # the "both" shape's, on purpose
def test_a_components_children_use_the_provider_the_sdk_gives_them(engine):
    """base.provider_of, against the provider the SDK registers a child with (Resource._get_providers): a dict of
    providers by its keys (one filed under another package's key is not that package's), `providers` before
    `provider` for one package, then the parent's."""
    import pulumi_kubernetes as k8s

    from gpt_oss_infra.components.base import provider_of

    found = {}

    def program():
        p, q = k8s.Provider("p", kubeconfig="{}"), k8s.Provider("q", kubeconfig="{}")
        parent = pulumi.ComponentResource("test:index:Parent", "outer", opts=pulumi.ResourceOptions(providers=[q]))
        shapes = {
            "mis-keyed": pulumi.ResourceOptions(providers={"k8s": p}),
            "both": pulumi.ResourceOptions(provider=q, providers=[p]),
            "provider": pulumi.ResourceOptions(provider=p),
            "parent": pulumi.ResourceOptions(parent=parent),
            "none": None,
        }
        for shape, opts in shapes.items():
            component = Component("test:index:Block", shape, None, opts)
            child = k8s.core.v1.ConfigMap(f"{shape}-child", opts=component.child_opts())
            found[shape] = (provider_of(opts, "kubernetes"), child.get_provider("kubernetes:core/v1:ConfigMap"))
        found["p"], found["q"] = p, q

    engine.run(program)
    p, q = found.pop("p"), found.pop("q")
    assert {shape: sdks for shape, (_, sdks) in found.items()} == {
        "mis-keyed": None, "both": p, "provider": p, "parent": q, "none": None
    }  # fmt: skip
    assert all(ours is sdks for ours, sdks in found.values())


def test_providers_are_told_apart_by_object_and_never_kept_alive_by_it():
    """Two providers of one name under different parents are two resources (their URNs differ): told apart by
    type and name they were one cluster, and valid programs were refused (a reviewer's). The key is the
    object's, held weakly: a run's state keyed by it does not keep the provider, and with it the run, alive."""
    import gc

    from gpt_oss_infra.components.base import provider_key

    class Provider:
        """A provider object: what the key tells apart (any two are, whatever their names)."""

    east, west = Provider(), Provider()
    assert provider_key(east) != provider_key(west)
    assert provider_key(east) == provider_key(east) and provider_key(None) is None
    gone = weakref.ref(east)
    del east
    gc.collect()
    assert gone() is None
