"""core/checks/storage.py: every PersistentVolumeClaim (ours and the Dynamo chart's) gets a
StorageClass the stack provides; a claim that would stay Pending refuses the stack."""

from __future__ import annotations

import copy
import dataclasses

from gpt_oss_infra.core.checks.storage import DEFAULT_CLASS_ANNOTATION, VolumeClaim, chart_claims, storage_problems
from gpt_oss_infra.core.dynamo import ChartVolumeClaim
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, refused


def test_the_dev_stack_claims_name_the_classes_it_creates(dev_raw, catalog):
    dev_raw["platform"] = {"nats": True}  # off by default from 1.4: no chart claim at all
    dev_stack = build_stack(dev_raw, catalog, with_hf_token=False)
    platform = dev_stack.platform
    claims = chart_claims(platform.dynamo, platform.values, "key")
    assert [(claim.owner, claim.storage_class) for claim in claims] == [
        (
            "the dynamo-platform chart's NATS JetStream file store claim "
            "(nats.config.jetstream.fileStore.pvc.storageClassName)",
            "gpt-oss-gp3",
        )
    ]  # the NATS resolver and etcd are off with our values
    assert dev_stack.model_cache.pvc["spec"]["storageClassName"] == "gpt-oss-efs"
    assert {obj["metadata"]["name"] for obj in dev_stack.objects() if obj["kind"] == "StorageClass"} == {
        "gpt-oss-gp3",
        "gpt-oss-efs",
    }


def test_a_claim_on_the_default_class_needs_a_default_class():
    claim = VolumeClaim("the etcd claim", None, "gpt-oss-infra:cluster.blockStorageClassName")
    (problem,) = storage_problems([claim], {"gpt-oss-efs": "created by this stack"})
    assert problem.key == "gpt-oss-infra:cluster.blockStorageClassName"
    assert problem.message == (
        "the etcd claim asks for the cluster's default StorageClass, and this stack marks none default "
        "(EKS marks none since 1.30); it provides: gpt-oss-efs"
    )
    provided = {"gpt-oss-gp3": "created by this stack", DEFAULT_CLASS_ANNOTATION: "gpt-oss-gp3"}
    assert storage_problems([claim], provided) == []


def test_a_claim_on_a_class_nobody_provides_is_refused():
    claim = VolumeClaim("PersistentVolumeClaim gpt-oss/model-cache", "gp2", "gpt-oss-infra:modelCache.storageClassName")
    (problem,) = storage_problems([claim], {"gpt-oss-gp3": "created by this stack"})
    assert problem.message == (
        "PersistentVolumeClaim gpt-oss/model-cache names StorageClass 'gp2', which this stack does not provide; "
        "it provides: gpt-oss-gp3"
    )


def test_a_chart_claim_left_on_the_default_class_refuses_an_existing_cluster_stack(catalog):
    """As if the chart also made etcd's claim, whose class our values leave empty: an existing
    cluster stack marks no class default, so the claim would stay Pending."""
    raw = namespace_config(copy.deepcopy(example_entries("existing-cluster")))
    dynamo = catalog.dynamo_versions[raw["release"]["dynamo"]]
    etcd = ChartVolumeClaim(
        what="etcd data", when=["dynamo-operator.enabled"], storageClassName="etcd.persistence.storageClass"
    )
    spec = dynamo.spec.model_copy(update={"volume_claims": [*dynamo.spec.volume_claims, etcd]})
    with_etcd = dataclasses.replace(catalog, dynamo_versions={dynamo.version: dataclasses.replace(dynamo, spec=spec)})
    (problem,) = refused(raw, with_etcd).problems
    assert problem.key == "gpt-oss-infra:cluster.blockStorageClassName"
    assert problem.message.startswith(
        "the dynamo-platform chart's etcd data claim (etcd.persistence.storageClass) asks"
    )
    # A created cluster marks its gp3 class default: the same claim gets a volume there.
    build_stack(namespace_config(copy.deepcopy(example_entries("dev"))), with_etcd, with_hf_token=False)
