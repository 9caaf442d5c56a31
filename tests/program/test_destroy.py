"""`pulumi destroy`'s order for the volumes controllers make (core/render/destroy_waits.py), from the
program's dependencies on the mock engine: Pulumi deletes in the reverse of these waits. No destroy
is run here; the wait itself is tests/components/test_destroy_wait.py's."""

from __future__ import annotations

from gpt_oss_infra.tools.dependencies import transitive_waits
from tests.support import by_name, example_entries, run_entries


def test_the_charts_go_then_their_volumes_then_the_nodes_and_the_csi_driver():
    entries = example_entries("staging") | {"gpt-oss-infra:apiKeys": {"ci": "sk-test"}}
    run = run_entries(entries, stack="staging")
    assert run.error is None, run.error
    waits = transitive_waits(run.resources)
    wait = by_name(run)["volumes-gone"]
    assert wait.inputs["wait"]["claim_namespaces"] == ["dynamo-system", "monitoring"]
    assert wait.inputs["kubeconfig"] == "[secret]"
    # created after the nodes and the EBS CSI driver: deleted before them
    assert {"gptoss-node-addons-aws-ebs-csi-driver", "gptoss-nodes-system"} <= waits["volumes-gone"]
    # the releases whose StatefulSets claim volumes, and their namespaces (whose deletion deletes the
    # claims), are created after it: deleted before it
    for after in (
        "dynamo-platform-release",
        "observability-release",
        "dynamo-platform-namespace",
        "observability-namespace",
    ):
        assert "volumes-gone" in waits[after], after
