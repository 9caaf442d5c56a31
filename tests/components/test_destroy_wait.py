"""The destroy-time wait (components/destroy_wait.py): what its deletion does, against a fake cluster
and through the real Kubernetes client against a stand-in API server, and that Pulumi can carry its
provider to the process that runs it. A real destroy is not run here (no cluster): the order of
deletion is tests/program/test_gateway.py's and test_destroy.py's, from the program's dependencies."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from dataclasses import asdict

import pytest

from gpt_oss_infra.components.destroy_wait import KubernetesCluster, WaitAtDestroyProvider, wait_until_gone
from gpt_oss_infra.core.render.destroy_waits import volume_wait
from gpt_oss_infra.tools.plan import ROOT
from tests.support import JsonHandler, local_kubeconfig, serving

# Both kinds in one wait: a gateway's Service, and the claims of the platform's namespace.
WAIT = asdict(volume_wait(["dynamo-system"])) | {"nlb_services": ["envoy-gateway-system/gpt-oss-chat"]}


class FakeCluster:
    """Services and volumes that go after `polls` looks; records what the wait asked."""

    def __init__(self, polls: int):
        self.polls, self.calls = polls, []

    def services_left(self, services):
        self.calls.append("services")
        self.polls -= 1
        return [f"Service {s}" for s in services] if self.polls >= 0 else []

    def volumes_left(self, namespaces):
        return ["PersistentVolume pvc-1 (claim dynamo-system/nats-js-nats-0)"] if self.polls >= 0 else []


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_the_wait_returns_once_everything_is_gone():
    cluster, clock = FakeCluster(polls=3), Clock()
    wait_until_gone(cluster, WAIT, clock, clock.sleep)
    assert cluster.calls == ["services", "services", "services", "services"]
    assert clock.now == 30  # three polls 10 s apart


def test_the_wait_gives_up_at_its_timeout_naming_what_is_left_and_where_to_look():
    cluster, clock = FakeCluster(polls=10**6), Clock()
    with pytest.raises(TimeoutError) as error:
        wait_until_gone(cluster, WAIT, clock, clock.sleep)
    message = str(error.value)
    assert message.startswith(
        "Service envoy-gateway-system/gpt-oss-chat, PersistentVolume pvc-1 (claim dynamo-system/nats-js-nats-0): "
        "still there 900 s after their controller was asked to delete them"
    )
    assert "aws ec2 describe-volumes --filters Name=tag:kubernetes.io/created-for/pvc/namespace" in message
    assert clock.now == 900


class _Api(JsonHandler):
    """The few Kubernetes API paths the wait uses: one Service still there, three volumes of which one
    is in the namespace with reclaim policy Delete; any DELETE is recorded (the wait sends none)."""

    deleted: list[str] = []

    def do_GET(self):
        if self.path.startswith("/api/v1/namespaces/envoy-gateway-system/services/gpt-oss-chat"):
            return self.reply({"kind": "Service", "metadata": {"name": "gpt-oss-chat"}})
        if self.path.startswith("/api/v1/namespaces/envoy-gateway-system/services/"):
            return self.reply({"kind": "Status", "code": 404}, 404)
        if self.path.startswith("/api/v1/persistentvolumes"):
            return self.reply(
                {
                    "kind": "PersistentVolumeList",
                    "items": [
                        volume("pvc-1", "dynamo-system", "Delete"),
                        volume("pvc-2", "dynamo-system", "Retain"),  # kept on purpose: never waited for
                        volume("pvc-3", "other", "Delete"),
                    ],
                }
            )
        return self.reply({"kind": "Status", "code": 404}, 404)

    def do_DELETE(self):
        self.deleted.append(self.path.split("?")[0])
        self.reply({"kind": "Status", "code": 200})


def volume(name, namespace, policy):
    claim = {"namespace": namespace, "name": f"claim-of-{name}"}
    return {"metadata": {"name": name}, "spec": {"claimRef": claim, "persistentVolumeReclaimPolicy": policy}}


def test_the_kubernetes_client_reads_services_and_lists_the_volumes_of_the_namespaces_deleting_nothing():
    api = type("Api", (_Api,), {"deleted": []})
    with serving(api) as port:
        cluster = KubernetesCluster(json.dumps(local_kubeconfig(port)), None)  # the contents, as the state holds them
        assert cluster.services_left(["envoy-gateway-system/gpt-oss-chat", "envoy-gateway-system/gone"]) == [
            "Service envoy-gateway-system/gpt-oss-chat"
        ]
        assert cluster.volumes_left(["dynamo-system"]) == [
            "PersistentVolume pvc-1 (claim dynamo-system/claim-of-pvc-1)"
        ]
        wait_until_gone(cluster, {**WAIT, "nlb_services": [], "claim_namespaces": ["other-namespace"]})
    assert api.deleted == []  # a run outside a destroy can only wait


def test_pulumi_carries_the_provider_to_a_fresh_process_that_runs_it():
    """Pulumi serializes a dynamic provider (dill) and its provider process, started in the project
    directory, loads it: done here the same way, and the loaded provider's create run."""
    from pulumi.dynamic.dynamic import serialize_provider

    blob = serialize_provider(WaitAtDestroyProvider())
    code = (
        "import base64, sys, dill; provider = dill.loads(base64.b64decode(sys.stdin.read())); "
        "print(provider.create({'wait': {'name': 'volumes-gone'}}).id)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=blob, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "volumes-gone"
    assert base64.b64decode(blob)  # what the state holds: base64 of the pickled provider
