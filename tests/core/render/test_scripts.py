"""core/render/scripts.py: a changed script changes its Job's pod template, so the Job runs again."""

from __future__ import annotations

import dataclasses

from gpt_oss_infra.core.stack import build_stack


def test_a_changed_script_changes_the_jobs_pod_template(dev_raw, catalog):
    """Kubernetes does not let a Job's template change in place: Pulumi replaces the Job, which runs
    the new script (a ConfigMap change alone would leave the finished Job as it was)."""
    before = build_stack(dev_raw, catalog, with_hf_token=False).model_cache.download.job
    edited = dict(catalog.scripts) | {"model-download.sh": catalog.scripts["model-download.sh"] + "echo done\n"}
    after = build_stack(dev_raw, dataclasses.replace(catalog, scripts=edited), with_hf_token=False)
    after_job = after.model_cache.download.job
    assert before["metadata"] == after_job["metadata"]
    assert before["spec"]["template"]["metadata"] != after_job["spec"]["template"]["metadata"]
