"""Model the mocker's timing tables with NVIDIA AISimulate (its AIConfigurator API).

Writes configs/mocker-timing/<profile>.yaml, the tables Dynamo's mocker reads.

For each profile of configs/mocker-timing/profiles.yaml (what it imitates: a real recipe's prefill and
decode workers at a GPU count), asks AISimulate (tools/aisimulate_driver.py, in .venv-trial) for prefill
TTFT at doubling prompt lengths up to the prefill worker's context length, and for the decode step's
latency on a grid of active KV tokens (doubling, up to the decode worker's estimated KV capacity) by
context length (doubling, up to its context length), the batch being their ratio as the mocker derives
it. Run by `make mocker-timing`; the .yaml files are committed, so the plan and the trial need no simulator.

    python -m gpt_oss_infra mocker-timing [--profile NAME] [--simulator-python .venv-trial/bin/python]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR, Catalog, load_catalog
from gpt_oss_infra.core.resolve.imitation import ImitatedWorker, imitated_worker
from gpt_oss_infra.core.resolve.modelled import WorkerPoint, quantization
from gpt_oss_infra.core.yaml_files import read_yaml
from gpt_oss_infra.tools.estimate import add_simulator_python, ask

ROOT = Path(__file__).resolve().parents[1]
TIMING_DIR = CONFIG_DIR / "mocker-timing"
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


def layout(worker: ImitatedWorker) -> dict[str, int]:
    """The worker's parallel layout in AISimulate's terms (tp; moeTp x moeEp = tp: MoE tensor and expert parallel)."""
    if worker.view.attention_data_parallel or worker.view.pipeline_parallel != 1:
        raise SystemExit(f"{worker.recipe} {worker.role}: attention DP and pipeline parallel are not imitated")
    tensor, expert = worker.view.tensor_parallel, worker.view.expert_parallel or 1
    return {"tp": tensor, "moeTp": tensor // expert, "moeEp": expert}


def decode_cells(worker: ImitatedWorker) -> tuple[list[int], list[int], list[list[tuple[int, int]]]]:
    """Active KV tokens, context lengths, and for each cell the (batch, context) to model: batch is
    active / context as the mocker derives it (at least 1, at most the worker's batch limit)."""
    active = doubling(SMALLEST, worker.kv_token_capacity)
    context = doubling(SMALLEST, worker.max_seq_len)
    cells = [
        [(min(max(1, round(kv / ctx)), worker.view.max_batch_size), min(ctx, kv)) for ctx in context] for kv in active
    ]
    return active, context, cells


def model_profile(name: str, spec: dict[str, Any], simulator_python: Path) -> dict[str, Any]:
    catalog = load_catalog()
    workers = {
        phase: imitated_worker(catalog, spec["recipe"], spec[phase]["role"], spec[phase]["gpus"])
        for phase in ("prefill", "decode")
    }
    layouts = {phase: layout(worker) for phase, worker in workers.items()}
    hardware = catalog.recipes[spec["recipe"]].hardware
    quants = {
        phase: quantization(catalog, hardware, WorkerPoint(worker.role, worker.gpus, 1, worker.view, worker.env))[0]
        for phase, worker in workers.items()
    }
    prefill_isl = doubling(SMALLEST, workers["prefill"].max_seq_len)
    active, context, cells = decode_cells(workers["decode"])
    distinct = sorted({cell for row in cells for cell in row})
    # static_ctx: one prefill of `isl` tokens (its TTFT); static_gen: one decode step of `batch` requests
    # at context `isl` (its TPOT, the inter-token latency).
    points = [("static_ctx", isl, 1, "prefill") for isl in prefill_isl] + [
        ("static_gen", ctx, batch, "decode") for batch, ctx in distinct
    ]
    system = workers["prefill"].hardware.aiconfigurator_system
    jobs = [
        {
            "kind": "estimate",
            "system": system,
            "inputs": {"mode": mode, "isl": isl, "osl": 1 if mode == "static_ctx" else 2, "batch_size": batch}
            | {"tp_size": layouts[phase]["tp"], "moe_tp_size": layouts[phase]["moeTp"]}
            | {"moe_ep_size": layouts[phase]["moeEp"], **quants[phase]},
        }
        for mode, isl, batch, phase in points
    ]
    print(f"{name}: {len(jobs)} points on {system}", file=sys.stderr)
    version, results = ask(jobs, catalog, simulator_python)
    database = results[0]["database"]
    ttft = [round(r["ttftMs"], DIGITS) for r in results[: len(prefill_isl)]]
    itl_by_cell = dict(zip(distinct, (round(r["tpotMs"], DIGITS) for r in results[len(prefill_isl) :]), strict=True))

    def described(phase: str) -> dict[str, Any]:
        worker = workers[phase]
        return {"role": worker.role, "gpus": worker.gpus, "layout": layouts[phase], "quantization": quants[phase]}

    return {
        "recipe": spec["recipe"],
        "modelledBy": {
            "tool": f"NVIDIA AISimulate {version}",
            "database": f"{catalog.aiconfigurator.backend} {database}",
            "system": system,
            "model": catalog.aiconfigurator.model,
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
    add_simulator_python(parser)
    args = parser.parse_args(argv)
    profiles = read_yaml(TIMING_DIR / "profiles.yaml")
    for name, spec in profiles.items():
        if args.profile in (None, name):
            stale = limit_problems(load_catalog(), name, spec)
            if stale:
                raise SystemExit("\n".join(stale))
            profile = model_profile(name, spec, args.simulator_python)
            header = HEADER
            body = yaml.safe_dump(profile, sort_keys=False, default_flow_style=None, width=120)
            (TIMING_DIR / f"{name}.yaml").write_text(header + body)
            print(f"wrote configs/mocker-timing/{name}.yaml", file=sys.stderr)


if __name__ == "__main__":
    main()
