"""`make promote` (tools/promote.py): the release block moves between environments, and only it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools import promote
from tools.plan import ROOT

NEW_REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def envs(tmp_path: Path) -> Path:
    for stack in ("dev", "staging", "prod"):
        shutil.copy(ROOT / f"Pulumi.{stack}.yaml", tmp_path)
    dev = tmp_path / "Pulumi.dev.yaml"
    dev.write_text(dev.read_text().replace("b5c939de8f754692c1647ca79fbf85e8c1e70f8a", f"{NEW_REVISION}   # candidate"))
    return tmp_path


def outside_release(text: str) -> list[str]:
    start, end = promote.release_lines(text, "test")
    lines = text.splitlines()
    return lines[:start] + lines[end:]


def test_promote_moves_the_release_block_and_only_it(envs):
    before = (envs / "Pulumi.staging.yaml").read_text()
    diff = promote.promote("dev", "staging", root=envs)
    after = (envs / "Pulumi.staging.yaml").read_text()
    assert promote.release_of(after, "after") == promote.release_of((envs / "Pulumi.dev.yaml").read_text(), "dev")
    assert f"modelRevision: {NEW_REVISION}   # candidate" in after  # the block's own comments travel with it
    assert outside_release(after) == outside_release(before)  # every other line and comment untouched
    assert "# staging: prod's shape at smaller scale" in after
    # The plan diff shows the new revision reaching the download Job (a new Job, named by revision).
    assert "--- staging-before/manifests/job_gpt-oss_model-download-b5c939de8f75.yaml" in diff
    assert f"+++ staging-after/manifests/job_gpt-oss_model-download-{NEW_REVISION[:12]}.yaml" in diff
    assert promote.promote("dev", "staging", root=envs) == "nothing to promote"


def test_promotion_must_be_adjacent_unless_hotfix(envs):
    with pytest.raises(promote.PromotionError, match="skips or reverses"):
        promote.promote("dev", "prod", root=envs)
    with pytest.raises(promote.PromotionError, match="skips or reverses"):
        promote.promote("staging", "dev", root=envs)
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
        promote.promote("dev", "staging", root=envs)
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
