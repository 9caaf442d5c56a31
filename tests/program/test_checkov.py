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


def write_manifests(directory: Path, runs: dict[str, Any]) -> dict[Path, Path]:
    """Each stack's manifests, one file each under <directory>/<stack>/, as the plan holds them,
    except the CRDs: megabytes of vendored schema and no pod, which would take checkov a minute. A
    manifest with the same text as one written for an earlier stack (most of the platform's are) is not
    written again: checkov scanned 337 files for 231 texts. Each manifest's path -> the file scanned for it."""
    scanned_for: dict[Path, Path] = {}
    first_written: dict[str, Path] = {}
    for stack, run in runs.items():
        for manifest in manifests(run):
            if manifest["kind"] == "CustomResourceDefinition":
                continue
            metadata = manifest["metadata"]
            parts = [manifest["kind"].lower(), metadata.get("namespace"), metadata["name"]]
            path = directory / stack / ("_".join(part for part in parts if part) + ".yaml")
            text = yaml.safe_dump(manifest, sort_keys=False)
            if text not in first_written:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                first_written[text] = path
            scanned_for[path] = first_written[text]
    return scanned_for


# Scanned with every stack's manifests, in a folder of its own: what checkov must find there proves the scan
# and its skips catch what they are here for.
INSECURE = "insecure"


def insecure_job() -> dict[str, Any]:
    """A Job whose container is privileged, runs as root, mounts the service account token and sets no resources."""
    return {
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


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    """Every stack's manifests (runs shared with the other tests of the session) and the insecure Job, one
    checkov run."""
    runs = {stack: run_entries(example_entries(stack), stack=stack) for stack in stack_names()}
    runs[WITH_SECRETS] = run_entries(
        stack_entries("dev") | {"gpt-oss-infra:hfToken": "hf_x", "gpt-oss-infra:ngcApiKey": "nvapi-x"}
    )
    for stack, run in runs.items():
        assert run.error is None, (stack, run.error)
    directory = tmp_path_factory.mktemp("manifests")
    scanned_for = write_manifests(directory, runs)
    (directory / INSECURE).mkdir()
    (directory / INSECURE / "job_gpt-oss_insecure.yaml").write_text(yaml.safe_dump(insecure_job()))
    return directory, scanned_for, checkov(directory)


def every_result(report: dict[str, Any]) -> list[dict[str, Any]]:
    """checkov's results of every kind: passed, failed and skipped checks (and parsing errors)."""
    return [result for results in report["results"].values() for result in results]


def of_insecure_job(result: dict[str, Any]) -> bool:
    return result["file_path"].lstrip("/").startswith(f"{INSECURE}/")


def in_stacks(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results of the stacks' manifests: not of the insecure Job."""
    return [result for result in results if not of_insecure_job(result)]


def where(result: dict[str, Any]) -> str:
    """stack/file: resource, check id and name, of one of checkov's results."""
    file = result["file_path"].lstrip("/")
    return f"{file}: {result['resource']} {result['check_id']} {result['check_name']}"


@needs_checkov
def test_no_manifest_fails_a_check(scan):
    _, _, report = scan
    failed = in_stacks(report["results"]["failed_checks"])
    assert not failed, "checkov findings (fix the renderer, or skip in .checkov.yaml with why):\n" + "\n".join(
        sorted(map(where, failed))
    )
    assert report["summary"]["parsing_errors"] == 0


@needs_checkov
def test_every_job_of_every_stack_was_scanned(scan):
    directory, scanned_for, report = scan
    results = every_result(report)
    scanned = {result["file_path"].lstrip("/") for result in results}
    jobs = {path: scanned_for[path] for path in scanned_for if path.name.startswith("job_")}
    assert {path.relative_to(directory).parts[0] for path in jobs} == {*stack_names(), WITH_SECRETS}  # each has one
    assert {str(path.relative_to(directory)) for path in jobs.values()} <= scanned
    assert len(set(scanned_for.values())) < len(scanned_for)  # the same text is scanned once
    # The secrets' variant has the HF token Secret, mounted into the download Job as a file.
    assert f"{WITH_SECRETS}/secret_gpt-oss_hf-token.yaml" in scanned


@needs_checkov
def test_the_report_holds_no_code_blocks(scan):
    """.checkov.yaml's compact: without it, each of thousands of results carries its object's text (a 63 MB
    report for every stack's manifests, and half of checkov's time spent writing it)."""
    _, _, report = scan
    results = every_result(report)
    assert len(results) > 1000 and all(result["code_block"] is None for result in results)


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
def test_checkov_catches_what_it_is_here_for(scan):
    """The insecure Job, scanned with the stacks' manifests and .checkov.yaml's skips, fails the checks
    for each of its faults."""
    _, _, report = scan
    failed = {result["check_id"] for result in report["results"]["failed_checks"] if of_insecure_job(result)}
    assert {
        "CKV_K8S_16",  # privileged container
        "CKV_K8S_23",  # root
        "CKV_K8S_38",  # service account token mounted
        "CKV_K8S_10",  # no CPU request
        "CKV_K8S_13",  # no memory limit
        "CKV_K8S_22",  # writable root filesystem
    } <= failed
