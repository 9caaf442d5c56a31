"""The model cache in the real program: protected RWX storage, the pinned download Job, workers that
wait for its marker, and the file system reachable from the nodes."""

from __future__ import annotations

import json

from gpt_oss_infra.core.dynamo_graph import ModelVolume, components_by_name
from gpt_oss_infra.core.render.model_cache import completion_marker
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.dependencies import transitive_waits
from tests.support import example_entries, registered, run_entries, stack_entries


def test_efs_storage_class_and_rwx_pvc_on_the_stacks_file_system(dev_run):
    storage_class = registered(dev_run, "model-cache-storage-class").inputs
    assert storage_class["provisioner"] == "efs.csi.aws.com"
    assert storage_class["parameters"]["fileSystemId"] == "gptoss-model-storage-efs-id"  # the EFS created here
    assert storage_class["parameters"]["provisioningMode"] == "efs-ap"
    # The access point outlives the claim, and goes with the file system (or stays with it, keepOnDestroy):
    # a policy keepOnDestroy could not change later (Kubernetes refuses updates of it).
    assert storage_class["reclaimPolicy"] == "Retain"
    # Kubernetes refuses updates of these and pulumi-kubernetes would try one: a change replaces the class
    # (a ModelCache block of 0.2.0 moving to Delete), the old one first, since the name stays.
    assert registered(dev_run, "model-cache-storage-class").options | {"dependsOn": None} == {
        "dependsOn": None,
        "replaceOnChanges": ["reclaimPolicy", "volumeBindingMode"],
        "deleteBeforeReplace": True,
    }
    pvc = registered(dev_run, "model-cache-pvc")
    assert pvc.inputs["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "400Gi"}},
        "storageClassName": "gpt-oss-efs",
    }
    assert pvc.options == {"dependsOn": pvc.options["dependsOn"]}  # neither protected nor retained
    efs = registered(dev_run, "gptoss-model-storage-efs")
    # deleted with the stack: modelCache.keepOnDestroy is false (tests/tools/test_destroy_simulation.py)
    assert efs.inputs["encrypted"] is True and "protect" not in efs.options and "retainOnDelete" not in efs.options
    mount_targets = [r for r in dev_run.resources if r.type == "aws:efs/mountTarget:MountTarget"]
    assert len(mount_targets) == 3  # one per private subnet
    assert registered(dev_run, "model-cache-hf-token").inputs["stringData"] == {"HF_TOKEN": "[secret]"}


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
    assert env["HF_TOKEN_PATH"] == "/var/run/secrets/huggingface/token"
    affinity = spec["template"]["spec"]["affinity"]["nodeAffinity"]
    preferred = affinity["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]
    assert preferred["matchExpressions"][0]["values"] == ["system"]


def test_workers_wait_for_the_marker_the_job_writes(dev_run, dev_raw, catalog):
    worker = components_by_name(registered(dev_run, "gpt-oss-graph").inputs)["TrtllmWorker"]
    (init,) = worker.pod["initContainers"]
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    marker = completion_marker(stack.config.release)
    job_env = registered(dev_run, "model-cache-download").inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "MARKER", "value": marker} in job_env
    assert init["env"] == [{"name": "MARKERS", "value": marker}]
    assert init["volumeMounts"] == [{"name": "model-cache-marker", "mountPath": "/opt/models", "readOnly": True}]
    assert {
        "name": "model-cache-marker",
        "persistentVolumeClaim": {"claimName": "model-cache", "readOnly": True},
    } in worker.pod["volumes"]
    assert worker.volume == ModelVolume("model-cache", "/opt/models")
    assert worker.pod["imagePullSecrets"] == [{"name": "ngc-pull"}]


def test_hf_token_reaches_the_job_only_through_the_secret():
    sentinel = "hf_SENTINEL_model_cache_0123456789"
    run = run_entries(stack_entries("dev") | {"gpt-oss-infra:hfToken": sentinel})
    assert run.error is None
    job = next(r for r in run.resources if r.name == "model-cache-download")
    pod = job.inputs["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    # A file of the Secret, not an environment variable: huggingface_hub reads HF_TOKEN_PATH.
    assert "envFrom" not in container
    assert {"name": "HF_TOKEN_PATH", "value": "/var/run/secrets/huggingface/token"} in container["env"]
    mount = {"name": "hf-token", "mountPath": "/var/run/secrets/huggingface", "readOnly": True}
    assert mount in container["volumeMounts"]
    secret = {"secretName": "hf-token", "items": [{"key": "HF_TOKEN", "path": "token"}]}
    assert {"name": "hf-token", "secret": secret} in pod["volumes"]
    assert sentinel not in json.dumps([r.as_json() for r in run.resources])
    assert sentinel not in json.dumps(run.outputs)
    assert sentinel not in "\n".join(run.log)


def test_fsx_lustre_is_reachable_from_the_nodes_and_version_2_15():
    run = run_entries(example_entries("gb200"), stack="gb200")
    assert run.error is None, run.error
    resources = {r.name: r for r in run.resources}
    assert resources["gptoss-model-storage-fsx"].inputs["fileSystemTypeVersion"] == "2.15"
    # No automatic (billed) backups of a re-downloadable checkpoint; AWS's default is unclear.
    assert resources["gptoss-model-storage-fsx"].inputs["automaticBackupRetentionDays"] == 0
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
