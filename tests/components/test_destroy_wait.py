"""The destroy waits of 0.2.0 (components/destroy_wait.py), kept only so that live stacks let them go:
the state of such a wait names its provider class by module, so the `pulumi up` that drops it runs this
class's delete, which must return at once (the teardown guards now wait instead)."""

from __future__ import annotations

import base64
import subprocess
import sys

from pulumi.dynamic.dynamic import serialize_provider

from gpt_oss_infra.components.destroy_wait import WaitAtDestroyProvider
from gpt_oss_infra.tools.plan import ROOT

# What 0.2.0 stored as the wait's properties (its kubeconfig a secret the engine decrypts for the provider).
OLD_PROPS = {
    "wait": {
        "name": "load-balancers-gone",
        "nlb_services": ["envoy-gateway-system/envoy-gpt-oss-gpt-oss"],
        "claim_namespaces": [],
        "leftovers": "aws resourcegroupstaggingapi get-resources ...",
        "timeout_seconds": 900,
    },
    "kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n",
    "context": None,
}


# What 0.2.0 stored as such a wait's provider: serialize_provider(WaitAtDestroyProvider()) run with the
# package of commit 872469e (0.2.0's last), by the SDK's own dill, on 2026-11-26.
PROVIDER_0_2_0 = (ROOT / "tests" / "data" / "destroy-wait-provider-0.2.0.b64").read_text().strip()


def test_the_state_names_the_provider_class_by_module_not_by_its_code():
    for blob in (PROVIDER_0_2_0, serialize_provider(WaitAtDestroyProvider())):
        pickled = base64.b64decode(blob)
        assert b"gpt_oss_infra.components.destroy_wait" in pickled and b"WaitAtDestroyProvider" in pickled
        assert b"co_code" not in pickled and b"wait_until_gone" not in pickled  # no code travels with it


def test_a_live_wait_of_0_2_0_is_deleted_at_once_in_a_fresh_process_touching_no_cluster():
    """As Pulumi's dynamic provider process does (dill): load 0.2.0's provider from the state, with this
    package installed, and delete the wait."""
    code = (
        "import base64, sys, dill, time; provider = dill.loads(base64.b64decode(sys.stdin.readline())); "
        "started = time.monotonic(); provider.delete('load-balancers-gone', eval(sys.stdin.read())); "
        "print(type(provider).__module__, round(time.monotonic() - started, 3))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=f"{PROVIDER_0_2_0}\n{OLD_PROPS!r}",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    module, seconds = done.stdout.split()
    assert module == "gpt_oss_infra.components.destroy_wait"
    assert float(seconds) < 1.0  # 0.2.0's wait would poll the cluster for up to 900 s
