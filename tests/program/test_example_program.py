"""examples/own-cluster: a program that owns its cluster and network and adds the four public building
blocks to it, planned offline like the repository's program (tools/plan.py --program-dir)."""

from __future__ import annotations

import ast
import json

import pytest

import gpt_oss_infra
from gpt_oss_infra.core.dynamo_graph import components_by_name
from gpt_oss_infra.tools import plan

EXAMPLE = plan.ROOT / "examples" / "own-cluster"


@pytest.fixture(scope="module")
def example_plan():
    return plan.plan_files("dev", program_dir=EXAMPLE)


def test_the_example_imports_only_the_public_api():
    tree = ast.parse((EXAMPLE / "__main__.py").read_text())
    ours = [
        node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module.startswith("gpt_oss_infra")
    ]
    assert [node.module for node in ours] == ["gpt_oss_infra"]  # no submodule: only what the package exports
    imported = {alias.name for node in ours for alias in node.names}
    assert imported == {"DynamoPlatform", "GpuNodePool", "GptOssDeployment", "ModelCache"}
    assert imported <= set(gpt_oss_infra.__all__)
    plain_imports = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in plain_imports if name.startswith("gpt_oss_infra")]


def test_the_example_plans_its_own_cluster_with_the_four_blocks_on_it(example_plan):
    files, run = example_plan
    resources = json.loads(files["resources.json"])
    by_name = {(r["type"], r["name"]): r for r in resources}
    blocks = [r["name"] for r in resources if r["type"].startswith("gpt-oss-infra:index:")]
    assert blocks == ["gpu", "dynamo", "model-cache", "gpt-oss"]
    # Beside the blocks, only the teardown guards are components (core/render/teardown.py): the platform's,
    # and the EFS cache's (its access point).
    inner = [
        (r["type"], r["parent"])
        for r in resources
        if r["type"].startswith("gpt-oss-infra:") and r["name"] not in blocks
    ]
    assert inner == [
        ("gpt-oss-infra:teardown:TeardownGuards", "dynamo"),
        ("gpt-oss-infra:teardown:TeardownGuards", "model-cache"),
    ]
    # The GPU node group joins the program's cluster, in the program's private subnets.
    group = by_name[("aws:eks/nodeGroup:NodeGroup", "gpu-nodes")]
    assert group["parent"] == "gpu"
    assert group["inputs"]["clusterName"] == "dev"
    assert group["inputs"]["subnetIds"] == ["private-us-east-2a-id", "private-us-east-2b-id"]
    assert group["inputs"]["labels"]["gpt-oss-infra/pool"] == "gpu"
    # The model cache provisions on the program's EFS file system.
    storage_class = by_name[("kubernetes:storage.k8s.io/v1:StorageClass", "model-cache-storage-class")]
    assert storage_class["inputs"]["parameters"]["fileSystemId"] == "model-id"
    # The graph runs on the pool's nodes and mounts the cache's claim.
    [graph] = [r["inputs"] for r in resources if r["name"] == "gpt-oss-graph"]
    worker = components_by_name(graph)["TrtllmWorker"]
    assert worker.pod["nodeSelector"] == {"gpt-oss-infra/pool": "gpu"}
    assert worker.gpus == 4
    claim = by_name[("kubernetes:core/v1:PersistentVolumeClaim", "model-cache-pvc")]["inputs"]["metadata"]["name"]
    assert worker.volume.claim == claim
    assert json.loads(files["outputs.json"])["endpoint"] == "http://gpt-oss-frontend.gpt-oss.svc.cluster.local:8000"
    assert "No stack report: this program composes the components itself." in files["summary.md"]
    assert "gpt-oss-smoke-test" in files["summary.md"]  # its critical path ends with the smoke test
    # Only the release's unverified pins, said loudly and keyed by the block argument that chose it.
    assert run.log and all(line.startswith("warning: dynamo_release: Dynamo 1.6.1's ") for line in run.log), run.log


def test_a_bad_argument_of_the_example_is_refused_by_its_name_with_nothing_written(tmp_path, capsys):
    (tmp_path / "Pulumi.dev.yaml").write_text(
        (EXAMPLE / "Pulumi.dev.yaml").read_text() + "  gpt-oss-own-cluster:recipe: h200-agg-fastest\n"
    )
    argv = [
        "--program-dir",
        str(EXAMPLE),
        "--stack-dir",
        str(tmp_path),
        "--stack",
        "dev",
        "--out",
        str(tmp_path / "out"),
    ]
    assert plan.main(argv) == 1
    _, err = capsys.readouterr()
    assert "invalid arguments of GptOssDeployment 'gpt-oss':\nrecipe: unknown recipe 'h200-agg-fastest'" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()
