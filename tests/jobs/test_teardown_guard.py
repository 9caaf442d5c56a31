"""jobs/teardown_guard.py, run here as its pod runs it, against a stand-in Kubernetes API: stopped while
its Deployment lives (a drain, a rollout) it exits at once; stopped because its Deployment is being
deleted (a destroy) it waits until the LoadBalancer Services and the volumes it guards are gone, and
only those. The order of deletion around it is tests/program/test_destroy.py's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from gpt_oss_infra.core.paths import JOB_SCRIPTS_DIR
from tests.support import JsonHandler, next_line, serving

SCRIPT = JOB_SCRIPTS_DIR / "teardown_guard.py"
GUARD = "/apis/apps/v1/namespaces/dynamo-system-teardown/deployments/volumes-gone"


GATEWAYS = "/apis/gateway.networking.k8s.io/v1/namespaces/gpt-oss/gateways"
DELETING = {"deletionTimestamp": "2026-11-26T12:00:00Z"}


def volume(name: str, namespace: str, policy: str) -> dict:
    claim = {"namespace": namespace, "name": f"claim-of-{name}"}
    return {"metadata": {"name": name}, "spec": {"claimRef": claim, "persistentVolumeReclaimPolicy": policy}}


def load_balancer(name: str, gateway: str) -> dict:
    """A LoadBalancer Service Envoy Gateway made for a Gateway of namespace gpt-oss (its labels)."""
    labels = {
        "gateway.envoyproxy.io/owning-gateway-name": gateway,
        "gateway.envoyproxy.io/owning-gateway-namespace": "gpt-oss",
    }
    return {"metadata": {"name": name, "labels": labels}, "spec": {"type": "LoadBalancer"}}


class _Api(JsonHandler):
    """The API paths the guard reads. Its Deployment as `deployment` says (None: gone); one NLB Service and
    one volume to wait for, which go after `polls` lists; what it must never wait for stays: a Retain
    volume, another namespace's, a ClusterIP Service, and what still has its owner (a live Gateway's
    Service, a live claim's volume)."""

    deployment: dict | None = {"metadata": {"name": "volumes-gone"}}
    polls = 3
    seen: list[str] = []

    def do_GET(self):
        path = self.path.split("?")[0]
        self.seen.append(path)
        if path == GUARD:
            return self.reply(self.deployment) if self.deployment else self.reply({"kind": "Status"}, 404)
        going = type(self).polls > 0
        if path == "/api/v1/namespaces/envoy-gateway-system/services":
            services = [
                {"metadata": {"name": "envoy-internal"}, "spec": {"type": "ClusterIP"}},
                load_balancer("envoy-other-team", "live"),
            ]
            if going:
                services.append(load_balancer("envoy-gpt-oss", "going"))
            return self.reply({"kind": "ServiceList", "items": services})
        if path == f"{GATEWAYS}/live":
            return self.reply({"metadata": {"name": "live"}})
        if path == f"{GATEWAYS}/going":
            return self.reply({"metadata": {"name": "going"} | DELETING})
        if path == "/api/v1/namespaces/dynamo-system/persistentvolumeclaims/claim-of-live":
            return self.reply({"metadata": {"name": "claim-of-live"}})
        if path == "/api/v1/persistentvolumes":
            type(self).polls -= 1
            volumes = [
                volume("kept", "monitoring", "Retain"),
                volume("theirs", "other-team", "Delete"),
                volume("live", "dynamo-system", "Delete"),
            ]
            if going:
                volumes.append(volume("pvc-1", "monitoring", "Delete"))
            return self.reply({"kind": "PersistentVolumeList", "items": volumes})
        return self.reply({"kind": "Status"}, 404)


def run_guard(tmp_path, deployment: dict | None) -> tuple[subprocess.CompletedProcess, type[_Api]]:
    """Start the guard, stop it (SIGTERM) once it guards, and let it end: what it printed, and the API."""
    api = type("Api", (_Api,), {"deployment": deployment, "polls": 3, "seen": []})
    (tmp_path / "token").write_text("not-a-secret")
    with serving(api) as port:
        env = {
            "KUBERNETES_API": f"http://127.0.0.1:{port}",
            "SERVICE_ACCOUNT_DIR": str(tmp_path),
            "GUARD_NAMESPACE": "dynamo-system-teardown",
            "GUARD_DEPLOYMENT": "volumes-gone",
            "LOAD_BALANCER_NAMESPACES": "envoy-gateway-system",
            "CLAIM_NAMESPACES": "dynamo-system,monitoring",
            "POLL_SECONDS": "0.05",
            "PATH": os.environ["PATH"],
        }
        guard = subprocess.Popen(
            [sys.executable, str(SCRIPT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            first = _line_within(guard, 30)
            assert first.startswith("guarding: "), first + guard.stderr.read()
            assert api.seen == []  # asleep: it reads nothing until stopped
            guard.send_signal(signal.SIGTERM)
            out, err = guard.communicate(timeout=30)
        finally:
            guard.kill()
            guard.wait(timeout=10)
    return subprocess.CompletedProcess(guard.args, guard.returncode, first + "\n" + out, err), api


def _line_within(process: subprocess.Popen, seconds: float) -> str:
    line = next_line(process, seconds)
    if line is None:
        raise AssertionError(f"the guard printed nothing within {seconds} s")
    return line.strip()


def test_stopped_while_its_deployment_lives_it_exits_at_once(tmp_path):
    started = time.monotonic()
    done, api = run_guard(tmp_path, {"metadata": {"name": "volumes-gone"}})
    assert done.returncode == 0, done.stderr
    assert "stopped, not deleted" in done.stdout
    assert api.seen == [GUARD]  # it asked about its Deployment, and waited for nothing
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(
    "deployment",
    [{"metadata": {"name": "volumes-gone"} | DELETING}, None],
    ids=["being-deleted", "gone"],
)
def test_stopped_by_its_deletion_it_waits_until_what_it_guards_is_gone(tmp_path, deployment):
    done, api = run_guard(tmp_path, deployment)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "guarding: LoadBalancer Services in envoy-gateway-system; "
        "volumes (reclaim Delete) of claims in dynamo-system, monitoring"
    )
    waiting = [line for line in lines if line.startswith("waiting for")]
    assert (
        waiting
        == [
            "waiting for 2 to be gone: Service envoy-gateway-system/envoy-gpt-oss (its load balancer), "
            "PersistentVolume pvc-1 (claim monitoring/claim-of-pvc-1)"
        ]
        * 3
    )  # never the Retain volume, another namespace's, a live claim's, a ClusterIP Service nor a live Gateway's
    assert lines[-1].startswith("gone: ")
    assert api.seen.count("/api/v1/persistentvolumes") == 4
