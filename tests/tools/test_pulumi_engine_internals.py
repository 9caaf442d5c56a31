"""tools/pulumi_engine.py: the SDK internals it uses are still there, and still behave, in the
pinned SDK. When one of these fails after an upgrade, re-read that module against the new SDK."""

from __future__ import annotations

import contextvars
import importlib.metadata
import inspect
import re
from contextvars import ContextVar

import pulumi
import pulumi.resource
from pulumi.runtime import config as runtime_config

from gpt_oss_infra.tools import pulumi_engine
from gpt_oss_infra.tools.plan import ROOT

SDK_CHANGED = "the Pulumi SDK changed: re-check tools/pulumi_engine.py against it"


def test_the_installed_sdk_is_the_one_the_internals_were_read_from():
    pinned = re.search(r"^pulumi==(\S+)", (ROOT / "requirements.txt").read_text(), re.MULTILINE).group(1)
    assert pulumi_engine.PINNED_SDK == pinned == importlib.metadata.version("pulumi"), SDK_CHANGED


def test_the_internals_keep_their_shape():
    register = inspect.signature(pulumi.resource.register_resource)
    assert list(register.parameters)[:3] == ["res", "ty", "name"], SDK_CHANGED
    assert isinstance(runtime_config.CONFIG, ContextVar), SDK_CHANGED
    assert callable(pulumi_engine.MockMonitor.RegisterResource), SDK_CHANGED
    assert list(inspect.signature(pulumi.runtime.set_mocks).parameters)[5] == "monitor", SDK_CHANGED
    assert not inspect.signature(pulumi.runtime.resource._get_stack_trace).parameters, SDK_CHANGED


def _in_fresh_context(function):
    """Pulumi's settings and config live in context variables: a fresh context keeps them apart
    from every other test's."""
    return contextvars.Context().run(function)


class _NoCloud(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return f"{args.name}-id", args.inputs

    def call(self, args):
        raise NotImplementedError(args.token)


def test_a_program_runs_to_completion_with_its_construction_order_recorded():
    def run():
        pulumi.runtime.set_mocks(_NoCloud(), project="p", stack="s", preview=False)
        built = []

        def program():
            first = pulumi.CustomResource("test:index:Thing", "first", {"value": 1})
            second = pulumi.CustomResource("test:index:Thing", "second", {"value": first.id})
            built.extend([first, second])

        with pulumi_engine.construction_order() as order:
            pulumi_engine.run_program_function(program)
        return order, pulumi_engine.wait_for(built[1].id.future())

    order, second_id = _in_fresh_context(run)
    assert order == {("test:index:Thing", "first"): 0, ("test:index:Thing", "second"): 1}
    assert second_id == "second-id"
    assert pulumi.resource.register_resource.__name__ == "register_resource"  # restored afterwards
