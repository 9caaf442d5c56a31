"""core/render/model_cache.py: cache objects, and what changes (and what must not) with the revision."""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest

from gpt_oss_infra.core.render import model_cache
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, run_entries, stack_entries


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
    assert "protect" not in volume.options  # nothing stops `pulumi destroy` (the weights: keepOnDestroy)
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


def test_what_the_cache_jobs_write_outside_the_cache_is_on_their_scratch_volume(dev_raw, catalog):
    """The download and benchmark Jobs' root filesystem is read-only: their scripts install with
    `pip install --user` into PYTHONUSERBASE, which with HOME and /tmp is on an emptyDir."""
    dev_raw["deployments"]["gpt-oss"]["benchmark"] = {"enabled": True}
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    jobs = {"model-download.sh": stack.model_cache.download.job, "benchmark.sh": stack.serving[0].benchmark.job}
    for script, job in jobs.items():
        pod = job["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert pod["automountServiceAccountToken"] is False
        env = {item["name"]: item["value"] for item in container["env"]}
        volumes = {volume["name"]: volume for volume in pod["volumes"]}
        (scratch,) = [mount["name"] for mount in container["volumeMounts"] if mount["mountPath"] == "/tmp"]
        assert volumes[scratch] == {"name": scratch, "emptyDir": {}}
        assert env["HOME"] == "/tmp" and env["PYTHONUSERBASE"].startswith("/tmp/")
        installs = [line for line in catalog.scripts[script].splitlines() if line.startswith("pip install")]
        assert installs and all(" --user " in line for line in installs), script


def test_a_worker_waits_until_any_of_its_markers_exists(tmp_path):
    """The init container's own script, run as the runtime image runs it: a mocker that reads the
    tokenizer only starts on a full snapshot too (a ModelCache block downloads one)."""
    tokenizer_only, full = tmp_path / "m.tokenizer.complete", tmp_path / "m.complete"
    env = {**os.environ, "MARKERS": f"{tokenizer_only} {full}"}
    command = [sys.executable, "-c", model_cache.WAIT_FOR_MARKER]
    with pytest.raises(subprocess.TimeoutExpired):  # neither marker yet: it keeps waiting
        subprocess.run(command, env=env, timeout=1, capture_output=True, check=True)
    full.write_text("snapshot\n")
    subprocess.run(command, env=env, timeout=10, capture_output=True, check=True)


def test_only_a_tokenizer_reader_takes_a_tokenizer_only_snapshot(dev_stack):
    release = dev_stack.config.release
    full = model_cache.completion_marker(release)
    assert model_cache.awaited_markers(release, weights=True) == [full]
    assert model_cache.awaited_markers(release, weights=False) == [
        full.removesuffix(".complete") + ".tokenizer.complete",
        full,
    ]
