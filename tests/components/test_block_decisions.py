"""What the program's blocks made so far is the program run's own: a later run in the same process never sees it."""

from __future__ import annotations

import gc

import pulumi

from gpt_oss_infra.components import block_decisions


class Root:
    """A stand-in for a run's root resource."""


def test_what_a_run_recorded_goes_with_its_root_resource(monkeypatch):
    """Kept by id(root), an earlier run's records reached a later run whose root Python had given the same id: a
    DynamoPlatform was refused as made twice by itself, in 6 of 30 sequential runs of one test (a reviewer's)."""
    made: block_decisions._PerProgram[dict[str, str]] = block_decisions._PerProgram(dict)
    runs = [Root()]  # the root resource of the run going on: the last
    monkeypatch.setattr(pulumi.runtime, "get_root_resource", lambda: runs[-1])
    made.get()["dynamo"] = "DynamoPlatform 'dynamo'"
    assert made.get() == {"dynamo": "DynamoPlatform 'dynamo'"}
    runs.append(Root())
    assert made.get() == {}
    del runs[0]
    gc.collect()
    assert len(made._runs) == 1  # only the second run's: the first went with its root


def test_a_component_provider_serves_one_program_with_no_root(monkeypatch):
    made: block_decisions._PerProgram[dict[str, str]] = block_decisions._PerProgram(dict)
    monkeypatch.setattr(pulumi.runtime, "get_root_resource", lambda: None)
    made.get()["gpu"] = "GpuNodePool 'gpu'"
    assert made.get() == {"gpu": "GpuNodePool 'gpu'"}
