"""Teardown guard: holds `pulumi destroy` until what controllers in the cluster made for the stack is gone.

It runs as the one pod of a Deployment (core/render/teardown.py) and sleeps. Pulumi deletes that
Deployment after what it guards (the gateways; the charts and namespaces whose claims have volumes) and
before what must outlive them (the load balancer controller, Envoy Gateway, the nodes and CSI drivers),
and waits until the Deployment is gone; deleted in the foreground, it stays until this pod has exited.
On SIGTERM the pod asks whether its Deployment is being deleted:
  - yes (a destroy, or the guard taken out of the stack): it waits until what lost its owner is gone:
    each Service of type LoadBalancer in LOAD_BALANCER_NAMESPACES whose Gateway (the labels Envoy
    Gateway puts on it) is gone or being deleted, until the AWS Load Balancer Controller has deleted its
    NLB and then the Service; and each PersistentVolume with reclaim policy Delete whose claim, in one of
    CLAIM_NAMESPACES, is gone or being deleted, until the CSI driver has deleted it. What still has its
    owner (a live gateway, a claim in a namespace that stays) is not the destroy's, and is not waited for;
    then it exits;
  - no (a node drained, an eviction, a rolling update): it exits at once.
While it waits it prints what is left, every POLL_SECONDS. It waits as long as its grace period
allows: Pulumi's deletion timeout (pulumi.com/timeoutSeconds) fails the destroy before that, and the
next destroy waits again; `kubectl logs` of the pod names what is left.

Environment: GUARD_NAMESPACE and GUARD_DEPLOYMENT (its own Deployment), LOAD_BALANCER_NAMESPACES and
CLAIM_NAMESPACES (comma-separated), POLL_SECONDS, SERVICE_ACCOUNT_DIR (the token and CA it reads the
API with), KUBERNETES_API. Standard library only: the image is a plain Python image.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request

KUBERNETES_API = os.environ.get("KUBERNETES_API", "https://kubernetes.default.svc")
# The labels Envoy Gateway puts on the Service it makes for a Gateway.
GATEWAY_NAME_LABEL = "gateway.envoyproxy.io/owning-gateway-name"
GATEWAY_NAMESPACE_LABEL = "gateway.envoyproxy.io/owning-gateway-namespace"
# How long it tries to learn whether its Deployment is being deleted before it assumes so: a guard that
# waits when it need not only delays a drain; one that exits during a destroy leaves what bills.
DECIDE_SECONDS = 60


def main() -> int:
    terminated: list[int] = []
    signal.signal(signal.SIGTERM, lambda number, _frame: terminated.append(number))
    print(f"guarding: {_what()}", flush=True)
    while not terminated:
        signal.pause()  # returns after a handled signal
    if not _being_deleted():
        print("stopped, not deleted (an eviction, a drain or a rollout): nothing to wait for", flush=True)
        return 0
    poll = float(os.environ.get("POLL_SECONDS", "5"))
    while left := _left():
        print(f"waiting for {len(left)} to be gone: {', '.join(left)}", flush=True)
        time.sleep(poll)
    print(f"gone: {_what()}", flush=True)
    return 0


def _what() -> str:
    services, claims = _namespaces("LOAD_BALANCER_NAMESPACES"), _namespaces("CLAIM_NAMESPACES")
    parts = [f"LoadBalancer Services in {', '.join(services)}"] if services else []
    parts += [f"volumes (reclaim Delete) of claims in {', '.join(claims)}"] if claims else []
    return "; ".join(parts) or "nothing"


def _being_deleted() -> bool:
    """Whether its Deployment has a deletion timestamp, or is gone; assumed so when the API cannot say."""
    path = f"/apis/apps/v1/namespaces/{os.environ['GUARD_NAMESPACE']}/deployments/{os.environ['GUARD_DEPLOYMENT']}"
    deadline = time.monotonic() + DECIDE_SECONDS
    while time.monotonic() < deadline:
        try:
            return "deletionTimestamp" in _get(path).get("metadata", {})
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return True
            problem = f"HTTP {error.code}"
        except (OSError, ValueError) as error:
            problem = str(error)
        print(f"cannot read its Deployment yet ({problem}): trying again", flush=True)
        time.sleep(2)
    print(f"could not read its Deployment in {DECIDE_SECONDS} s: waiting as in a destroy", flush=True)
    return True


def _left() -> list[str]:
    """What is still there, by name; what cannot be read counts as still there."""
    try:
        return _load_balancers_left() + _volumes_left()
    except (OSError, ValueError) as error:
        return [f"(the API answered no list: {error})"]


def _load_balancers_left() -> list[str]:
    left = []
    for namespace in _namespaces("LOAD_BALANCER_NAMESPACES"):
        for service in _get(f"/api/v1/namespaces/{namespace}/services").get("items", []):
            labels = service["metadata"].get("labels") or {}
            gateway = (labels.get(GATEWAY_NAMESPACE_LABEL), labels.get(GATEWAY_NAME_LABEL))
            if service.get("spec", {}).get("type") == "LoadBalancer" and _going(
                f"/apis/gateway.networking.k8s.io/v1/namespaces/{gateway[0]}/gateways/{gateway[1]}"
                if all(gateway)
                else None
            ):
                left.append(f"Service {namespace}/{service['metadata']['name']} (its load balancer)")
    return left


def _volumes_left() -> list[str]:
    namespaces = set(_namespaces("CLAIM_NAMESPACES"))
    if not namespaces:
        return []
    left = []
    for volume in _get("/api/v1/persistentvolumes").get("items", []):
        spec = volume.get("spec", {})
        claim = spec.get("claimRef") or {}
        if (
            claim.get("namespace") in namespaces
            and spec.get("persistentVolumeReclaimPolicy") == "Delete"
            and _going(f"/api/v1/namespaces/{claim['namespace']}/persistentvolumeclaims/{claim.get('name')}")
        ):
            left.append(
                f"PersistentVolume {volume['metadata']['name']} (claim {claim['namespace']}/{claim.get('name')})"
            )
    return left


def _going(owner: str | None) -> bool:
    """Whether an owner (a REST path; None: unknown) is gone or being deleted, so what it owns goes too."""
    if owner is None:
        return True
    try:
        return "deletionTimestamp" in _get(owner).get("metadata", {})
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return True
        raise


def _namespaces(variable: str) -> list[str]:
    return [name for name in os.environ.get(variable, "").split(",") if name]


def _get(path: str) -> dict:
    account = os.environ["SERVICE_ACCOUNT_DIR"]
    with open(f"{account}/token") as token:
        request = urllib.request.Request(
            f"{KUBERNETES_API}{path}", headers={"Authorization": f"Bearer {token.read().strip()}"}
        )
    context = ssl.create_default_context(cafile=f"{account}/ca.crt") if KUBERNETES_API.startswith("https") else None
    with urllib.request.urlopen(request, timeout=30, context=context) as response:
        return json.load(response)


if __name__ == "__main__":
    sys.exit(main())
