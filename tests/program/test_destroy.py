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
    # and after the NAT gateway, the private subnets' routes and the NAT's own subnet's route to the internet
    # gateway, through which the CSI driver it waits for reaches EC2: without the nodes' wait for them, nothing
    # depended on them and Pulumi deleted them first
    egress = {"gptoss-network-nat", "gptoss-network-public-0-routes"}
    egress |= {f"gptoss-network-private-{zone}-routes" for zone in range(3)}
    for waiter in ("gptoss-nodes-system", "gptoss-nodes-gpu", "dynamo-platform-teardown-volumes-gone"):
        assert egress <= waits[waiter], waiter
    assert "gptoss-network-public-1-routes" not in waits["gptoss-nodes-system"]  # no egress goes through it
    # the releases whose StatefulSets claim volumes, and their namespaces (whose deletion deletes the
    # claims), are created after it: deleted before it
    for after in (
        "dynamo-platform-release",
        "observability-release",
        "dynamo-platform-namespace",
        "observability-namespace",
    ):
        assert "dynamo-platform-teardown-volumes-gone" in waits[after], after


def test_on_an_existing_cluster_the_gpu_softwares_namespaces_are_the_stacks_and_go_after_their_releases():
    """`helm uninstall` never deletes a namespace Helm's createNamespace made; the stack's own Namespace is
    deleted by `destroy`, after the release in it (created before it)."""
    entries = example_entries("existing-cluster")
    entries["gpt-oss-infra:cluster"] = entries["gpt-oss-infra:cluster"] | {"gpuSoftware": "device-plugin"}
    run = run_entries(entries, stack="existing-cluster")
    assert run.error is None, run.error
    resources = by_name(run)
    namespace = resources["gpu-software-nvidia-device-plugin-namespace"]
    assert namespace.type == "kubernetes:core/v1:Namespace"
    release = resources["gpu-software-nvidia-device-plugin"]
    assert release.inputs["namespace"] == "nvidia-device-plugin"
    assert release.inputs["createNamespace"] is False
    assert namespace.name in transitive_waits(run.resources)[release.name]


def test_on_a_created_cluster_helm_makes_the_gpu_softwares_namespace_as_before():
    """The live stacks' namespaces, which Helm made, stay Helm's: a Namespace of the stack's would fail to
    create over them (pulumi-kubernetes 4.29 stopped upserting)."""
    run = run_entries(example_entries("dev"), stack="dev")
    resources = by_name(run)
    assert resources["gpu-software-nvidia-device-plugin"].inputs["createNamespace"] is True
    assert "gpu-software-nvidia-device-plugin-namespace" not in resources
