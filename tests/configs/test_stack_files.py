"""A stray or outdated stack file in the checkout is named with its problems by one test, and left
out of every other test's stack list: it never crashes the collection of unrelated tests."""

from __future__ import annotations

import shutil

from tests import support
from tests.support import stray_stack_files


def test_every_stack_file_in_the_checkout_is_one_the_program_accepts():
    assert stray_stack_files() == {}


def test_a_stray_stack_file_is_named_and_left_out_and_an_older_one_still_read(monkeypatch, tmp_path):
    examples = tmp_path / "examples"
    shutil.copytree(support.EXAMPLES, examples)
    b200 = (examples / "Pulumi.b200.yaml").read_text()
    # From before cluster kinds: `create: true` means kind eks (with a deprecation warning).
    (examples / "Pulumi.older.yaml").write_text(b200.replace("    kind: eks\n", "    create: true\n"))
    # A copy someone half-edited: a recipe that does not exist.
    (examples / "Pulumi.stray.yaml").write_text(b200.replace("recipe: b200-agg-low-latency", "recipe: b200-fast"))
    monkeypatch.setattr(support, "EXAMPLES", examples)
    support._stack_files.cache_clear()
    try:
        stray, names, eks = support.stray_stack_files(), support.stack_names(), support.eks_stack_names()
    finally:
        monkeypatch.undo()
        support._stack_files.cache_clear()
    assert list(stray) == ["stray"]
    assert stray["stray"].startswith(
        f"{examples / 'Pulumi.stray.yaml'}: gpt-oss-infra:deployments.low-latency.recipe: "
    )
    assert "stray" not in names and {"older", "b200"} <= set(eks)
