"""tools/dynamo_parsers.py: every command line of every graph, on every Dynamo release of the table,
parsed by that release's own argument parsers (its wheels from PyPI, in .venv-dynamo/<release>/)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.planner import PLANNER_COMPONENT
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import dynamo_parsers
from gpt_oss_infra.tools.dynamo_parsers import graph_command_lines, parse, python_of
from tests.support import dynamo_logging_configs, example_entries, on_release, stack_names_on

pytestmark = pytest.mark.end_to_end  # the slower tier (pyproject.toml markers)

RELEASES = sorted(load_catalog().dynamo_versions)


@pytest.fixture(scope="module", params=RELEASES)
def release(request, catalog):
    dynamo = catalog.dynamo_versions[request.param]
    assert python_of(dynamo).exists(), (
        f"no parser venv for Dynamo {dynamo.version}: "
        "`make test` makes it (python -m gpt_oss_infra dynamo-parsers install)"
    )
    return dynamo


def stack_lines(catalog, release_version: str, stack: str) -> list:
    """Its components' command lines, but the Planner's: the Planner's own start-up reads it and its config
    in the release's runtime venv (tests/tools/test_planner_upstream.py), beyond these small venvs."""
    raw = on_release(namespace_config(example_entries(stack)), catalog, release_version)
    built = build_stack(raw, catalog, with_hf_token=True, api_key_clients=["ci"])
    return [
        line
        for serving in built.serving
        for line in graph_command_lines(
            serving.graph, f"{stack}/{serving.deployment.name} (recipe {serving.deployment.recipe_name})"
        )
        if not line.where.endswith(f" {PLANNER_COMPONENT}")
    ]


def test_every_command_line_parses_on_its_release(catalog, release):
    """Every stack's graphs (every recipe, both router modes) rendered for the release, every component."""
    lines = [
        line
        for stack in stack_names_on(catalog, release.version)
        for line in stack_lines(catalog, release.version, stack)
    ]
    recipes = {re.search(r"\(recipe (\S+)\)", line.where)[1] for line in lines}
    runs_here = {n for n, r in catalog.recipes.items() if r.backend not in release.spec.unsupported_backends}
    assert recipes == runs_here  # every recipe the release runs was rendered and parsed
    publish = release.spec.publish_args["trtllm"]
    flags = {arg for line in lines for arg in line.argv}
    assert {*publish.kv_events, *publish.metrics} <= flags  # a KV-router worker, an observed one
    assert parse(release, lines) == {}


def test_a_misspelt_flag_in_a_recipe_fails_naming_the_recipe_and_the_flag(catalog, release):
    recipe = catalog.recipes["h200-agg-low-latency"]
    worker = recipe.workers["worker"]
    misspelt = worker.model_copy(update={"args": ["--dyn-reasonin-parser", "gpt_oss"]})
    broken = dataclasses.replace(
        catalog,
        recipes=catalog.recipes | {"h200-agg-low-latency": recipe.model_copy(update={"workers": {"worker": misspelt}})},
    )
    refused = parse(release, stack_lines(broken, release.version, "dev"))
    ((where, said),) = refused.items()
    assert "(recipe h200-agg-low-latency) TrtllmWorker" in where
    assert "--dyn-reasonin-parser" in said


@pytest.mark.parametrize("exiting", ["--help", "--version"])
def test_a_line_that_would_print_and_exit_is_refused(catalog, release, exiting):
    """Its parser exits 0 before reading the rest: never a pass."""
    (frontend, worker) = stack_lines(catalog, release.version, "dev")
    lines = [dataclasses.replace(line, argv=[*line.argv, exiting, "--no-such-flag"]) for line in (frontend, worker)]
    refused = parse(release, lines)
    assert set(refused) == {frontend.where, worker.where} and all(exiting in said for said in refused.values())


def test_a_value_the_parser_does_not_accept_is_refused(catalog, release):
    """An invalid choice, not only an unknown flag: the frontend's router mode."""
    (frontend, *_) = stack_lines(catalog, release.version, "dev")
    argv = [*frontend.argv]
    argv[argv.index("--router-mode") + 1] = "kv-aware"
    refused = parse(release, [dataclasses.replace(frontend, argv=argv)])
    assert "kv-aware" in refused[frontend.where]


def test_the_table_names_the_tensorrt_llm_the_release_is_built_with(release):
    """configs/dynamo/versions.yaml engineVersions.trtllm == the wheel's own `trtllm` extra pin."""
    requirements = subprocess.run(
        [str(python_of(release)), "-c", "import importlib.metadata as m; print('\\n'.join(m.requires('ai-dynamo')))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pinned = re.search(r"^tensorrt-llm==(\S+); extra == .trtllm.", requirements, re.MULTILINE)[1]
    assert pinned == release.spec.engine_versions["trtllm"]


def test_this_process_environment_does_not_reach_the_parsers(catalog, release, monkeypatch):
    """Only each pod's own variables: a DYN_* variable here neither breaks nor masks a line."""
    monkeypatch.setenv("DYN_HTTP_PORT", "not-a-port")
    assert parse(release, stack_lines(catalog, release.version, "dev")) == {}


def test_the_file_dynamos_logging_leaves_goes_with_the_parsers_scratch_folder(catalog, monkeypatch):
    """dynamo.frontend's start writes SGLang's logging config into the temporary directory and never deletes it:
    the driver's TMPDIR is parse's scratch folder (its working directory), removed with it. Seen in that folder
    as the driver ends, not by watching /tmp, where any other Dynamo process on the machine may write."""
    left_in_scratch: list[set[Path]] = []
    run = subprocess.run

    def run_and_look(command, **options):
        done = run(command, **options)
        assert options["env"].get("TMPDIR") == options["cwd"]
        left_in_scratch.append(dynamo_logging_configs(Path(options["cwd"])))
        return done

    monkeypatch.setattr(dynamo_parsers.subprocess, "run", run_and_look)
    release = catalog.dynamo_versions["1.6.1"]
    assert parse(release, stack_lines(catalog, release.version, "dev")) == {}
    ((left,),) = left_in_scratch  # one driver run, one file
    assert not left.exists()  # gone with the scratch folder
