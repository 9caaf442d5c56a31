"""`make estimate`: NVIDIA AISimulate's modelled figures for every recipe, into configs/estimates.yaml.

For each GPU recipe and each worker GPU count it allows, the recipe's own point
(core/resolve/modelled.py: layout, batch, lengths, KV cache fraction, quantization) is sent to
AISimulate's AIConfigurator API (tools/aisimulate_driver.py, in .venv-trial) and its TTFT, TPOT, throughput
per GPU and per user and GPU memory are stored beside those exact inputs. Also: what it supports
per hardware type, the best configurations at each recipe's default GPUs, lengths and its goal's
latency targets (configs/aiconfigurator.yaml), and the calibration against NVIDIA's published
max-load figures (configs/performance.yaml `maxLoad`). The plan reads the stored file only.

    python -m gpt_oss_infra estimate [--recipe NAME ...] [--skip-search] [--skip-calibration]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR, Catalog, load_catalog
from gpt_oss_infra.core.inputs.estimates import MaxLoadFigure, SearchRow
from gpt_oss_infra.core.report import figures
from gpt_oss_infra.core.resolve import modelled
from gpt_oss_infra.core.yaml_files import read_yaml
from gpt_oss_infra.tools.generated_blocks import write_block

ROOT = Path(__file__).resolve().parents[1]
ESTIMATES = CONFIG_DIR / "estimates.yaml"
DRIVER = ROOT / "tools" / "aisimulate_driver.py"
# AISimulate is installed with the Dynamo release the trial and the replay run (requirements-trial.txt).
SIMULATOR_PYTHON = ROOT / ".venv-trial" / "bin" / "python"
HEADER = (
    "# Modelled, not measured: NVIDIA AISimulate's figures, each beside the exact inputs it was modelled\n"
    "# at (configs/aiconfigurator.yaml says how it is asked). Written by make estimate (tools/estimate.py):\n"
    "# do not edit by hand. A recipe whose point changes fails make test until make estimate runs again.\n"
)


def add_simulator_python(parser: argparse.ArgumentParser) -> None:
    """The option every command that asks AISimulate takes (make estimate, make recommend, make mocker-timing)."""
    parser.add_argument(
        "--simulator-python",
        type=Path,
        default=SIMULATOR_PYTHON,
        help="the Python that has aisimulate (default: the one make test installs)",
    )


def ask(jobs: list[dict[str, Any]], catalog: Catalog, simulator_python: Path) -> tuple[str, list[dict[str, Any]]]:
    """AISimulate's answers to `jobs`, in one run of its venv's Python (its databases load once)."""
    settings = catalog.aiconfigurator
    request = {"model": settings.model, "backend": settings.backend, "jobs": jobs}
    done = subprocess.run(
        [str(simulator_python), str(DRIVER)], input=json.dumps(request), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"AISimulate failed:\n{done.stderr[-3000:]}")
    answer = json.loads(done.stdout)
    return answer["aisimulate"], answer["answers"]


def recipe_requests(catalog: Catalog, names: list[str]) -> dict[tuple[str, int], modelled.ModelledRequest]:
    """Each recipe's point at each GPU count it allows, keyed (recipe, GPUs)."""
    requests = {}
    for name, counts in modelled.modelled_gpu_counts(catalog).items():
        if name not in names:
            continue
        recipe = catalog.recipes[name]
        for gpus in counts:
            workers = modelled.recipe_workers(catalog, name, gpus)
            requests[(name, gpus)] = modelled.estimate_request(catalog, recipe.hardware, recipe.traffic, workers)
    return requests


def calibration_inputs(catalog: Catalog, figure: MaxLoadFigure, batch: int | None = None) -> dict[str, Any]:
    """AISimulate's inputs at a published max-load layout (and a batch per rank, where given)."""
    sizes = modelled.parallel_layout(figure.gpus, figure.gpus, figure.attention_data_parallel)  # EP over every GPU
    moe_mode, _ = modelled.moe_quant_mode(catalog, figure.hardware, figure.moe_backend, {})
    inputs = {
        "mode": modelled.AGGREGATED,
        "isl": figure.input_tokens,
        "osl": figure.output_tokens,
        "tp_size": sizes["tp"],
        "attention_dp_size": sizes["dp"],
        "moe_tp_size": sizes["moe_tp"],
        "moe_ep_size": sizes["moe_ep"],
        **({"batch_size": batch} if batch is not None else {}),
        "free_gpu_memory_fraction": catalog.aiconfigurator.calibration.kv_cache_fraction,
        "moe_quant_mode": moe_mode,
    }
    return inputs | ({"kvcache_quant_mode": "fp8"} if figure.kv_cache_dtype == "fp8" else {})


def estimate(
    catalog: Catalog, names: list[str], search: bool, calibrate: bool, simulator_python: Path
) -> dict[str, Any]:
    """The estimates file's content for `names`, and what is kept of the current file for the other
    recipes that still exist."""
    settings = catalog.aiconfigurator
    current = read_yaml(ESTIMATES) or {}
    systems = {name: entry.aiconfigurator_system for name, entry in catalog.hardware.items()}
    requests = recipe_requests(catalog, names)
    asked = {key: request for key, request in requests.items() if request.not_modelled is None}
    searched = {name: modelled.search_experiments(catalog, name) for name in names if search}
    figures = catalog.performance.max_load if calibrate else []
    jobs = [{"kind": "support", "system": system} for system in systems.values()]
    jobs += [
        {"kind": "estimate", "system": r.system, "inputs": inputs}
        for r in asked.values()
        for inputs in (r.inputs, modelled.alone(r.inputs))
    ]
    jobs += [{"kind": "search", "inputs": found, "top": settings.search_top} for found in searched.values()]
    jobs += [
        {
            "kind": "largest-batch",
            "system": systems[f.hardware],
            "inputs": calibration_inputs(catalog, f),
            "largest": settings.calibration.largest_batch,
        }
        for f in figures
    ]
    version, answers = ask(jobs, catalog, simulator_python)
    answers = iter(answers)
    support = {hardware: {"system": system, **next(answers)} for hardware, system in systems.items()}

    def kept(section: str, replaced) -> dict[str, Any]:
        return {
            name: found
            for name, found in (current.get(section) or {}).items()
            if name in catalog.recipes and name not in replaced
        }

    recipes = {name: dict(points) for name, points in kept("recipes", names).items()}
    for (name, gpus), request in requests.items():
        if (name, gpus) in asked:
            answer, alone = next(answers), next(answers)
        else:
            answer, alone = {"notModelled": request.not_modelled}, {}
        recipes.setdefault(name, {})[gpus] = _point(request, answer, alone)
    searches = kept("searches", searched)
    for name, experiments in searched.items():
        searches[name] = _search(catalog, name, experiments, next(answers))
    calibration = [] if calibrate else (current.get("calibration") or [])
    for figure in figures:
        calibration.append(_calibration(catalog, figure, systems[figure.hardware], next(answers)))
    return {
        "tool": f"NVIDIA AISimulate {version}",
        "support": support,
        "recipes": {name: recipes[name] for name in sorted(recipes)},
        "searches": {name: searches[name] for name in sorted(searches)},
        "calibration": calibration,
    }


def _point(request: modelled.ModelledRequest, answer: dict[str, Any], alone: dict[str, Any]) -> dict[str, Any]:
    """A stored point: its figures, and those of one request alone at the same point where AISimulate
    gave them (modelled.alone)."""
    point: dict[str, Any] = {"system": request.system, "inputs": request.inputs}
    if request.not_inputs:
        point["notInputs"] = request.not_inputs
    if "notModelled" in answer:
        return point | {"notModelled": answer["notModelled"]}
    point |= {"database": answer["database"], "figures": _figures(answer)}
    return point | ({"alone": _figures(alone)} if "notModelled" not in alone else {})


def _figures(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if value is not None and key != "database"}


def _search(catalog: Catalog, name: str, experiments: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    found = {
        "goal": catalog.recipes[name].goal,
        "system": experiments[modelled.AGGREGATED]["system_name"],
        "inputs": experiments,
    }
    if "notModelled" in answer:
        closest = answer.get("closest")
        total = experiments[modelled.AGGREGATED]["total_gpus"]
        why = answer["notModelled"] + (
            f"; the closest: {figures.describe(SearchRow.model_validate(closest), total)}" if closest else ""
        )
        return found | {"notModelled": why}
    rows = [row for mode_rows in answer["modes"].values() for row in mode_rows]
    return found | {"best": sorted(rows, key=lambda row: -row["tokensPerSecondPerGpu"])}


def _calibration(catalog: Catalog, figure: MaxLoadFigure, system: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The published figure beside AISimulate's at the largest batch that fits the GPU's memory."""
    point = {
        "hardware": figure.hardware,
        "layout": figure.layout,
        "inputTokens": figure.input_tokens,
        "outputTokens": figure.output_tokens,
        "publishedTokensPerSecondPerGpu": figure.output_tokens_per_second_per_gpu,
        "source": figure.source,
        "system": system,
    }
    if "notModelled" in answer:
        return point | {"notModelled": answer["notModelled"]}
    return point | {
        "inputs": calibration_inputs(catalog, figure, answer["batch"]),
        "database": answer["database"],
        "modelledTokensPerSecondPerGpu": answer["outputTokensPerSecondPerGpu"],
    }


def write(content: dict[str, Any], path: Path) -> None:
    body = yaml.safe_dump(content, sort_keys=False, default_flow_style=None, width=120)
    path.write_text(HEADER + body)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", action="append", help="only this recipe (repeat for more; default: every one)")
    parser.add_argument("--skip-search", action="store_true", help="keep the stored best-configuration searches")
    parser.add_argument("--skip-calibration", action="store_true", help="keep the stored calibration")
    add_simulator_python(parser)
    parser.add_argument("--out", type=Path, default=ESTIMATES, help="where to write (default: configs/estimates.yaml)")
    args = parser.parse_args(argv)
    catalog = load_catalog(cached=False)  # make recommend may have just written a recipe
    known = sorted(modelled.modelled_gpu_counts(catalog))
    names = args.recipe or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise SystemExit(f"no GPU recipe {', '.join(unknown)}; GPU recipes: {', '.join(known)}")
    start = time.perf_counter()
    content = estimate(catalog, names, not args.skip_search, not args.skip_calibration, args.simulator_python)
    write(content, args.out)
    if args.out == ESTIMATES:
        write_recipes_page(load_catalog(cached=False))  # with the estimates just written
    points = sum(len(points) for name, points in content["recipes"].items() if name in names)
    print(
        f"wrote {args.out}: {points} points of {len(names)} recipes"
        + ("" if args.skip_search else ", their searches")
        + ("" if args.skip_calibration else ", the calibration")
        + f" in {time.perf_counter() - start:.0f} s ({content['tool']})",
        file=sys.stderr,
    )


RECIPES_PAGE = ROOT / "docs" / "recipes.md"
PAGE_BEGIN, PAGE_END = "<!-- make estimate: begin -->", "<!-- make estimate: end -->"
PRICE_REGION = "us-east-2"  # the dev stack's region (configs/prices.yaml keeps the same EC2 prices in all three)


def page_tables(catalog: Catalog) -> str:
    """docs/recipes.md's modelled figures, calibration and best-configuration tables, from configs/estimates.yaml."""
    estimates = catalog.estimates
    lines = [
        f"Modelled by {estimates.tool} (trtllm database versions in each row's basis in the plan); "
        f"$ per million output tokens at the On-Demand price of a GPU in {PRICE_REGION} (its node's price / its GPUs):",
        "",
        "| recipe | GPUs | traffic @ concurrency | TTFT ms | TPOT ms | tok/s/GPU | tok/s/user | $/M tokens |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    prices = catalog.prices.regions[PRICE_REGION].ec2
    for name, points in estimates.recipes.items():
        recipe = catalog.recipes[name]
        hardware = catalog.hardware[recipe.hardware]
        instance = hardware.instance_types[hardware.default_instance_type]
        node_price = prices.get(hardware.default_instance_type)
        for gpus, point in points.items():
            traffic = recipe.traffic
            shape = f"{traffic.input_tokens}/{traffic.output_tokens} @ {traffic.concurrency_per_gpu * gpus:,}"
            if point.figures is None:
                reason = point.not_modelled.split(":")[0]
                lines.append(f"| `{name}` | {gpus} | {shape} | not modelled: {reason} (configs/estimates.yaml) ||||||")
                continue
            f = point.figures
            per_million = (
                "unknown"
                if node_price is None
                else f"${node_price / instance.gpus_per_node / (f.output_tokens_per_second_per_gpu * 3600) * 1e6:,.2f}"
            )
            lines.append(
                f"| `{name}` | {gpus} | {shape} | {f.ttft_ms:,.0f} | {f.tpot_ms:.1f} | "
                f"{f.output_tokens_per_second_per_gpu:,.0f} | {f.tokens_per_second_per_user:,.1f} | {per_million} |"
            )
    lines += [
        "",
        "**Calibration** against NVIDIA's published max-load figures ([trtllm-perf-overview], trtllm-bench, "
        "every request queued at once): AISimulate at the same layout, MoE backend and KV cache dtype, "
        f"with the largest batch per rank up to {catalog.aiconfigurator.calibration.largest_batch} that it "
        "finds fits the GPU's memory (no OOM, no KV cache warning; doubling, then bisecting) at KV cache "
        f"fraction {catalog.aiconfigurator.calibration.kv_cache_fraction}:",
        "",
        "| hardware | layout | ISL/OSL | published tok/s/GPU | modelled tok/s/GPU (batch per rank) | ratio |",
        "|---|---|---|---:|---:|---:|",
    ]
    for point in estimates.calibration:
        published = point.published_tokens_per_second_per_gpu
        shape = f"{point.input_tokens}/{point.output_tokens}"
        if point.modelled_tokens_per_second_per_gpu is None:
            lines.append(f"| {point.hardware} | {point.layout} | {shape} | {published:,.0f} | not modelled | |")
            continue
        modelled_figure = point.modelled_tokens_per_second_per_gpu
        lines.append(
            f"| {point.hardware} | {point.layout} | {shape} | {published:,.0f} | "
            f"{modelled_figure:,.0f} ({point.inputs['batch_size']}) | {modelled_figure / published:.2f} |"
        )
    lines += [
        "",
        "**Against the best configuration** AISimulate finds at each recipe's default GPUs, lengths, "
        "quantization, KV cache fraction and its goal's latency targets (configs/aiconfigurator.yaml), "
        "aggregated or disaggregated, at any concurrency (its aggregated search tries up to 512 sequences per rank):",
        "",
        "| recipe | goal: targets | recipe tok/s/GPU (meets targets) | best configuration | recipe / best |",
        "|---|---|---:|---|---:|",
    ]
    for name, search in estimates.searches.items():
        recipe = catalog.recipes[name]
        gpus = search.inputs[modelled.AGGREGATED]["total_gpus"]
        key = gpus if recipe.mode == "disaggregated" else recipe.workers["worker"].gpus.default
        point = estimates.recipes[name][key].figures
        own = (
            {"tokensPerSecondPerGpu": point.output_tokens_per_second_per_gpu, "ttftMs": point.ttft_ms,
             "tpotMs": point.tpot_ms}
            if point
            else {}
        )  # fmt: skip
        compared = figures.against_best(catalog, name, gpus, own)
        where = f"{compared['goal']}: {compared['targets']}"
        if "fractionOfBest" not in compared:
            lines.append(f"| `{name}` | {where} | not modelled | {compared['best']} | |")
            continue
        verdict = f"{compared['fractionOfBest']:.2f}" + (" **flagged**" if compared["flagged"] else "")
        meets = "yes" if compared["meetsTargets"] else "no"
        lines.append(
            f"| `{name}` | {where} | {own['tokensPerSecondPerGpu']:,.0f} ({meets}) | {compared['best']} | {verdict} |"
        )
    return "\n".join(lines)


def write_recipes_page(catalog: Catalog) -> None:
    """docs/recipes.md's block between the markers, from the stored estimates."""
    write_block(RECIPES_PAGE, PAGE_BEGIN, PAGE_END, page_tables(catalog))


if __name__ == "__main__":
    main()
