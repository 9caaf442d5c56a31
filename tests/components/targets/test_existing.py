"""components/targets/existing.py: an existing cluster reached through the `kubernetes:` config, nothing else made."""

from __future__ import annotations

import pulumi

from gpt_oss_infra.components.targets import existing
from gpt_oss_infra.core.render.cluster_plan import existing_cluster_plan
from tests.components.conftest import SIGNATURE_KEY, unwrap_secret

KUBECONFIG = "apiVersion: v1\nkind: Config\nusers:\n- name: lab\n  user:\n    token: lab-bearer-token\n"
EXISTING = "gpt-oss-infra:kubernetes:ExistingCluster"


def build_existing(engine, example_stack):
    made = {}

    def program():
        made["target"] = target = existing.build(
            example_stack("existing-cluster"), existing_cluster_plan(), pulumi.ResourceOptions()
        )
        return {"provider": target.provider.urn}

    values = engine.run(program)
    return made["target"], values


def test_the_plan_reads_nothing_from_any_cloud(engine, example_stack, catalog):
    plan = engine.call(lambda: existing.plan(example_stack("existing-cluster"), catalog))
    assert plan == existing_cluster_plan()
    assert "kubeconfig" in plan.api_access
    assert plan.eks is None
    assert engine.mocks.calls == []


def test_the_provider_uses_the_kubernetes_config(engine, example_stack):
    engine.configure({"kubernetes:kubeconfig": KUBECONFIG, "kubernetes:context": "lab"})
    target, values = build_existing(engine, example_stack)
    assert engine.children("existing-cluster") == ["existing-cluster-kubernetes"]
    assert engine.built["existing-cluster"].type == EXISTING
    assert values["provider"] == engine.urns["existing-cluster-kubernetes"]
    assert engine.parent_type("existing-cluster-kubernetes") == EXISTING
    provider = engine.registered("existing-cluster-kubernetes")
    assert provider.typ == "pulumi:providers:kubernetes"
    assert unwrap_secret(provider.inputs["kubeconfig"]) == KUBECONFIG  # secret however it was stored
    assert {key: value for key, value in provider.inputs.items() if key != "kubeconfig"} == {
        "context": "lab",
        "enableServerSideApply": "true",  # and no upsert: what exists is refused (or adopted one by one)
    }
    assert target.provider is engine.built["existing-cluster-kubernetes"].resource
    assert (target.system_ready, target.gpu_ready, target.file_system, target.storage_ready, target.exports) == (
        [],
        {},
        None,
        [],
        {},
    )


def test_without_config_the_provider_uses_the_ambient_kubeconfig(engine, example_stack):
    build_existing(engine, example_stack)
    inputs = engine.inputs("existing-cluster-kubernetes")
    assert not {"kubeconfig", "context"} & set(inputs)


def test_the_provider_keeps_its_urn_from_the_stacks_root(engine, example_stack):
    build_existing(engine, example_stack)
    [alias] = engine.built["existing-cluster-kubernetes"].opts.aliases
    assert (alias.name, alias.parent) == ("kubernetes", pulumi.ROOT_STACK_RESOURCE)


def test_a_secret_kubeconfig_stays_secret(engine, example_stack):
    engine.configure({"kubernetes:kubeconfig": KUBECONFIG}, ["kubernetes:kubeconfig"])
    build_existing(engine, example_stack)
    kubeconfig = engine.inputs("existing-cluster-kubernetes")["kubeconfig"]
    assert isinstance(kubeconfig, dict) and SIGNATURE_KEY in kubeconfig
    assert not [text for text in engine.plain_strings() if "lab-bearer-token" in text]
