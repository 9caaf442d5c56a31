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


def test_the_state_names_the_provider_class_by_module_not_by_its_code():
    blob = base64.b64decode(serialize_provider(WaitAtDestroyProvider()))
    assert b"gpt_oss_infra.components.destroy_wait" in blob and b"WaitAtDestroyProvider" in blob
    assert b"co_code" not in blob and b"wait_until_gone" not in blob  # no code of its own travels with it


def test_a_live_wait_is_deleted_at_once_in_a_fresh_process_touching_no_cluster():
    """As Pulumi's dynamic provider process does (dill): load the provider from the state, delete the wait."""
    blob = serialize_provider(WaitAtDestroyProvider())
    code = (
        "import base64, sys, dill, time; provider = dill.loads(base64.b64decode(sys.stdin.readline())); "
        "started = time.monotonic(); provider.delete('load-balancers-gone', eval(sys.stdin.read())); "
        "print(round(time.monotonic() - started, 3))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=f"{blob}\n{OLD_PROPS!r}",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 1.0  # 0.2.0's wait would poll the cluster for up to 900 s
