"""The Jobs' scripts are files (configs/scripts/), linted by shellcheck and mounted from ConfigMaps."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import subprocess

import pytest

from core.inputs.catalog import CONFIG_DIR
from core.render.scripts import SCRIPT_DIGEST
from core.stack import build_stack
from tests.conftest import run_entries, stack_entries
from tests.test_infra import example_entries
from tools.plan import ROOT

SHELL_SCRIPTS = sorted((CONFIG_DIR / "scripts").glob("*.sh"))
SHELLCHECK = shutil.which("shellcheck")
needs_shellcheck = pytest.mark.skipif(
    SHELLCHECK is None, reason="shellcheck is not installed (apt-get install shellcheck): shell scripts NOT linted"
)


def shellcheck(*paths) -> subprocess.CompletedProcess:
    """shellcheck with the dialect each file's shebang names (the Jobs' scripts: POSIX sh)."""
    return subprocess.run([SHELLCHECK, *map(str, paths)], capture_output=True, text=True)


def test_the_jobs_shell_scripts_are_files():
    assert [path.name for path in SHELL_SCRIPTS] == ["benchmark.sh", "model-download.sh"]


@needs_shellcheck
def test_every_shell_script_passes_shellcheck():
    assert all(path.read_text().startswith("#!/bin/sh\n") for path in SHELL_SCRIPTS)  # what the Jobs run them with
    result = shellcheck(*SHELL_SCRIPTS, ROOT / ".ci" / "run")
    assert result.returncode == 0, result.stdout


@needs_shellcheck
def test_shellcheck_catches_what_it_is_here_for(tmp_path):
    """An unquoted variable (word splitting) and a bash-only test in a POSIX sh script."""
    broken = tmp_path / "broken.sh"
    broken.write_text("#!/bin/sh\nset -eu\nif [[ -f $MARKER ]]; then cat $MARKER; fi\n")
    result = shellcheck(broken)
    assert result.returncode != 0
    assert "SC2086" in result.stdout  # double quote to prevent globbing and word splitting
    assert "SC3010" in result.stdout  # in POSIX sh, [[ ]] is undefined


@pytest.fixture(scope="module")
def runs():
    dev = run_entries(stack_entries("dev"))
    disagg = run_entries(example_entries("b200-disagg"), stack="b200-disagg")
    assert dev.error is None and disagg.error is None
    return {r.name: r for run in (dev, disagg) for r in run.resources}


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
    text = (CONFIG_DIR / "scripts" / file_name).read_text()
    assert config_map.inputs["data"] == {file_name: text}
    assert config_map.name in job.options["dependsOn"]  # the pod never waits on a missing volume
    template = job.inputs["spec"]["template"]
    (container,) = template["spec"]["containers"]
    assert container["command"] == [interpreter, f"/scripts/{file_name}"]
    volume = next(v for v in template["spec"]["volumes"] if v["name"] == "script")
    assert volume["configMap"]["name"] == config_map.inputs["metadata"]["name"]
    assert {"name": "script", "mountPath": "/scripts", "readOnly": True} in container["volumeMounts"]
    assert template["metadata"]["annotations"][SCRIPT_DIGEST] == hashlib.sha256(text.encode()).hexdigest()


def test_a_changed_script_changes_the_jobs_pod_template(dev_raw, catalog):
    """Kubernetes does not let a Job's template change in place: Pulumi replaces the Job, which runs
    the new script (a ConfigMap change alone would leave the finished Job as it was)."""
    before = build_stack(dev_raw, catalog, with_hf_token=False).model_cache.download.job
    edited = dict(catalog.scripts) | {"model-download.sh": catalog.scripts["model-download.sh"] + "echo done\n"}
    after = build_stack(dev_raw, dataclasses.replace(catalog, scripts=edited), with_hf_token=False)
    after_job = after.model_cache.download.job
    assert before["metadata"] == after_job["metadata"]
    assert before["spec"]["template"]["metadata"] != after_job["spec"]["template"]["metadata"]
