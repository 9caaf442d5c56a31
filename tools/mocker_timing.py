"""Model the trial recipes' timing tables with NVIDIA AIConfigurator.

Writes configs/mocker-timing/<profile>.yaml, the tables Dynamo's mocker reads.

For each profile of configs/mocker-timing/profiles.yaml (what it imitates: a real recipe's prefill and
decode workers at a GPU count), asks AIConfigurator (tools/aiconfigurator_points.py, in its own venv)
for prefill TTFT at doubling prompt lengths up to the prefill worker's context length, and for the
decode step's latency on a grid of active KV tokens (doubling, up to the decode worker's estimated KV
capacity) by context length (doubling, up to its context length), the batch being their ratio as
the mocker derives it. Run by `make mocker-timing`, which installs aiconfigurator (about 850 MB) into
.venv-aic; the .yaml files are committed, so nothing else needs it.

    python -m tools.mocker_timing [--profile NAME] [--aic-python .venv-aic/bin/python]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR, Catalog, load_catalog
from gpt_oss_infra.core.resolve.imitation import ImitatedWorker, imitated_worker
from gpt_oss_infra.core.yaml_files import read_yaml

ROOT = Path(__file__).resolve().parents[1]
TIMING_DIR = CONFIG_DIR / "mocker-timing"
POINTS = ROOT / "tools" / "aiconfigurator_points.py"
SMALLEST = 64  # tokens: the grids start here (the mocker holds the first value below it)
DIGITS = 3  # of a millisecond, in the written tables
HEADER = (
    "# Modelled, not measured. Written by make mocker-timing (tools/mocker_timing.py)\n"
    "# from configs/mocker-timing/profiles.yaml: do not edit by hand.\n"
)


def doubling(start: int, stop: int) -> list[int]:
    """start, 2 x start, ... below stop, then stop itself."""
    values = []
    while start < stop:
        values.append(start)
        start *= 2
    return [*values, stop]


def layout(worker: ImitatedWorker, modelled: dict[str, int] | None) -> dict[str, int]:
    """AIConfigurator's parallel layout for the worker: the recipe's, or the profile's modelledLayout."""
    if modelled:
        return dict(modelled)
    if worker.view.attention_data_parallel or worker.view.pipeline_parallel != 1:
        raise SystemExit(f"{worker.recipe} {worker.role}: attention DP and pipeline parallel are not imitated")
    tensor, expert = worker.view.tensor_parallel, worker.view.expert_parallel or 1
    return {"tp": tensor, "moeTp": tensor // expert, "moeEp": expert}


def quantization(worker: ImitatedWorker) -> dict[str, str]:
    """The TensorRT-LLM worker's quantization in AIConfigurator's terms; left out, its model's own."""
    quant = {}
    if "OVERRIDE_QUANT_ALGO" in worker.env:  # TRT-LLM's override of the checkpoint's MoE quantization
        quant["moe_quant_mode"] = worker.env["OVERRIDE_QUANT_ALGO"].lower()
    if worker.view.kv_cache_dtype == "fp8":
        quant["kvcache_quant_mode"] = "fp8"
    return quant


def decode_cells(worker: ImitatedWorker) -> tuple[list[int], list[int], list[list[tuple[int, int]]]]:
    """Active KV tokens, context lengths, and for each cell the (batch, context) to model: batch is
    active / context as the mocker derives it (at least 1, at most the worker's batch limit)."""
    active = doubling(SMALLEST, worker.kv_token_capacity)
    context = doubling(SMALLEST, worker.max_seq_len)
    cells = [
        [(min(max(1, round(kv / ctx)), worker.view.max_batch_size), min(ctx, kv)) for ctx in context] for kv in active
    ]
    return active, context, cells


def model_profile(name: str, spec: dict[str, Any], aic_python: str) -> dict[str, Any]:
    catalog = load_catalog()
    workers = {
        phase: imitated_worker(catalog, spec["recipe"], spec[phase]["role"], spec[phase]["gpus"])
        for phase in ("prefill", "decode")
    }
    layouts = {phase: layout(workers[phase], spec[phase].get("modelledLayout")) for phase in workers}
    quants = {phase: quantization(workers[phase]) for phase in workers}
    prefill_isl = doubling(SMALLEST, workers["prefill"].max_seq_len)
    active, context, cells = decode_cells(workers["decode"])
    distinct = sorted({cell for row in cells for cell in row})
    points = [
        {"mode": "static_ctx", "isl": isl, "batch": 1, "layout": layouts["prefill"], "quant": quants["prefill"]}
        for isl in prefill_isl
    ] + [
        {"mode": "static_gen", "isl": ctx, "batch": batch, "layout": layouts["decode"], "quant": quants["decode"]}
        for batch, ctx in distinct
    ]
    hardware = workers["prefill"].hardware
    request = {
        "model": catalog.model.name,
        "system": hardware.aiconfigurator_system,
        "backend": catalog.recipes[spec["recipe"]].backend,
        "points": points,
    }
    print(f"{name}: {len(points)} points on {request['system']}", file=sys.stderr)
    answer = json.loads(
        subprocess.run(
            [aic_python, str(POINTS)], input=json.dumps(request), capture_output=True, text=True, check=True
        ).stdout
    )
    results = answer["points"]
    ttft = [round(r["ttftMs"], DIGITS) for r in results[: len(prefill_isl)]]
    itl_by_cell = dict(zip(distinct, (round(r["tpotMs"], DIGITS) for r in results[len(prefill_isl) :]), strict=True))

    def described(phase: str) -> dict[str, Any]:
        worker = workers[phase]
        described = {"role": worker.role, "gpus": worker.gpus, "layout": layouts[phase], "quantization": quants[phase]}
        return described | ({"why": " ".join(spec[phase]["why"].split())} if "why" in spec[phase] else {})

    return {
        "recipe": spec["recipe"],
        "modelledBy": {
            "tool": f"NVIDIA AIConfigurator {answer['aiconfigurator']}",
            "database": f"{request['backend']} {answer['database']}",
            "system": request["system"],
            "model": request["model"],
        },
        "prefill": described("prefill") | {"islTokens": prefill_isl, "ttftMs": ttft},
        "decode": described("decode")
        | {
            "maxKvTokens": workers["decode"].kv_token_capacity,
            "activeKvTokens": active,
            "contextTokens": context,
            "itlMs": [[itl_by_cell[cell] for cell in row] for row in cells],
        },
    }


def limit_problems(catalog: Catalog, name: str, spec: dict[str, Any]) -> list[str]:
    """Mocker recipes timed by this profile whose limits are not the imitated workers' (they must be:
    the tables are modelled for those workers), each with the value to write."""
    problems = []
    for recipe_name, recipe in catalog.recipes.items():
        for role, worker in recipe.workers.items():
            if worker.engine.get("planner_profile_data") != name:
                continue
            phase = "prefill" if role == "prefill" else "decode"  # an aggregated worker: the profile's decode
            imitated = imitated_worker(catalog, spec["recipe"], spec[phase]["role"], spec[phase]["gpus"])
            problems += [
                f"configs/recipes/{recipe_name}.yaml workers.{role}.engine.{key}: {worker.engine.get(key)!r}, but "
                f"{spec['recipe']}'s {imitated.role} worker at {imitated.gpus} GPU(s) has {value!r}"
                for key, value in imitated.mocker_limits().items()
                if worker.engine.get(key) != value
            ]
    return problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", help="one profile of configs/mocker-timing/profiles.yaml (default: all)")
    parser.add_argument(
        "--aic-python",
        default=str(ROOT / ".venv-aic" / "bin" / "python"),
        help="the Python that has aiconfigurator (default: the one make mocker-timing installs)",
    )
    args = parser.parse_args(argv)
    profiles = read_yaml(TIMING_DIR / "profiles.yaml")
    for name, spec in profiles.items():
        if args.profile in (None, name):
            stale = limit_problems(load_catalog(), name, spec)
            if stale:
                raise SystemExit("\n".join(stale))
            profile = model_profile(name, spec, args.aic_python)
            header = HEADER
            body = yaml.safe_dump(profile, sort_keys=False, default_flow_style=None, width=120)
            (TIMING_DIR / f"{name}.yaml").write_text(header + body)
            print(f"wrote configs/mocker-timing/{name}.yaml", file=sys.stderr)


if __name__ == "__main__":
    main()
