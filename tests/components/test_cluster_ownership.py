"""components/cluster_ownership.py through the real Kubernetes client against a stand-in API server, and
the program on a cluster of kind `existing`: at `preview` and `up`, before anything is registered, it
refuses what it would take from someone else (a namespace it did not make, a clashing Helm release);
objects it made earlier pass; it reads and never writes."""

from __future__ import annotations

import copy
import json

import pulumi
import pytest

from gpt_oss_infra import GptOssStack
from gpt_oss_infra.components import cluster_ownership
from gpt_oss_infra.components.stack_config import StackFileConfig
from gpt_oss_infra.components.targets import existing
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.ownership import ADOPTED_ANNOTATION, OWNER_ANNOTATION
from gpt_oss_infra.core.stack import build_stack
from tests.support import JsonHandler, example_entries, local_kubeconfig, registered, serving, successful_run

OURS = "organization/gpt-oss-infra/test"  # the engine fixture's organization, project and stack


class _Api(JsonHandler):
    """dynamo-system exists, made by someone else; gpt-oss exists, this stack's; a dynamo-platform release
    runs in team-a. Every request is recorded."""

    requests: list[tuple[str, str]] = []

    def do_GET(self):
        self.requests.append(("GET", self.path))
        path = self.path.split("?")[0]
        if path == "/api/v1/namespaces/dynamo-system":
            return self.reply({"kind": "Namespace", "metadata": {"name": "dynamo-system"}})
        if path == "/api/v1/namespaces/gpt-oss":
            return self.reply(
                {"kind": "Namespace", "metadata": {"name": "gpt-oss", "annotations": {OWNER_ANNOTATION: OURS}}}
            )
        if path == "/api/v1/secrets" and "name%3Ddynamo-platform" in self.path:
            secret = {"metadata": {"name": "sh.helm.release.v1.dynamo-platform.v3", "namespace": "team-a"}}
            return self.reply({"kind": "SecretList", "items": [secret]})
        if path == "/api/v1/secrets":
            return self.reply({"kind": "SecretList", "items": []})
        return self.reply({"kind": "Status", "code": 404}, 404)


def existing_cluster_config() -> dict:
    return copy.deepcopy(namespace_config(example_entries("existing-cluster")))


def test_the_client_reads_what_exists_and_the_refusals_name_each_key(catalog):
    api = type("Api", (_Api,), {"requests": []})
    stack = build_stack(existing_cluster_config(), catalog, with_hf_token=False)
    with serving(api) as port:
        problems = cluster_ownership.cluster_problems(stack, json.dumps(local_kubeconfig(port)), None, OURS)
    assert {problem.key for problem in problems} == {"gpt-oss-infra:platform.namespace"}
    messages = " | ".join(problem.message for problem in problems)
    assert "Namespace dynamo-system exists in the cluster and this stack did not make it" in messages
    assert "a Helm release named dynamo-platform already runs in namespace team-a" in messages
    assert "Namespace gpt-oss" not in messages  # this stack's own, from an earlier `up`
    assert {method for method, _ in api.requests} == {"GET"}


def test_an_unreachable_cluster_is_a_refusal_naming_the_kubeconfig(catalog):
    stack = build_stack(existing_cluster_config(), catalog, with_hf_token=False)
    (problem,) = cluster_ownership.cluster_problems(stack, json.dumps(local_kubeconfig(1)), None, OURS)
    assert problem.key == "kubernetes:kubeconfig"
    assert problem.message.startswith("cannot read the cluster to check what exists in it before changing anything")


@pytest.mark.parametrize("adopted", [False, True])
def test_the_program_refuses_before_registering_anything_unless_adopted(engine, monkeypatch, adopted):
    """What `pulumi preview` and `up` do on a real engine (the check is off on the mock engine)."""
    api = type("Api", (_Api,), {"requests": []})
    monkeypatch.setattr(existing, "offline", lambda: False)
    config = existing_cluster_config()
    if adopted:
        config["cluster"]["adopt"] = ["Namespace/dynamo-system"]
    with serving(api) as port:
        engine.configure({"kubernetes:kubeconfig": json.dumps(local_kubeconfig(port))})
        with pytest.raises(pulumi.RunError) as refused:
            engine.run(lambda: GptOssStack("gpt-oss-infra", {"config": StackFileConfig(config)}) and None)
    message = str(refused.value)
    assert message.startswith("invalid stack config in Pulumi.test.yaml:")
    assert ("Namespace dynamo-system exists" in message) is not adopted
    assert "a Helm release named dynamo-platform already runs in namespace team-a" in message  # never adoptable
    assert "Namespace gpt-oss" not in message  # the program's owner is the one the stack's earlier `up` wrote
    assert engine.mocks.resources == []


def test_an_adopted_namespace_is_only_annotated_and_destroy_leaves_it():
    """A Namespace made by the stack is a Namespace resource (destroy deletes it); an adopted one is a
    NamespacePatch of the adopted-by annotation alone: its labels stay its owner's, and a Patch never
    deletes its object."""
    entries = example_entries("existing-cluster")
    entries["gpt-oss-infra:cluster"] = entries["gpt-oss-infra:cluster"] | {"adopt": ["Namespace/dynamo-system"]}
    run = successful_run(entries, stack="existing-cluster")
    platform = registered(run, "dynamo-platform-namespace")
    assert platform.type == "kubernetes:core/v1:NamespacePatch"
    assert platform.inputs["metadata"] == {
        "name": "dynamo-system",
        "annotations": {ADOPTED_ANNOTATION: "organization/gpt-oss-infra/existing-cluster"},
    }
    assert registered(run, "workloads-namespace").type == "kubernetes:core/v1:Namespace"


def test_a_kubeconfigs_contents_are_read_as_contents_and_never_quoted(catalog):
    """A client-certificate kubeconfig is kilobytes long: taken for a path, Path.exists raised
    ENAMETOOLONG and the refusal quoted the whole kubeconfig, its key included."""
    stack = build_stack(existing_cluster_config(), catalog, with_hf_token=False)
    secret = "c2VjcmV0LWtleS1ub3QtdG8tYmUtc2hvd24=" * 200  # 7 KB, as a client-key-data would be
    kubeconfig = json.dumps(local_kubeconfig(1) | {"users": [{"name": "me", "user": {"client-key-data": secret}}]})
    assert len(kubeconfig) > 4096
    (problem,) = cluster_ownership.cluster_problems(stack, kubeconfig, None, OURS)
    assert problem.key == "kubernetes:kubeconfig"
    assert "File name too long" not in problem.message and secret[:40] not in problem.message
