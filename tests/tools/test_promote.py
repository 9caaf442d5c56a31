"""`make promote` (tools/promote.py): the release block moves between environments, and only it."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.tools import promote
from gpt_oss_infra.tools.plan import ROOT

NEW_REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def envs(tmp_path: Path) -> Path:
    """dev, staging and prod as shipped (dev on 1.6.1, the others on 1.2.1), dev with a candidate revision."""
    for stack in ("dev", "staging", "prod"):
        shutil.copy(ROOT / f"Pulumi.{stack}.yaml", tmp_path)
    dev = tmp_path / "Pulumi.dev.yaml"
    dev.write_text(dev.read_text().replace("b5c939de8f754692c1647ca79fbf85e8c1e70f8a", f"{NEW_REVISION}   # candidate"))
    return tmp_path


def outside_release(text: str) -> list[str]:
    start, end = promote.release_lines(text, "test")
    lines = text.splitlines()
    return lines[:start] + lines[end:]


def on_dynamo(path: Path, version: str) -> None:
    """The stack file as if `version` were live there (its release's runtime image)."""
    path.write_text(
        promote.with_release_values(
            path.read_text(),
            path.name,
            {"dynamo": version, "runtimeImage": f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{version}"},
        )
    )


def test_promote_moves_the_release_block_and_only_it(envs):
    on_dynamo(envs / "Pulumi.staging.yaml", "1.5.1")  # one minor release behind dev
    before = (envs / "Pulumi.staging.yaml").read_text()
    diff = promote.promote("dev", "staging", root=envs)
    after = (envs / "Pulumi.staging.yaml").read_text()
    assert promote.release_of(after, "after") == promote.release_of((envs / "Pulumi.dev.yaml").read_text(), "dev")
    assert f"modelRevision: {NEW_REVISION}   # candidate" in after  # the block's own comments travel with it
    assert outside_release(after) == outside_release(before)  # every other line and comment untouched
    assert "# staging: prod's shape at smaller scale" in after
    assert diff.startswith("staging: Dynamo 1.5.1 -> 1.6.1\n")
    # The plan diff shows the new revision reaching the download Job (a new Job, named by revision).
    assert "--- staging-before/manifests/job_gpt-oss_model-download-b5c939de8f75.yaml" in diff
    assert f"+++ staging-after/manifests/job_gpt-oss_model-download-{NEW_REVISION[:12]}.yaml" in diff
    assert '+      "version": "1.6.1"' in diff  # the platform chart follows release.dynamo
    assert promote.promote("dev", "staging", root=envs) == "nothing to promote"


def test_a_promotion_across_minor_releases_is_refused_with_the_path(envs):
    before = (envs / "Pulumi.staging.yaml").read_text()
    with pytest.raises(promote.PromotionError) as refused:
        promote.promote("dev", "staging", root=envs)
    message = str(refused.value)
    assert "staging runs Dynamo 1.2.1 (Pulumi.staging.yaml); dev's 1.6.1 is 4 minor releases up" in message
    assert "1.2.1 -> 1.3.0 -> 1.4.2 -> 1.5.1 -> 1.6.1" in message
    assert "make promote FROM=dev TO=staging STEP=1" in message
    assert (envs / "Pulumi.staging.yaml").read_text() == before


@pytest.mark.end_to_end
def test_stepping_through_every_minor_release_to_dev(envs):
    """One `make promote ... STEP=1` per minor release, each planned (and `pulumi up`-ed) before the next."""
    staging = envs / "Pulumi.staging.yaml"
    first = promote.promote("dev", "staging", step=True, root=envs)
    release = promote.release_of(staging.read_text(), "staging")
    assert release["dynamo"] == "1.3.0" and release["runtimeImage"].endswith("tensorrtllm-runtime:1.3.0")
    assert release["modelRevision"] == "b5c939de8f754692c1647ca79fbf85e8c1e70f8a"  # staging's own, for now
    assert first.startswith(
        "staging: Dynamo 1.2.1 -> 1.3.0, step 1 of the 4 minor releases up: 1.2.1 -> 1.3.0 -> 1.4.2 -> 1.5.1 -> 1.6.1"
    )
    # What the step changes, in its diff: CRD ownership, platform release, graph apiVersion, runtime
    # image, and the engine the engine config is for.
    assert "customresourcedefinition_dynamographdeployments.nvidia.com.yaml: a CustomResourceDefinition" in first
    assert "no longer applied by the program" in first and '"upgradeCRD": true' in first
    assert "left in the cluster, no longer managed (retainOnDelete)" in first
    assert '+      "version": "1.3.0"' in first
    graph_api = load_catalog().dynamo_versions["1.3.0"].spec.graph_api_version
    assert f"+apiVersion: {graph_api}" in first and "taken over in place (alias)" in first
    assert "+          image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0" in first
    assert "+    gpt-oss-infra/engine-version: TensorRT-LLM 1.3.0rc19" in first
    second = promote.promote("dev", "staging", step=True, root=envs)
    assert second.startswith("staging: Dynamo 1.3.0 -> 1.4.2, step 1 of the 3 minor releases up")
    assert '"install": false' in second  # NATS off by default from 1.4
    assert promote.promote("dev", "staging", step=True, root=envs).startswith("staging: Dynamo 1.4.2 -> 1.5.1")
    last = promote.promote("dev", "staging", root=envs)  # adjacent now: the whole release block
    assert last.startswith("staging: Dynamo 1.5.1 -> 1.6.1\n")
    assert promote.release_of(staging.read_text(), "staging") == promote.release_of(
        (envs / "Pulumi.dev.yaml").read_text(), "dev"
    )


@pytest.mark.end_to_end
def test_a_rollback_is_the_previous_release_block_again(envs):
    """Reverting a step's commit puts the previous block back: it plans, and `pulumi up` re-adopts the
    program's CRDs and takes the graph back to its old apiVersion in place (tests/tools/test_urns.py)."""
    staging = envs / "Pulumi.staging.yaml"
    shipped = staging.read_text()
    promote.promote("dev", "staging", step=True, root=envs)
    staging.write_text(shipped)  # git revert of the promotion commit
    assert promote.plan_or_none("staging", envs) is not None


def test_promotion_must_be_adjacent_unless_hotfix(envs):
    with pytest.raises(promote.PromotionError, match="skips or reverses"):
        promote.promote("dev", "prod", root=envs)
    with pytest.raises(promote.PromotionError, match="skips or reverses"):
        promote.promote("staging", "dev", root=envs)
    on_dynamo(envs / "Pulumi.prod.yaml", "1.5.1")
    promote.promote("dev", "prod", hotfix=True, root=envs)
    assert promote.release_of((envs / "Pulumi.prod.yaml").read_text(), "prod")["modelRevision"] == NEW_REVISION


def test_an_invalid_source_is_refused_and_nothing_is_written(envs):
    dev = envs / "Pulumi.dev.yaml"
    dev.write_text(dev.read_text().replace("hardware: h200", "hardware: a100"))
    before = (envs / "Pulumi.staging.yaml").read_text()
    with pytest.raises(promote.PromotionError, match=r"Pulumi\.dev\.yaml does not validate"):
        promote.promote("dev", "staging", root=envs)
    assert (envs / "Pulumi.staging.yaml").read_text() == before


def test_the_target_is_validated_with_the_new_release(envs):
    staging = envs / "Pulumi.staging.yaml"
    staging.write_text(staging.read_text().replace("nodes: 1", "nodes: -1"))
    before = staging.read_text()
    with pytest.raises(promote.PromotionError, match="does not validate; nothing written"):
        promote.promote("dev", "staging", step=True, root=envs)
    assert staging.read_text() == before


def test_a_stack_file_that_repeats_a_key_is_refused_with_its_line(tmp_path, capsys, monkeypatch):
    for name in ("dev", "staging"):
        (tmp_path / f"Pulumi.{name}.yaml").write_text((ROOT / f"Pulumi.{name}.yaml").read_text())
    staging = tmp_path / "Pulumi.staging.yaml"
    staging.write_text(staging.read_text().replace("config:\n", "config:\n  gpt-oss-infra:environment: x\n", 1))
    with pytest.raises(
        promote.YamlFileError, match=r"Pulumi.staging.yaml:\d+:\d+: duplicate key 'gpt-oss-infra:environment'"
    ):
        promote.promote("dev", "staging", root=tmp_path)


def test_a_stack_file_more_than_one_minor_release_from_the_live_one_is_refused_before_up(envs):
    """What the deploy workflow runs before `pulumi up`, with the stack's output dynamoRelease."""
    dev = envs / "Pulumi.dev.yaml"
    with pytest.raises(promote.PromotionError) as refused:
        promote.check_live("dev", "1.2.1", root=envs)
    assert "dev runs Dynamo 1.2.1 (its last pulumi up) and Pulumi.dev.yaml asks for 1.6.1" in str(refused.value)
    assert "4 minor releases up: 1.2.1 -> 1.3.0 -> 1.4.2 -> 1.5.1 -> 1.6.1" in str(refused.value)
    assert promote.check_live("dev", "1.5.1", root=envs).endswith("at most one minor release, as Dynamo supports")
    said = promote.check_live("dev", "1.2.1", step=True, root=envs)  # writes the next release of the path
    assert said.startswith("dev: Pulumi.dev.yaml now asks for Dynamo 1.3.0, step 1 of the 4 minor releases up")
    assert promote.release_of(dev.read_text(), "dev")["runtimeImage"].endswith("tensorrtllm-runtime:1.3.0")
    with pytest.raises(
        promote.PromotionError, match=re.escape("4 minor releases down: 1.6.1 -> 1.5.1 -> 1.4.2 -> 1.3.0 -> 1.2.1")
    ):
        promote.check_live("staging", "1.6.1", root=envs)  # a rollback steps back one minor at a time too


def test_the_path_takes_the_newest_patch_of_each_minor_and_stops_at_a_major(catalog):
    newer = dataclasses.replace(catalog.dynamo_versions["1.4.2"], version="1.4.10")
    major = dataclasses.replace(catalog.dynamo_versions["1.6.1"], version="2.0.0")
    releases = catalog.dynamo_versions | {"1.4.10": newer, "2.0.0": major}
    with_them = dataclasses.replace(catalog, dynamo_versions=releases)
    assert [r.version for r in promote.upgrade_path(with_them, "1.2.1", "1.6.1")] == [
        "1.3.0",
        "1.4.10",
        "1.5.1",
        "1.6.1",
    ]
    with pytest.raises(promote.PromotionError, match="crosses a major release"):
        promote.upgrade_path(with_them, "1.6.1", "2.0.0")
    with pytest.raises(promote.PromotionError, match=re.escape("no 1.1 release is in configs/dynamo/versions.yaml")):
        promote.upgrade_path(catalog, "1.0.0", "1.2.1")


def test_a_step_says_when_it_replaces_the_stacks_own_image(envs):
    staging = envs / "Pulumi.staging.yaml"
    mirror = "registry.example.com/mirror/tensorrtllm-runtime@sha256:" + "b" * 64
    staging.write_text(promote.with_release_values(staging.read_text(), staging.name, {"runtimeImage": mirror}))
    said = promote.promote("dev", "staging", step=True, root=envs)
    assert f"runtimeImage {mirror} replaced by nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0" in said


def test_a_mirrored_image_with_a_release_tag_is_named_when_a_step_replaces_it(envs):
    """A mirror tagged like the published image (…/mirror/tensorrtllm-runtime:1.2.1) is the stack's own too."""
    staging = envs / "Pulumi.staging.yaml"
    mirror = "123456789012.dkr.ecr.us-east-2.amazonaws.com/mirror/tensorrtllm-runtime:1.2.1"
    staging.write_text(promote.with_release_values(staging.read_text(), staging.name, {"runtimeImage": mirror}))
    said = promote.promote("dev", "staging", step=True, root=envs)
    assert f"runtimeImage {mirror} replaced by nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0" in said


def test_a_promotion_that_would_move_the_target_down_is_refused_unless_on_purpose(envs):
    """After a hotfix took prod past staging, the next ordinary staging -> prod promotion would undo it."""
    on_dynamo(envs / "Pulumi.staging.yaml", "1.5.1")
    on_dynamo(envs / "Pulumi.prod.yaml", "1.6.1")  # a hotfix put it there
    before = (envs / "Pulumi.prod.yaml").read_text()
    with pytest.raises(promote.PromotionError) as refused:
        promote.promote("staging", "prod", root=envs)
    assert str(refused.value).startswith(
        "prod runs Dynamo 1.6.1 (Pulumi.prod.yaml), newer than staging's 1.5.1: promoting would move prod down"
    )
    with pytest.raises(promote.PromotionError, match="would move prod down"):
        promote.promote("staging", "prod", hotfix=True, root=envs)  # a hotfix skips an environment, not this
    assert (envs / "Pulumi.prod.yaml").read_text() == before
    assert promote.promote("staging", "prod", downgrade=True, root=envs).startswith("prod: Dynamo 1.6.1 -> 1.5.1")
    with pytest.raises(promote.PromotionError, match="skips or reverses"):  # the order still holds
        promote.promote("dev", "prod", downgrade=True, root=envs)


def test_the_targets_line_endings_and_indentation_are_kept(envs):
    """A CRLF stack file stays CRLF, and a source block indented otherwise is indented as the target's key."""
    on_dynamo(envs / "Pulumi.staging.yaml", "1.5.1")
    dev, staging = envs / "Pulumi.dev.yaml", envs / "Pulumi.staging.yaml"
    dev.write_text(re.sub(r"(?m)^  ", "    ", dev.read_text()))  # dev indented by four
    staging.write_bytes(staging.read_bytes().replace(b"\n", b"\r\n"))
    staging.write_bytes(staging.read_bytes().replace(b"gpt-oss-infra:release:", b"gpt-oss-infra:release:   # live"))
    promote.promote("dev", "staging", root=envs)
    after = staging.read_bytes()
    assert after.count(b"\n") == after.count(b"\r\n") == len(after.splitlines()) > 40
    assert promote.release_of(after.decode(), "staging") == promote.release_of(dev.read_text(), "dev")


def test_a_comment_inside_the_block_at_any_indentation_is_the_blocks(envs):
    """A comment at the key's indentation between the block's lines neither ends the source's block (its later keys
    were left behind) nor the target's (its later keys stayed beside the new ones: a duplicate key)."""
    on_dynamo(envs / "Pulumi.staging.yaml", "1.5.1")
    dev, staging = envs / "Pulumi.dev.yaml", envs / "Pulumi.staging.yaml"
    for path in (dev, staging):
        path.write_text(path.read_text().replace("    model:", "  # a note at the key's indentation\n    model:", 1))
    promote.promote("dev", "staging", root=envs)
    assert promote.release_of(staging.read_text(), "staging") == promote.release_of(dev.read_text(), "dev")
    assert staging.read_text().count("# a note at the key's indentation") == 1
