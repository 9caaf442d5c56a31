"""The Dynamo platform in the real program: the pinned chart and the release's CRDs, applied first."""

from __future__ import annotations

from gpt_oss_infra.tools.dependencies import transitive_waits
from tests.support import registered


def test_platform_release_is_pinned_with_explicit_values(dev_run):
    """dev runs 1.6.1: its operator applies the CRDs, and its chart installs no NATS by default."""
    release = registered(dev_run, "dynamo-platform-release").inputs
    # The package URL NVIDIA's guide installs from: the OCI path answers 404 (ai-dynamo/dynamo #12372)
    assert release["chart"] == "https://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform-1.6.1.tgz"
    assert "repositoryOpts" not in release
    assert release["version"] == "1.6.1"
    assert release["namespace"] == "dynamo-system"
    assert release["skipCrds"] is True  # never the chart's crds/ folder
    values = release["values"]
    assert values["global"]["etcd"] == {"install": False}
    assert values["global"]["nats"] == {"install": False}  # TCP request plane, ZMQ event plane
    assert values["global"]["grove"] == {"install": False, "enabled": False}
    assert values["global"]["kai-scheduler"] == {"install": False, "enabled": False}
    operator = values["dynamo-operator"]
    assert operator["discoveryBackend"] == "kubernetes"
    assert operator["upgradeCRD"] is True  # its crd-apply init container: the one owner
    assert "nats" not in operator and set(values["nats"]) == {"podTemplate"}
    assert operator["imagePullSecrets"] == [{"name": "ngc-pull"}]
    assert registered(dev_run, "dynamo-platform-ngc-pull").inputs["stringData"] == {".dockerconfigjson": "[secret]"}
    assert not [r for r in dev_run.resources if r.type.endswith(":CustomResourceDefinition")]


def test_on_1_2_the_nats_switch_and_its_volume(staging_run):
    values = registered(staging_run, "dynamo-platform-release").inputs["values"]
    assert values["global"]["nats"] == {"install": True}  # 1.2's switch; nats.enabled fails its install
    assert "enabled" not in values["nats"] and values["dynamo-operator"]["upgradeCRD"] is False
    assert values["nats"]["config"]["jetstream"]["fileStore"]["pvc"] == {"storageClassName": "gpt-oss-gp3"}


def test_on_1_2_the_program_applies_the_release_crds_before_the_chart_and_the_graphs(staging_run, catalog):
    crds = [r for r in staging_run.resources if r.type == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"]
    expected = {crd["metadata"]["name"] for crd in catalog.dynamo_versions["1.2.1"].crds()}
    assert {crd.inputs["metadata"]["name"] for crd in crds} == expected
    assert "dynamographdeployments.nvidia.com" in expected and len(expected) == 7
    dgd = next(crd for crd in crds if crd.inputs["metadata"]["name"] == "dynamographdeployments.nvidia.com")
    assert [v["name"] for v in dgd.inputs["spec"]["versions"]] == ["v1alpha1", "v1beta1"]
    for crd in crds:
        # Applied with force over the fields an earlier install's crd-apply set (once adopted: cluster.adopt) ...
        assert crd.inputs["metadata"]["annotations"]["pulumi.com/patchForce"] == "true"
        # ... never deleted with the program (every DynamoGraphDeployment would go with it) ...
        assert crd.options["retainOnDelete"] is True
        # ... and their conversion webhook is the operator's.
        assert crd.options["ignoreChanges"] == ["spec.conversion"]
    # Through a provider of their own, the one that upserts: a rollback from 1.3+ finds the operator's
    # CRDs in the cluster (the upgrade forgot them, retainOnDelete) and takes them over. Nothing else goes
    # through it; the stack's provider never upserts.
    providers = {r.name: r for r in staging_run.resources if r.type == "pulumi:providers:kubernetes"}
    assert providers["gptoss-eks-kubernetes-crds"].inputs["upsertExistingObjects"] == "true"
    assert "upsertExistingObjects" not in providers["gptoss-eks-kubernetes"].inputs
    through_it = {r.name for r in staging_run.resources if "gptoss-eks-kubernetes-crds" in r.waits_for}
    assert through_it == {crd.name for crd in crds}
    # The chart waits for every CRD; each graph waits for its own (tests/program/test_readiness.py).
    assert {crd.name for crd in crds} <= transitive_waits(staging_run.resources)["dynamo-platform-release"]
