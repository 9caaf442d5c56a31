"""`make plan` (tools/plan.py): the offline plan of a stack, written to build/plan/<stack>/."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from gpt_oss_infra.core.dynamo_graph import components_by_name, pulumi_type
from gpt_oss_infra.tools import plan
from tests.support import stack_entries, write_stack

# The tests reading `dev_plan` on one worker, so that dev is planned once (tests/test_workers.py).
ONE_PLAN = pytest.mark.xdist_group("dev-plan")


@pytest.fixture(scope="module")
def dev_plan(tmp_path_factory):
    out = tmp_path_factory.mktemp("plan")
    assert plan.main(["--stack", "dev", "--out", str(out)]) == 0
    return out / "dev"


@ONE_PLAN
def test_dev_plan_holds_the_dgd_its_engine_config_and_the_resources(dev_plan):
    manifests = sorted(path.name for path in (dev_plan / "manifests").iterdir())
    assert "dynamographdeployment_gpt-oss_gpt-oss.yaml" in manifests
    assert "configmap_gpt-oss_gpt-oss-engine-config.yaml" in manifests
    graph = yaml.safe_load((dev_plan / "manifests/dynamographdeployment_gpt-oss_gpt-oss.yaml").read_text())
    assert components_by_name(graph)["TrtllmWorker"].gpus == 8
    config_map = yaml.safe_load((dev_plan / "manifests/configmap_gpt-oss_gpt-oss-engine-config.yaml").read_text())
    engine = yaml.safe_load(config_map["data"]["worker.yaml"])
    assert engine["moe_config"] == {"backend": "TRITON"}
    assert engine["tensor_parallel_size"] == engine["moe_expert_parallel_size"] == 8

    resources = json.loads((dev_plan / "resources.json").read_text())
    # The serving objects come last, in the order the program declares them.
    assert [r["type"] for r in resources][-11:] == [
        "kubernetes:core/v1:Namespace",
        "gpt-oss-infra:index:ModelCache",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "kubernetes:core/v1:ConfigMap",  # the download script
        "kubernetes:batch/v1:Job",  # the download
        "gpt-oss-infra:index:GptOssDeployment",
        "kubernetes:core/v1:ConfigMap",
        pulumi_type(graph["apiVersion"]),
        "kubernetes:core/v1:ConfigMap",  # the smoke test's script
        "kubernetes:batch/v1:Job",  # the smoke test
    ]
    for resource in resources:
        assert set(resource) <= {"type", "name", "parent", "inputs", "options"}
    pvc = next(r for r in resources if r["type"].endswith("PersistentVolumeClaim"))
    assert set(pvc["options"]) == {"dependsOn"}  # neither protected nor retained: `pulumi destroy` deletes it
    assert {"workloads-namespace", "model-cache-storage-class", "gptoss-node-addons-aws-efs-csi-driver"} <= set(
        pvc["options"]["dependsOn"]
    )
    assert pvc["parent"] == "model-cache"
    graph_resource = resources[-3]
    assert graph_resource["name"] == "gpt-oss-graph" and graph_resource["parent"] == "gpt-oss"
    assert {"gpt-oss-engine-config", "model-cache-download", "dynamo-platform-release"} <= set(
        graph_resource["options"]["dependsOn"]
    )


@ONE_PLAN
def test_summary_is_written_and_names_pools_and_topology(dev_plan):
    summary = (dev_plan / "summary.md").read_text()
    assert "| gpu | h200 | p5en.48xlarge | 1 | 8 / 0 | ON_DEMAND | no | $63.30 |" in summary
    assert "| EKS control plane, 1.34 in standard support | 1 | $0.10 |" in summary
    assert "- Kubernetes API: public endpoint from 203.0.113.0/24; private endpoint from 10.0.0.0/16" in summary
    assert "- `pulumi up` waits for the graph to be Ready, then for smoke-test Job gpt-oss-smoke-" in summary
    assert "- KV transfer: none (aggregated workers)" in summary
    assert "| TrtllmWorker | worker | 1 | 8 | 8 | 8 | off | TRITON |" in summary
    # what `pulumi destroy` would do, simulated (tools/destroy_simulation.py)
    assert "## `pulumi destroy`\n\n`pulumi destroy` deletes all " in summary
    assert "resources the stack registered (simulated from the plan's\ndependencies" in summary  # wrapped


@pytest.mark.end_to_end
def test_two_plans_of_a_stack_are_byte_identical(tmp_path):
    """In one process, and across processes (another hash seed)."""
    first, _ = plan.plan_files("dev")
    second, _ = plan.plan_files("dev")
    assert first == second
    for run in ("a", "b"):
        subprocess.run(
            [sys.executable, "-m", "gpt_oss_infra", "plan", "--stack", "dev", "--out", str(tmp_path / run)],
            cwd=plan.ROOT,
            check=True,
            capture_output=True,
            env=os.environ | {"PYTHONHASHSEED": str(ord(run))},
        )
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files_a
    for relative in files_a:
        assert (tmp_path / "a" / relative).read_bytes() == (tmp_path / "b" / relative).read_bytes()


def test_plan_replaces_what_was_there(tmp_path):
    stale = tmp_path / "dev" / "manifests" / "stale.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    assert plan.main(["--stack", "dev", "--out", str(tmp_path)]) == 0
    assert not stale.exists()
    assert (tmp_path / "dev" / "resources.json").exists()


def test_invalid_config_exits_non_zero_names_the_key_and_writes_nothing(tmp_path, capsys):
    entries = stack_entries("dev")
    entries["gpt-oss-infra:deployments"]["gpt-oss"]["gpus"] = 3
    write_stack(tmp_path, "bad", entries)
    out = tmp_path / "plan"
    assert plan.main(["--stack", "bad", "--stack-dir", str(tmp_path), "--out", str(out)]) == 1
    assert "gpt-oss-infra:deployments.gpt-oss.gpus" in capsys.readouterr().err
    assert not out.exists()


SENTINEL_TOKEN = "hf_SENTINEL_never_in_any_output_0123456789"


def test_a_plaintext_hf_token_is_refused_and_never_printed(tmp_path, capfd):
    entries = stack_entries("dev") | {"gpt-oss-infra:hfToken": SENTINEL_TOKEN}
    write_stack(tmp_path, "token", entries)
    out = tmp_path / "plan"
    assert plan.main(["--stack", "token", "--stack-dir", str(tmp_path), "--out", str(out)]) == 1
    printed = capfd.readouterr()
    assert (
        "gpt-oss-infra:hfToken: a secret stored in plaintext in the stack file: remove it and set it with "
        "pulumi config set --secret gpt-oss-infra:hfToken <value>"
    ) in printed.err
    assert SENTINEL_TOKEN not in printed.out + printed.err
    assert not out.exists()


def test_one_plaintext_api_key_among_encrypted_ones_is_refused(tmp_path, capfd):
    """The engine marks a whole map secret when any value in it is: only the stack file shows which is not."""
    api_keys = {"team-a": {"secure": "v1:AAAAciphertext=="}, "team-b": SENTINEL_TOKEN}
    write_stack(tmp_path, "keys", stack_entries("dev") | {"gpt-oss-infra:apiKeys": api_keys})
    assert plan.main(["--stack", "keys", "--stack-dir", str(tmp_path), "--out", str(tmp_path / "p")]) == 1
    printed = capfd.readouterr()
    assert "gpt-oss-infra:apiKeys.team-b: a secret stored in plaintext in the stack file" in printed.err
    assert SENTINEL_TOKEN not in printed.out + printed.err


def test_an_encrypted_hf_token_never_reaches_any_output(tmp_path, capfd):
    entries = stack_entries("dev") | {"gpt-oss-infra:hfToken": {"secure": "v1:AAAAciphertext=="}}
    write_stack(tmp_path, "token", entries)
    out = tmp_path / "plan"
    assert plan.main(["--stack", "token", "--stack-dir", str(tmp_path), "--out", str(out)]) == 0
    resources = json.loads((out / "token" / "resources.json").read_text())
    secret = next(r for r in resources if r["type"] == "kubernetes:core/v1:Secret")
    assert secret["inputs"]["stringData"] == {"HF_TOKEN": "[secret]"}
    graph = next(r for r in resources if r["type"].endswith("DynamoGraphDeployment"))
    assert components_by_name(graph["inputs"])["TrtllmWorker"].env_secret == "hf-token"


def test_encrypted_hf_token_is_shown_as_secret_without_a_warning(tmp_path, capfd):
    entries = stack_entries("dev") | {"gpt-oss-infra:hfToken": {"secure": "v1:AAAAciphertext=="}}
    write_stack(tmp_path, "enc", entries)
    assert plan.main(["--stack", "enc", "--stack-dir", str(tmp_path), "--out", str(tmp_path / "p")]) == 0
    assert "plaintext" not in capfd.readouterr().err
    resources = (tmp_path / "p" / "enc" / "resources.json").read_text()
    assert '"HF_TOKEN": "[secret]"' in resources
    assert "ciphertext" not in resources


def test_unknown_stack_is_a_clear_error(capsys):
    assert plan.main(["--stack", "nope"]) == 2
    assert "no stack file Pulumi.nope.yaml" in capsys.readouterr().err


@pytest.mark.end_to_end  # every stack file planned as make plan does: whole plans
@pytest.mark.parametrize(
    "stack_file",
    sorted([*plan.ROOT.glob("Pulumi.*.yaml"), *plan.EXAMPLES.glob("Pulumi.*.yaml")]),
    ids=lambda path: path.stem,
)
def test_every_stack_file_plans(stack_file):
    files, run = plan.plan_files(stack_file.stem.removeprefix("Pulumi."), stack_file.parent)
    assert run.error is None
    assert json.loads(files["resources.json"])
    assert files["summary.md"].startswith("# Plan: gpt-oss-infra / ")
