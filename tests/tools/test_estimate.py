"""make estimate and make recommend with the real NVIDIA AISimulate (.venv-trial, made by make test):
one recipe point and one search run again give what configs/estimates.yaml stores, and a recommended
recipe loads, fits and plans like every other. Each AISimulate run takes seconds."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR, load_catalog
from gpt_oss_infra.core.resolve import modelled
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import estimate, recommend
from tests.support import AISIMULATE_VERSION

pytestmark = [
    pytest.mark.end_to_end,
    pytest.mark.skipif(
        not estimate.SIMULATOR_PYTHON.exists(), reason="AISimulate is not installed: make test creates .venv-trial"
    ),
]


# An H200 point, and the B200 point whose decode worker needs the MoE tensor-parallel kernels that AISimulate's
# B200 database added (AIConfigurator 0.12.0 did not model it: docs/recipes.md).
POINTS = [("h200-agg-low-latency", "h200", 1), ("b200-disagg-1p4d", "b200", 5)]
SEARCHED = "h100-agg-long-context"  # 2 GPUs: the quickest search
# The tests sharing `asked` on one worker (make test's --dist loadgroup), so that AISimulate runs once.
ONE_RUN = pytest.mark.xdist_group("aisimulate")


# The search make recommend's test asks for, and its command line's arguments made from it.
RECOMMEND_SEARCH = argparse.Namespace(hardware="h100", gpus=2, ttft_ms=2000.0, tpot_ms=30.0, isl=4000, osl=1000)
RECOMMEND_ARGS = [f"--{name.replace('_', '-')}={value}" for name, value in vars(RECOMMEND_SEARCH).items()]


@pytest.fixture(scope="module")
def asked(catalog) -> dict[str, Any]:
    """Every question of the tests below, make recommend's search too, asked of one AISimulate run: starting
    it is most of a run's seconds (measured here: a run of one estimate took 8.5 s, of two 7.8 s)."""
    requests = {
        (name, gpus): modelled.estimate_request(
            catalog, hardware, catalog.recipes[name].traffic, modelled.recipe_workers(catalog, name, gpus)
        )
        for name, hardware, gpus in POINTS
    }
    jobs = [
        {"kind": "estimate", "system": request.system, "inputs": inputs}
        for request in requests.values()
        for inputs in (request.inputs, modelled.alone(request.inputs))
    ]
    experiments = modelled.search_experiments(catalog, SEARCHED)
    jobs.append({"kind": "search", "inputs": experiments, "top": catalog.aiconfigurator.search_top})
    recommend_job = {
        "kind": "search",
        "inputs": recommend.search_inputs(catalog, RECOMMEND_SEARCH),
        "top": catalog.aiconfigurator.search_top,
    }
    version, answers = estimate.ask([*jobs, recommend_job], catalog, estimate.SIMULATOR_PYTHON)
    assert len(answers) == len(jobs) + 1
    return {
        "version": version,
        "points": {
            point: (request, answers[2 * i], answers[2 * i + 1]) for i, (point, request) in enumerate(requests.items())
        },
        "search": (experiments, answers[len(jobs) - 1]),
        "recommend": (recommend_job, answers[-1]),
    }


@ONE_RUN
@pytest.mark.parametrize(("name", "gpus"), [(name, gpus) for name, _, gpus in POINTS])
def test_a_recipe_point_modelled_again_gives_the_stored_figures(catalog, asked, name, gpus):
    request, answer, alone = asked["points"][(name, gpus)]
    stored = catalog.estimates.recipes[name][gpus]
    assert f"NVIDIA AISimulate {asked['version']}" == catalog.estimates.tool
    point = estimate._point(request, answer, alone)
    assert point["figures"] == stored.figures.model_dump(by_alias=True, exclude_none=True)
    assert point["alone"] == stored.alone.model_dump(by_alias=True, exclude_none=True)
    assert point["database"] == stored.database


@ONE_RUN
def test_a_search_run_again_finds_the_stored_best_configurations(catalog, asked):
    experiments, answer = asked["search"]
    found = estimate._search(catalog, SEARCHED, experiments, answer)
    stored = catalog.estimates.searches[SEARCHED].model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)
    assert found == stored


@ONE_RUN
def test_make_recommend_writes_a_recipe_that_loads_fits_and_plans_like_every_other(tmp_path, asked, monkeypatch):
    """make recommend whole, its search answered from the shared AISimulate run, asked with its own inputs."""
    job, answer = asked["recommend"]

    def shared_run(jobs, catalog, simulator_python):
        assert (jobs, simulator_python) == ([job], estimate.SIMULATOR_PYTHON)  # what make recommend asks
        return asked["version"], [answer]

    monkeypatch.setattr(recommend, "ask", shared_run)
    recommend.main([*RECOMMEND_ARGS, "--no-estimate", "--out-dir", str(tmp_path)])
    (written,) = tmp_path.glob("*.yaml")
    assert written.name == "h100-recommended-agg-4000-1000.yaml"
    configs = Path(shutil.copytree(CONFIG_DIR, tmp_path / "configs"))
    shutil.copy(written, configs / "recipes" / written.name)
    catalog = load_catalog(configs)  # its engine fields checked like every recipe's
    recipe = catalog.recipes[written.stem]
    assert recipe.sources[0].startswith(
        f"[aisimulate] {AISIMULATE_VERSION} best configuration of `make recommend HARDWARE=h100"
    )
    assert (recipe.mode, recipe.goal, recipe.hardware) == ("aggregated", "max-throughput", "h100")
    stack = build_stack(recommend._trial_stack(written.stem, "h100", 1), catalog, with_hf_token=False)
    [deployment] = stack.deployments
    assert deployment.total_gpus == 2 and stack.serving[0].fits  # placed and fitted on one p5 node
    assert yaml.safe_load(written.read_text())["workers"]["worker"]["engine"]["moe_config"] == {"backend": "TRITON"}
