"""checkov, a security scanner for Kubernetes manifests, finds nothing in any stack's manifests
beyond what .checkov.yaml skips, each skip with its reason.

checkov runs from its own venv (.venv-checkov, requirements-checkov.txt, made by `make test`): it
pins an older botocore than the project's. It reads no custom resource as a pod, so the pods of a
DynamoGraphDeployment are not scanned here; the program checks the DGD against its CRD's schema.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpt_oss_infra.tools.plan import ROOT, manifests
from tests.support import example_entries, run_entries, stack_entries, stack_names

CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
CONFIG = ROOT / ".checkov.yaml"

needs_checkov = pytest.mark.skipif(
    not CHECKOV.exists(),
    reason="checkov is not installed: run make test to create .venv-checkov (Kubernetes manifests NOT scanned)",
)

# The slower tier (pyproject.toml markers), and one worker for the module: under make test's --dist loadgroup,
# the tests of an ungrouped module go to any worker, and each worker would run the scan (a minute of checkov).
pytestmark = [pytest.mark.end_to_end, pytest.mark.xdist_group("checkov")]

# The dev stack with both secrets set: the HF token Secret and the NGC pull secrets, and how the
# download Job reads the token, exist only then (the same run as conftest's dev_run).
WITH_SECRETS = "dev+secrets"


def checkov(directory: Path) -> dict[str, Any]:
    """One checkov run over every manifest under `directory`, with .checkov.yaml: its JSON report."""
    result = subprocess.run(
        [CHECKOV, "--directory", directory, "--config-file", CONFIG, "--output", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode in (0, 1), result.stderr  # 1: failed checks; anything else: checkov broke
    report = json.loads(result.stdout)
    assert isinstance(report, dict) and report["check_type"] == "kubernetes", result.stdout[:2000]
    return report


def write_manifests(directory: Path, runs: dict[str, Any]) -> list[Path]:
    """Each stack's manifests, one file each under <directory>/<stack>/, as the plan holds them,
    except the CRDs: megabytes of vendored schema and no pod, which would take checkov a minute."""
    written = []
    for stack, run in runs.items():
        for manifest in manifests(run):
            if manifest["kind"] == "CustomResourceDefinition":
                continue
            metadata = manifest["metadata"]
            parts = [manifest["kind"].lower(), metadata.get("namespace"), metadata["name"]]
            path = directory / stack / ("_".join(part for part in parts if part) + ".yaml")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(manifest, sort_keys=False))
            written.append(path)
    return written


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    """Every stack's manifests (runs shared with the other tests of the session), one checkov run."""
    runs = {stack: run_entries(example_entries(stack), stack=stack) for stack in stack_names()}
    runs[WITH_SECRETS] = run_entries(
        stack_entries("dev") | {"gpt-oss-infra:hfToken": "hf_x", "gpt-oss-infra:ngcApiKey": "nvapi-x"}
    )
    for stack, run in runs.items():
        assert run.error is None, (stack, run.error)
    directory = tmp_path_factory.mktemp("manifests")
    written = write_manifests(directory, runs)
    return directory, written, checkov(directory)


def where(result: dict[str, Any]) -> str:
    """stack/file: resource, check id and name, of one of checkov's results."""
    file = result["file_path"].lstrip("/")
    return f"{file}: {result['resource']} {result['check_id']} {result['check_name']}"


@needs_checkov
def test_no_manifest_fails_a_check(scan):
    _, _, report = scan
    failed = report["results"]["failed_checks"]
    assert not failed, "checkov findings (fix the renderer, or skip in .checkov.yaml with why):\n" + "\n".join(
        sorted(map(where, failed))
    )
    assert report["summary"]["parsing_errors"] == 0


@needs_checkov
def test_every_job_of_every_stack_was_scanned(scan):
    directory, written, report = scan
    results = [result for results in report["results"].values() for result in results]
    scanned = {result["file_path"].lstrip("/") for result in results}
    jobs = {str(path.relative_to(directory)) for path in written if path.name.startswith("job_")}
    assert {job.split("/")[0] for job in jobs} == {*stack_names(), WITH_SECRETS}  # each has its download Job
    assert jobs <= scanned
    # The secrets' variant has the HF token Secret, mounted into the download Job as a file.
    assert f"{WITH_SECRETS}/secret_gpt-oss_hf-token.yaml" in scanned


@needs_checkov
def test_every_skip_says_why(scan):
    """Per object, in checkov's annotation (`<check>=<reason>`); for all, a comment in .checkov.yaml."""
    _, _, report = scan
    for skipped in report["results"]["skipped_checks"]:
        reason = skipped["check_result"]["suppress_comment"]
        assert len(reason) > 20, (where(skipped), reason)  # not checkov's "No comment provided"
    config = yaml.safe_load(CONFIG.read_text())
    lines = CONFIG.read_text().splitlines()
    for check in config["skip-check"]:
        (line,) = [line for line in lines if line.strip().startswith(f"- {check}")]
        assert len(line.partition("#")[2].strip()) > 20, line


@needs_checkov
def test_checkov_catches_what_it_is_here_for(tmp_path):
    """A Job whose container is privileged, runs as root, mounts the service account token and sets
    no resources fails checkov's checks with .checkov.yaml's skips."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "insecure", "namespace": "gpt-oss"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "python:3.12.11-slim-bookworm",
                            "command": ["sleep", "1"],
                            "securityContext": {"privileged": True, "runAsUser": 0},
                        }
                    ],
                }
            }
        },
    }
    (tmp_path / "insecure").mkdir()
    (tmp_path / "insecure" / "job_gpt-oss_insecure.yaml").write_text(yaml.safe_dump(job))
    failed = {result["check_id"] for result in checkov(tmp_path)["results"]["failed_checks"]}
    assert {
        "CKV_K8S_16",  # privileged container
        "CKV_K8S_23",  # root
        "CKV_K8S_38",  # service account token mounted
        "CKV_K8S_10",  # no CPU request
        "CKV_K8S_13",  # no memory limit
        "CKV_K8S_22",  # writable root filesystem
    } <= failed
