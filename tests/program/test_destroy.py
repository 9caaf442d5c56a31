"""`pulumi destroy`'s order for the volumes controllers make (core/render/teardown.py), from the
program's dependencies on the mock engine: Pulumi deletes in the reverse of these waits. No destroy
is run here; the guard itself is tests/jobs/test_teardown_guard.py's, and whether a destroy gets to
the end tests/tools/test_destroy_simulation.py's."""

from __future__ import annotations

from gpt_oss_infra.tools.dependencies import transitive_waits
from tests.support import by_name, example_entries, run_entries


def test_the_charts_go_then_their_volumes_then_the_nodes_and_the_csi_driver():
    entries = example_entries("staging") | {"gpt-oss-infra:apiKeys": {"ci": "sk-test"}}
    run = run_entries(entries, stack="staging")
    assert run.error is None, run.error
    waits = transitive_waits(run.resources)
    guard = by_name(run)["dynamo-platform-teardown-volumes-gone"]
    (container,) = guard.inputs["spec"]["template"]["spec"]["containers"]
    env = {variable["name"]: variable["value"] for variable in container["env"]}
    # staging runs Dynamo 1.2.1, whose chart bundles NATS (its JetStream claim); observability has Prometheus'
    # (the model cache's volume outlives its claim: reclaim policy Retain)
    assert env["CLAIM_NAMESPACES"] == "dynamo-system,monitoring"
    assert guard.inputs["metadata"]["namespace"] == "dynamo-system-teardown"  # outlives both namespaces
    # created after the nodes and the EBS CSI driver: deleted before them
    assert {"gptoss-node-addons-aws-ebs-csi-driver", "gptoss-nodes-system"} <= waits[
        "dynamo-platform-teardown-volumes-gone"
    ]
    # the releases whose StatefulSets claim volumes, and their namespaces (whose deletion deletes the
    # claims), are created after it: deleted before it
    for after in (
        "dynamo-platform-release",
        "observability-release",
        "dynamo-platform-namespace",
        "observability-namespace",
    ):
        assert "dynamo-platform-teardown-volumes-gone" in waits[after], after
