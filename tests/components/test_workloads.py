"""components/workloads.py: the serving namespace and its NGC pull secret, kept where they were at the stack's root."""

from __future__ import annotations

import pulumi

from gpt_oss_infra.components.workloads import Workloads, WorkloadsArgs
from tests.components.conftest import (
    SYSTEM_READY,
    assert_on_the_cluster,
    on_stand_in_cluster,
    string_data_is_secret,
    unwrap_secret,
)

NGC_KEY = "nvapi-workloads-test-key"
WORKLOADS = "gpt-oss-infra:serving:Workloads"


def build_workloads(engine, stack, ngc_api_key):
    def program():
        key = pulumi.Output.secret(ngc_api_key) if ngc_api_key else None
        args = WorkloadsArgs(stack.namespace, stack.workload_pull_secret, key)
        Workloads("workloads", args, opts=on_stand_in_cluster())
        return {"secret": string_data_is_secret(engine, "workloads-ngc-pull")}

    return engine.run(program)


def test_namespace_and_pull_secret_keep_their_root_stack_urns(engine, example_stack):
    stack = example_stack("dev")
    values = build_workloads(engine, stack, NGC_KEY)
    assert assert_on_the_cluster(engine, "workloads", WORKLOADS) == ["workloads-namespace", "workloads-ngc-pull"]
    assert engine.registered("workloads-namespace").typ == "kubernetes:core/v1:Namespace"
    assert engine.inputs("workloads-namespace")["metadata"] == stack.namespace["metadata"]
    # Both were at the stack's root before the component: the namespace as `workloads`, the secret by its own name.
    [namespace_alias] = engine.built["workloads-namespace"].opts.aliases
    assert (namespace_alias.name, namespace_alias.parent) == ("workloads", pulumi.ROOT_STACK_RESOURCE)
    [secret_alias] = engine.built["workloads-ngc-pull"].opts.aliases
    assert (secret_alias.name, secret_alias.parent) == (..., pulumi.ROOT_STACK_RESOURCE)  # ...: the same name
    assert engine.waits_for("workloads-ngc-pull") == [SYSTEM_READY, "workloads-namespace"]
    secret = engine.inputs("workloads-ngc-pull")
    assert secret["metadata"] == stack.workload_pull_secret["metadata"]
    assert set(unwrap_secret(secret["stringData"])) == {".dockerconfigjson"}
    assert values["secret"] is True
    assert not [text for text in engine.plain_strings() if NGC_KEY in text]


def test_no_pull_secret_without_an_ngc_key(engine, example_stack):
    build_workloads(engine, example_stack("dev"), None)
    assert engine.children("workloads") == ["workloads-namespace"]
