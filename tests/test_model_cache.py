"""Dynamo platform and model cache: pinned install, protected RWX cache, pinned download Job."""

from __future__ import annotations

import copy
import json

import kubernetes_validate
import pytest

from core.render.model_cache import completion_marker
from core.stack import build_stack
from tests.conftest import run_entries, stack_entries
from tests.test_infra import example_entries
from tools import plan
from tools.dependencies import transitive_waits


def registered(run, name):
    return next(r for r in run.resources if r.name == name)


@pytest.fixture(scope="module")
def dev_run():
    run = run_entries(stack_entries("dev") | {"gpt-oss-infra:hfToken": "hf_x", "gpt-oss-infra:ngcApiKey": "nvapi-x"})
    assert run.error is None, run.error
    return run


def test_platform_release_is_pinned_with_explicit_values(dev_run):
    release = registered(dev_run, "dynamo-platform-release").inputs
    assert release["chart"] == "oci://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform"
    assert release["version"] == "1.2.1"
    assert release["namespace"] == "dynamo-system"
    assert release["skipCrds"] is True  # the program owns the CRDs
    values = release["values"]
    assert values["global"]["etcd"] == {"install": False}
    assert values["global"]["nats"] == {"install": True}  # 1.2's switch; nats.enabled fails its install
    assert values["global"]["grove"] == {"install": False, "enabled": False}
    assert values["global"]["kai-scheduler"] == {"install": False, "enabled": False}
    operator = values["dynamo-operator"]
    assert operator["discoveryBackend"] == "kubernetes"
    assert operator["upgradeCRD"] is False  # no crd-apply init container: one owner
    assert "nats" not in operator and "enabled" not in values["nats"]
    assert values["nats"]["config"]["jetstream"]["fileStore"]["pvc"] == {"storageClassName": "gpt-oss-gp3"}
    assert operator["imagePullSecrets"] == [{"name": "ngc-pull"}]
    assert registered(dev_run, "dynamo-platform-ngc-pull").inputs["stringData"] == "[secret]"


def test_the_program_applies_the_release_crds_before_the_chart_and_the_graphs(dev_run, catalog):
    crds = [r for r in dev_run.resources if r.type == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"]
    expected = {crd["metadata"]["name"] for crd in catalog.dynamo_versions["1.2.1"].crds()}
    assert {crd.inputs["metadata"]["name"] for crd in crds} == expected
    assert "dynamographdeployments.nvidia.com" in expected and len(expected) == 7
    dgd = next(crd for crd in crds if crd.inputs["metadata"]["name"] == "dynamographdeployments.nvidia.com")
    assert [v["name"] for v in dgd.inputs["spec"]["versions"]] == ["v1alpha1", "v1beta1"]
    for crd in crds:
        # Taken over from an earlier Dynamo install (its crd-apply applied them with force) ...
        assert crd.inputs["metadata"]["annotations"]["pulumi.com/patchForce"] == "true"
        # ... never deleted with the program (every DynamoGraphDeployment would go with it) ...
        assert crd.options["retainOnDelete"] is True
        # ... and their conversion webhook is the operator's.
        assert crd.options["ignoreChanges"] == ["spec.conversion"]
    provider = next(r for r in dev_run.resources if r.type == "pulumi:providers:kubernetes")
    assert provider.inputs["upsertExistingObjects"] == "true"  # existing objects are adopted, not refused
    waits = transitive_waits(dev_run.resources)
    for name in ("dynamo-platform-release", "gpt-oss-graph"):
        assert {crd.name for crd in crds} <= waits[name], name


def test_every_graph_waits_for_the_platform_release_and_the_download(dev_run):
    graph = registered(dev_run, "gpt-oss-graph")
    assert {"dynamo-platform-release", "model-cache-download"} <= set(graph.options["dependsOn"])


def test_efs_storage_class_and_protected_rwx_pvc(dev_run):
    storage_class = registered(dev_run, "model-cache-storage-class").inputs
    assert storage_class["provisioner"] == "efs.csi.aws.com"
    assert storage_class["parameters"]["fileSystemId"] == "gptoss-model-storage-efs-id"  # the EFS created here
    assert storage_class["parameters"]["provisioningMode"] == "efs-ap"
    assert storage_class["reclaimPolicy"] == "Retain"
    pvc = registered(dev_run, "model-cache-pvc")
    assert pvc.inputs["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "400Gi"}},
        "storageClassName": "gpt-oss-efs",
    }
    assert pvc.options["protect"] is True and pvc.options["retainOnDelete"] is True
    efs = registered(dev_run, "gptoss-model-storage-efs")
    assert efs.inputs["encrypted"] is True and efs.options["protect"] is True
    mount_targets = [r for r in dev_run.resources if r.type == "aws:efs/mountTarget:MountTarget"]
    assert len(mount_targets) == 3  # one per private subnet
    assert registered(dev_run, "model-cache-hf-token").inputs["stringData"] == "[secret]"


def test_download_job_is_pinned_to_the_revision(dev_run):
    job = registered(dev_run, "model-cache-download").inputs
    assert job["metadata"]["name"] == "model-download-b5c939de8f75"
    assert job["metadata"]["annotations"]["gpt-oss-infra/model-revision"] == "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
    spec = job["spec"]
    assert spec["backoffLimit"] == 4
    assert "ttlSecondsAfterFinished" not in spec  # refresh-safe: the Job stays while Pulumi tracks it
    (container,) = spec["template"]["spec"]["containers"]
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["MODEL"] == "openai/gpt-oss-120b"
    assert env["MODEL_REVISION"] == "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
    assert env["EXCLUDES"] == "original/*,metal/*"
    assert env["HF_HOME"] == "/opt/models"
    assert env["HF_XET_HIGH_PERFORMANCE"] == "1"
    assert container["image"] == "python:3.12.11-slim-bookworm"
    assert container["resources"]["requests"] == {"cpu": "2", "memory": "8Gi"}
    assert container["envFrom"] == [{"secretRef": {"name": "hf-token"}}]
    affinity = spec["template"]["spec"]["affinity"]["nodeAffinity"]
    preferred = affinity["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]
    assert preferred["matchExpressions"][0]["values"] == ["system"]


def test_workers_wait_for_the_marker_the_job_writes(dev_run, dev_raw, catalog):
    graph = registered(dev_run, "gpt-oss-graph").inputs
    worker = graph["spec"]["services"]["TrtllmWorker"]
    (init,) = worker["extraPodSpec"]["initContainers"]
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    marker = completion_marker(stack.config.release)
    job_env = registered(dev_run, "model-cache-download").inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "MARKER", "value": marker} in job_env
    assert init["env"] == [{"name": "MARKER", "value": marker}]
    assert init["volumeMounts"] == [{"name": "model-cache-marker", "mountPath": "/opt/models", "readOnly": True}]
    assert {
        "name": "model-cache-marker",
        "persistentVolumeClaim": {"claimName": "model-cache", "readOnly": True},
    } in (worker["extraPodSpec"]["volumes"])
    assert graph["spec"]["pvcs"] == [{"name": "model-cache", "create": False}]
    assert worker["extraPodSpec"]["imagePullSecrets"] == [{"name": "ngc-pull"}]


def _plan_resources(entries, stack="variant"):
    run = run_entries(entries, stack=stack)
    assert run.error is None, run.error
    return {r.name: r for r in run.resources}


def test_changing_only_the_revision_changes_the_job_not_the_pvc():
    entries = stack_entries("dev")
    before = _plan_resources(entries)
    changed = copy.deepcopy(entries)
    changed["gpt-oss-infra:release"]["modelRevision"] = "0" * 40
    after = _plan_resources(changed)
    assert after["model-cache-download"].inputs != before["model-cache-download"].inputs
    assert after["model-cache-download"].inputs["metadata"]["name"] == "model-download-000000000000"
    for unchanged in (
        "model-cache-pvc",
        "model-cache-storage-class",
        "gptoss-model-storage-efs",
        "dynamo-platform-release",
    ):
        assert after[unchanged].inputs == before[unchanged].inputs, unchanged


def test_changing_a_deployment_never_touches_the_cache():
    entries = stack_entries("dev")
    before = _plan_resources(entries)
    changed = copy.deepcopy(entries)
    changed["gpt-oss-infra:deployments"]["gpt-oss"] |= {
        "gpus": 4,
        "overrides": {"cuda_graph_config": {"max_batch_size": 16}},
    }
    after = _plan_resources(changed)
    assert after["gpt-oss-graph"].inputs != before["gpt-oss-graph"].inputs
    for unchanged in ("model-cache-pvc", "model-cache-download", "model-cache-storage-class"):
        assert after[unchanged].inputs == before[unchanged].inputs, unchanged
        assert after[unchanged].options == before[unchanged].options, unchanged


def test_fsx_lustre_gets_a_static_pv_sized_for_its_throughput():
    resources = _plan_resources(example_entries("gb200"), stack="gb200")
    lustre = resources["gptoss-model-storage-fsx"].inputs
    assert lustre["deploymentType"] == "PERSISTENT_2"
    assert lustre["storageCapacity"] == 1200  # 1200Gi asked: the smallest PERSISTENT_2 size
    assert lustre["perUnitStorageThroughput"] == 250
    volume = resources["model-cache-pv"]
    assert volume.options["protect"] is True
    spec = volume.inputs["spec"]
    assert spec["csi"] == {
        "driver": "fsx.csi.aws.com",
        "volumeHandle": "gptoss-model-storage-fsx-id",
        "volumeAttributes": {
            "dnsname": "gptoss-model-storage-fsx.fsx.us-east-2.amazonaws.com",
            "mountname": "abcdefgh",
        },
    }
    assert spec["claimRef"] == {"namespace": "gpt-oss", "name": "model-cache"}
    assert spec["storageClassName"] == resources["model-cache-pvc"].inputs["spec"]["storageClassName"]


@pytest.mark.parametrize("stack", ["dev", "b200", "gb200", "h100", "h200", "existing-cluster"])
def test_every_kubernetes_object_of_every_stack_passes_strict_validation(stack):
    run = run_entries(example_entries(stack), stack=stack)
    # The vendored CRDs are checked once per Dynamo release (test_validation.py).
    manifests = [manifest for manifest in plan.manifests(run) if manifest["kind"] != "CustomResourceDefinition"]
    assert manifests
    checked = 0
    for manifest in manifests:
        if manifest["kind"] == "DynamoGraphDeployment":
            continue  # checked against the Dynamo CRD schemas (test_validation.py)
        if manifest.get("stringData") == "[secret]":
            manifest = manifest | {"stringData": {}}  # the plan hides the values, not the shape
        assert kubernetes_validate.validate(manifest, "1.33.0", strict=True) == "1.33"
        checked += 1
    assert checked >= 4


def test_hf_token_reaches_the_job_only_through_the_secret():
    sentinel = "hf_SENTINEL_model_cache_0123456789"
    run = run_entries(stack_entries("dev") | {"gpt-oss-infra:hfToken": sentinel})
    assert run.error is None
    job = next(r for r in run.resources if r.name == "model-cache-download")
    assert job.inputs["spec"]["template"]["spec"]["containers"][0]["envFrom"] == [{"secretRef": {"name": "hf-token"}}]
    assert sentinel not in json.dumps([r.as_json() for r in run.resources])
    assert sentinel not in json.dumps(run.outputs)
    assert sentinel not in "\n".join(run.log)


def test_fsx_lustre_is_reachable_from_the_nodes_and_version_2_15():
    run = run_entries(example_entries("gb200"), stack="gb200")
    assert run.error is None, run.error
    resources = {r.name: r for r in run.resources}
    assert resources["gptoss-model-storage-fsx"].inputs["fileSystemTypeVersion"] == "2.15"
    node_group = resources["gptoss-eks-cluster"].name
    rules = [
        r
        for r in run.resources
        if r.type == "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule" and r.parent == "gptoss-model-storage"
    ]
    assert {(r.inputs["fromPort"], r.inputs["toPort"]) for r in rules} == {(988, 988), (1018, 1023)}
    for rule in rules:
        assert rule.inputs["ipProtocol"] == "tcp"
        assert rule.inputs["securityGroupId"] == f"{node_group}-sg-id"  # the cluster SG every node carries
        assert rule.inputs["referencedSecurityGroupId"] == "gptoss-model-storage-clients-id"  # from the file system
    file_system_side = resources["gptoss-model-storage-clients"].inputs["ingress"]
    assert {(i["fromPort"], i["toPort"], i["self"]) for i in file_system_side} == {(988, 988, True), (1018, 1023, True)}
    waits = transitive_waits(run.resources)
    for name in ("model-cache-pv", "model-cache-pvc", "model-cache-download"):
        assert {"gptoss-model-storage-fsx", *(r.name for r in rules)} <= waits[name], name


def test_cache_objects_wait_for_every_efs_mount_target(dev_run):
    waits = transitive_waits(dev_run.resources)
    mount_targets = {r.name for r in dev_run.resources if r.type == "aws:efs/mountTarget:MountTarget"}
    assert len(mount_targets) == 3
    for name in ("model-cache-storage-class", "model-cache-pvc", "model-cache-download"):
        assert mount_targets <= waits[name], name
    # The platform does not wait for the model's file system.
    assert not mount_targets & waits["dynamo-platform-release"]
