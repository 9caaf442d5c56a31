"""The model cache's EFS or FSx for Lustre file system, reachable from the nodes (core/render/aws/resources.py,
registered by components/targets/eks.py's model_storage)."""

from __future__ import annotations

import pulumi
import pytest

from gpt_oss_infra.components.targets.eks import model_storage
from gpt_oss_infra.core.render.aws import resources
from gpt_oss_infra.core.render.aws.resources import LUSTRE_VERSION, ClusterNetwork
from gpt_oss_infra.core.resolve.sizing import fsx_capacity_gib

SUBNETS = ["subnet-pinned", "subnet-a", "subnet-c"]
MODEL_STORAGE = "gpt-oss-infra:aws:ModelStorage"


def build_storage(engine, config):
    made = {}

    def program():
        cluster = ClusterNetwork("gptoss-test", "vpc-1", "sg-nodes")
        made["storage"] = model_storage(
            "storage", resources.model_storage("storage", config, "gptoss-test", cluster, SUBNETS), {}
        )
        file_system = made["storage"][0]
        names = [file_system.dns_name, file_system.mount_name] if file_system.dns_name else []
        return {"id": file_system.id, "names": pulumi.Output.all(*names)}

    values = engine.run(program)
    assert {engine.parent_type(name) for name in engine.children("storage")} == {MODEL_STORAGE}
    return made["storage"], values


def test_efs_admits_nfs_from_the_nodes_through_a_mount_target_per_subnet(engine, example_stack):
    (file_system, ready), values = build_storage(engine, example_stack("dev").config.model_cache)
    assert values == {"id": "storage-efs-id", "names": []}
    assert engine.inputs("storage-clients")["ingress"] == [
        {"protocol": "tcp", "fromPort": 2049, "toPort": 2049, "securityGroups": ["sg-nodes"], "self": False}
    ]
    assert engine.inputs("storage-clients")["vpcId"] == "vpc-1"
    efs = engine.inputs("storage-efs")
    assert (efs["encrypted"], efs["throughputMode"]) == (True, "elastic")
    assert efs["tags"] == {"Name": "gptoss-test-model-cache"}
    opts = engine.built["storage-efs"].opts
    assert (opts.protect, opts.retain_on_delete) == (None, None)  # deleted with the stack (keepOnDestroy: false)
    targets = [f"storage-efs-{index}" for index in range(3)]
    assert engine.names_of("aws:efs/mountTarget:MountTarget") == targets
    for target, subnet in zip(targets, SUBNETS, strict=True):
        assert engine.inputs(target) == {
            "fileSystemId": "storage-efs-id",
            "subnetId": subnet,
            "securityGroups": ["storage-clients-id"],
        }
    assert ready == [engine.built[target].resource for target in targets]
    assert file_system.dns_name is file_system.mount_name is None


def test_fsx_lives_in_the_pinned_subnet_and_both_sides_admit_lustre(engine, example_stack):
    config = example_stack("gb200").config.model_cache
    (_, ready), values = build_storage(engine, config)
    assert values == {"id": "storage-fsx-id", "names": ["storage-fsx.fsx.example.com", "storage-fsx-mount"]}
    assert engine.inputs("storage-clients")["ingress"] == [
        {"protocol": "tcp", "fromPort": low, "toPort": high, "securityGroups": ["sg-nodes"], "self": True}
        for low, high in [(988, 988), (1018, 1023)]
    ]
    fsx = engine.inputs("storage-fsx")
    assert {key: fsx[key] for key in ("deploymentType", "subnetIds", "securityGroupIds", "fileSystemTypeVersion")} == {
        "deploymentType": "PERSISTENT_2",
        "subnetIds": "subnet-pinned",
        "securityGroupIds": ["storage-clients-id"],
        "fileSystemTypeVersion": LUSTRE_VERSION,
    }
    assert fsx["storageCapacity"] == fsx_capacity_gib(config.size)
    assert fsx["perUnitStorageThroughput"] == config.fsx_throughput_per_tib
    opts = engine.built["storage-fsx"].opts
    assert (opts.protect, opts.retain_on_delete) == (None, None)  # never retained: its interfaces hold the VPC
    assert (fsx["skipFinalBackup"], "finalBackupTags" in fsx) == (True, False)
    rules = ["storage-nodes-lustre-988", "storage-nodes-lustre-1018"]
    assert engine.names_of("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule") == rules
    for rule, (low, high) in zip(rules, [(988, 988), (1018, 1023)], strict=True):
        inputs = engine.inputs(rule)
        assert (inputs["securityGroupId"], inputs["referencedSecurityGroupId"]) == ("sg-nodes", "storage-clients-id")
        assert (inputs["ipProtocol"], inputs["fromPort"], inputs["toPort"]) == ("tcp", low, high)
    assert ready == [engine.built[name].resource for name in ["storage-fsx", *rules]]


@pytest.mark.parametrize("storage", ["efs", "fsx-lustre"])
def test_keep_on_destroy_retains_efs_and_backs_up_fsx_before_deleting_it(engine, example_stack, storage):
    config = example_stack("gb200" if storage == "fsx-lustre" else "dev").config.model_cache
    build_storage(engine, config.model_copy(update={"keep_on_destroy": True}))
    if storage == "efs":
        assert engine.built["storage-efs"].opts.retain_on_delete is True
        return
    fsx = engine.inputs("storage-fsx")
    assert (fsx["skipFinalBackup"], fsx["finalBackupTags"]) == (False, {"Name": "gptoss-test-model-cache-final"})
    assert engine.built["storage-fsx"].opts.retain_on_delete is None
