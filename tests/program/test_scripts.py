"""Every script Job runs its script (jobs/) from its own ConfigMap, which it waits for."""

from __future__ import annotations

import hashlib

import pytest

from gpt_oss_infra.core.paths import JOB_SCRIPTS_DIR
from gpt_oss_infra.core.render.scripts import SCRIPT_DIGEST


@pytest.fixture(scope="module")
def runs(dev_run, disagg_run):
    return {r.name: r for run in (dev_run, disagg_run) for r in run.resources}


@pytest.mark.parametrize(
    "job, interpreter, file_name",
    [
        ("model-cache-download", "sh", "model-download.sh"),
        ("gpt-oss-smoke-test", "python3", "smoke_test.py"),
        ("disagg-1p4d-benchmark", "sh", "benchmark.sh"),
    ],
)
def test_each_job_runs_its_script_from_its_config_map(runs, job, interpreter, file_name):
    config_map, job = runs[f"{job}-script"], runs[job]
    text = (JOB_SCRIPTS_DIR / file_name).read_text()
    assert config_map.inputs["data"] == {file_name: text}
    assert config_map.name in job.options["dependsOn"]  # the pod never waits on a missing volume
    template = job.inputs["spec"]["template"]
    (container,) = template["spec"]["containers"]
    assert container["command"] == [interpreter, f"/scripts/{file_name}"]
    volume = next(v for v in template["spec"]["volumes"] if v["name"] == "script")
    assert volume["configMap"]["name"] == config_map.inputs["metadata"]["name"]
    assert {"name": "script", "mountPath": "/scripts", "readOnly": True} in container["volumeMounts"]
    assert template["metadata"]["annotations"][SCRIPT_DIGEST] == hashlib.sha256(text.encode()).hexdigest()
