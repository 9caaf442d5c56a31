"""The opt-in benchmark Job as the program registers it."""

from __future__ import annotations

import kubernetes_validate


def test_benchmark_job_runs_only_when_enabled_and_counts_real_gpus(disagg_run):
    jobs = [
        r
        for r in disagg_run.resources
        if r.type == "kubernetes:batch/v1:Job" and "bench" in r.inputs["metadata"]["name"]
    ]
    (job,) = jobs  # only disagg-1p4d enables it
    assert job.name == "disagg-1p4d-benchmark" and job.parent == "disagg-1p4d"
    assert "disagg-1p4d-graph" in job.options["dependsOn"]
    annotations = job.inputs["metadata"]["annotations"]
    assert annotations["pulumi.com/skipAwait"] == "true"
    assert sorted(annotations) == ["checkov.io/skip1", "checkov.io/skip2", "pulumi.com/skipAwait"]
    env = {item["name"]: item["value"] for item in job.inputs["spec"]["template"]["spec"]["containers"][0]["env"]}
    # 256 per GPU x the 5 GPUs of 1P4D = 1,280 ([dynamo-recipe-gptoss]'s perf job multiplied by 6).
    assert env["CONCURRENCY"] == "1280"
    assert env["REQUEST_COUNT"] == "12800"
    assert (env["ISL"], env["OSL"]) == ("8192", "1024")
    assert env["ENDPOINT"] == "disagg-1p4d-frontend:8000"
    assert env["TOKENIZER"].endswith("/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a")
    assert env["ARTIFACT_DIR"].startswith("/opt/models/perf/")
    manifest = {"apiVersion": "batch/v1", "kind": "Job"} | {
        k: v for k, v in job.inputs.items() if k not in ("apiVersion", "kind")
    }
    assert kubernetes_validate.validate(manifest, "1.33.0", strict=True) == "1.33"
