"""`pulumi up` ends when serving works: every graph is awaited Ready, then its smoke-test Job runs."""

from __future__ import annotations

import kubernetes_validate

from gpt_oss_infra.core.paths import JOB_SCRIPTS_DIR
from gpt_oss_infra.tools.dependencies import transitive_waits
from tests.support import run_entries, stack_entries


def test_every_graph_is_awaited_until_the_operator_reports_it_ready(dev_run):
    graph = next(r for r in dev_run.resources if r.name == "gpt-oss-graph")
    assert graph.inputs["metadata"]["annotations"] == {
        "pulumi.com/waitFor": "condition=Ready",  # the operator's Ready condition, generation-aware
        "pulumi.com/timeoutSeconds": "3600",  # deployments.<name>.readyTimeoutMinutes (60)
    }


def test_the_ready_timeout_is_configurable():
    entries = stack_entries("dev")
    entries["gpt-oss-infra:deployments"]["gpt-oss"]["readyTimeoutMinutes"] = 25
    run = run_entries(entries, stack="timeout")
    assert run.error is None, run.error
    graph = next(r for r in run.resources if r.name == "gpt-oss-graph")
    assert graph.inputs["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == "1500"


def test_the_smoke_test_waits_for_the_graph_and_reports_in_the_outputs(dev_run):
    resources = {r.name: r for r in dev_run.resources}
    job = resources["gpt-oss-smoke-test"]
    assert "gpt-oss-smoke-test-script" in transitive_waits(dev_run.resources)["gpt-oss-smoke-test"]
    spec = job.inputs["spec"]
    assert "ttlSecondsAfterFinished" not in spec and spec["backoffLimit"] == 0
    (container,) = spec["template"]["spec"]["containers"]
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"  # its reason reaches `pulumi up`
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["ENDPOINT"] == "gpt-oss-frontend:8000" and env["MODEL"] == "openai/gpt-oss-120b"
    # The script ends by its deadline (600 s), before the Job's (780 s), before Pulumi's await (840 s):
    # its reason always reaches `pulumi up`.
    assert env["DEADLINE_SECONDS"] == "600" and spec["activeDeadlineSeconds"] == 780
    assert job.inputs["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == "840"
    assert job.inputs["metadata"]["annotations"]["pulumi.com/replaceUnready"] == "true"  # a failed one runs again
    assert (
        resources["gpt-oss-smoke-test-script"].inputs["data"]["smoke_test.py"]
        == (JOB_SCRIPTS_DIR / "smoke_test.py").read_text()
    )
    assert kubernetes_validate.validate(job.inputs, "1.33.0", strict=True) == "1.33"
    name = job.inputs["metadata"]["name"]
    assert dev_run.outputs["servingChecks"] == {
        "gpt-oss": f"answered a chat completion through gpt-oss-frontend (Job {name})"
    }


def test_a_changed_graph_is_smoke_tested_again():
    entries = stack_entries("dev")
    before = next(r for r in run_entries(entries).resources if r.name == "gpt-oss-smoke-test")
    entries["gpt-oss-infra:deployments"]["gpt-oss"]["overrides"] = {"cuda_graph_config": {"max_batch_size": 16}}
    after = next(r for r in run_entries(entries, stack="changed").resources if r.name == "gpt-oss-smoke-test")
    assert before.inputs["metadata"]["name"] != after.inputs["metadata"]["name"]  # a new Job runs
