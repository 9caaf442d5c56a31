"""core/stack.py: what a stack gets beyond its deployments (the block StorageClass of a created cluster)."""

from __future__ import annotations

from gpt_oss_infra.core.stack import build_stack
from tests.support import refused


def test_created_cluster_gets_its_own_default_gp3_class(dev_raw, catalog):
    dev_raw["platform"] = {"nats": True}  # off by default from 1.4; its JetStream volume names the class
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    storage_class = stack.block_storage_class
    assert storage_class["metadata"]["name"] == "gpt-oss-gp3"
    assert storage_class["provisioner"] == "ebs.csi.aws.com"
    assert storage_class["parameters"]["type"] == "gp3" and storage_class["parameters"]["encrypted"] == "true"
    assert storage_class["volumeBindingMode"] == "WaitForFirstConsumer"
    assert storage_class["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    nats_pvc = stack.platform.values["nats"]["config"]["jetstream"]["fileStore"]["pvc"]
    assert nats_pvc == {"storageClassName": "gpt-oss-gp3"}
    del dev_raw["platform"]
    dev_raw["cluster"]["blockStorageClassName"] = "gp2"  # an existing cluster's key
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:cluster.blockStorageClassName"
    assert problem.message.startswith("unknown key; allowed keys here: adminRoleArns, dcgmExporter,")
