"""components/model_cache.py: the cache storage on its file system, the HF token Secret, the download, as
GptOssStack has the block make them (ModelCache.of_stack)."""

from __future__ import annotations

import pulumi
import pytest

from gpt_oss_infra.components.model_cache import DecidedModelCache, ModelCache
from gpt_oss_infra.components.targets.target import FileSystemRef
from gpt_oss_infra.core.render import manifests, model_cache
from tests.components.conftest import (
    SYSTEM_READY,
    assert_on_the_cluster,
    on_stand_in_cluster,
    string_data_is_secret,
    unwrap_secret,
)

HF_TOKEN = "hf_model_cache_test_token"
MODEL_CACHE = "gpt-oss-infra:index:ModelCache"
FILE_SYSTEM_ID, DNS_NAME, MOUNT_NAME = "fs-0123456789abcdef0", "fs-0123.fsx.example.com", "abcdefgh"


def build_cache(engine, objects, file_system: FileSystemRef | None, hf_token: str | None):
    def program():
        token = pulumi.Output.secret(hf_token) if hf_token else None
        decided = DecidedModelCache(objects, file_system, token, "14400s", guards=None)
        cache = ModelCache.of_stack("model-cache", decided, opts=on_stand_in_cluster())
        return {
            "claim": cache.claim_name,
            "download": cache.download_job,
            "secret": string_data_is_secret(engine, "model-cache-hf-token"),
        }

    return engine.run(program)


def the_file_system(*fsx: str) -> FileSystemRef:
    """The target's file system: outputs of resources not created yet (FSx: with its DNS and mount names)."""
    return FileSystemRef(*(pulumi.Output.from_input(value) for value in (FILE_SYSTEM_ID, *fsx)))


def assert_deleted_by_destroy(engine, name: str) -> None:
    """Neither protected (a protected resource stops `pulumi destroy`) nor left behind: the weights are
    kept, when asked, with their file system (modelCache.keepOnDestroy), never by the claim."""
    opts = engine.built[name].opts
    assert (opts.protect, opts.retain_on_delete) == (None, None)


def test_efs_the_storage_class_provisions_on_the_targets_file_system(engine, example_stack):
    objects = example_stack("dev").model_cache
    values = build_cache(engine, objects, the_file_system(), HF_TOKEN)
    assert assert_on_the_cluster(engine, "model-cache", MODEL_CACHE) == [
        "model-cache-storage-class",
        "model-cache-hf-token",
        "model-cache-pvc",
        "model-cache-download-script",
        "model-cache-download",
    ]
    storage_class = engine.inputs("model-cache-storage-class")
    assert storage_class["provisioner"] == "efs.csi.aws.com"
    assert storage_class["parameters"] == objects.storage_class["parameters"] | {"fileSystemId": FILE_SYSTEM_ID}
    assert_deleted_by_destroy(engine, "model-cache-pvc")
    assert engine.waits_for("model-cache-pvc") == [SYSTEM_READY, "model-cache-storage-class"]
    # Read from the claim and the Job, so whatever uses them waits for the cache.
    assert values["claim"] == engine.inputs("model-cache-pvc")["metadata"]["name"]
    assert values["download"] == engine.inputs("model-cache-download")["metadata"]["name"]


def test_fsx_the_static_volume_names_the_file_system(engine, example_stack):
    objects = example_stack("gb200").model_cache
    build_cache(engine, objects, the_file_system(DNS_NAME, MOUNT_NAME), HF_TOKEN)
    assert engine.children("model-cache")[:2] == ["model-cache-storage-class", "model-cache-pv"]
    assert engine.inputs("model-cache-storage-class")["provisioner"] == "fsx.csi.aws.com"
    assert "parameters" not in engine.inputs("model-cache-storage-class")
    volume = engine.inputs("model-cache-pv")
    assert volume["metadata"] == objects.persistent_volume["metadata"]
    assert volume["spec"]["csi"] == {
        "driver": "fsx.csi.aws.com",
        "volumeHandle": FILE_SYSTEM_ID,
        "volumeAttributes": {"dnsname": DNS_NAME, "mountname": MOUNT_NAME},
    }
    assert volume["spec"]["claimRef"] == objects.persistent_volume["spec"]["claimRef"]
    assert_deleted_by_destroy(engine, "model-cache-pv")
    assert engine.waits_for("model-cache-pv") == [SYSTEM_READY, "model-cache-storage-class"]
    assert engine.waits_for("model-cache-pvc") == [SYSTEM_READY, "model-cache-storage-class", "model-cache-pv"]
    # No placeholder of the core's templates reaches the cluster.
    placeholders = (model_cache.FILE_SYSTEM_ID, model_cache.FILE_SYSTEM_DNS_NAME, model_cache.FILE_SYSTEM_MOUNT_NAME)
    assert not [text for text in engine.plain_strings() if any(p in text for p in placeholders)]


def test_existing_storage_is_only_a_claim_on_the_users_class(engine, example_stack):
    objects = example_stack("existing-cluster").model_cache
    build_cache(engine, objects, None, HF_TOKEN)
    assert engine.children("model-cache") == [
        "model-cache-hf-token",
        "model-cache-pvc",
        "model-cache-download-script",
        "model-cache-download",
    ]
    assert engine.inputs("model-cache-pvc")["spec"] == objects.pvc["spec"]
    assert_deleted_by_destroy(engine, "model-cache-pvc")
    assert engine.waits_for("model-cache-pvc") == [SYSTEM_READY]


def test_the_hf_token_reaches_the_cluster_only_as_a_secret(engine, example_stack):
    objects = example_stack("dev").model_cache
    values = build_cache(engine, objects, the_file_system(), HF_TOKEN)
    secret = engine.inputs("model-cache-hf-token")
    assert secret["metadata"] == objects.hf_token_secret["metadata"]
    assert unwrap_secret(secret["stringData"]) == {manifests.HF_TOKEN_KEY: HF_TOKEN}
    assert values["secret"] is True
    assert not [text for text in engine.plain_strings() if HF_TOKEN in text]


@pytest.mark.parametrize("hf_token", [HF_TOKEN, None], ids=["with an HF token", "without"])
def test_the_download_waits_for_the_claim_the_token_and_its_script(engine, example_stack, hf_token):
    objects = example_stack("dev", with_secrets=hf_token is not None).model_cache
    build_cache(engine, objects, the_file_system(), hf_token)
    assert engine.registered("model-cache-download").typ == "kubernetes:batch/v1:Job"
    assert engine.inputs("model-cache-download")["metadata"]["name"] == objects.download.job["metadata"]["name"]
    expected = [SYSTEM_READY, "model-cache-pvc", "model-cache-hf-token", "model-cache-download-script"]
    if hf_token is None:
        expected.remove("model-cache-hf-token")
        assert "model-cache-hf-token" not in engine.built
    assert engine.waits_for("model-cache-download") == expected
    # `pulumi up` waits for the download as long as the Job may run.
    timeouts = engine.built["model-cache-download"].opts.custom_timeouts
    assert (timeouts.create, timeouts.update) == ("14400s", "14400s")
