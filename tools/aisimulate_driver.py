"""NVIDIA AISimulate's AIConfigurator API (`aisimulate.legacy_cli`), asked from .venv-trial: support, estimates
at a point, and searches.

Reads a JSON request on stdin, writes a JSON answer on stdout. Imports nothing of this project, so it
runs where only AISimulate is installed; tools/estimate.py, tools/recommend.py and tools/mocker_timing.py
are its callers, and build every request from the core (the exact inputs). AISimulate replaced the
deprecated AIConfigurator and keeps its API and system names; the offline replay (tools/replay_driver.py)
needs the same wheel, so one venv holds the one simulator.

Request: {"model": ..., "backend": ..., "jobs": [job, ...]}, each job one of
  {"kind": "support", "system": ...}
  {"kind": "estimate", "system": ..., "inputs": {<cli_estimate keyword arguments>}}
  {"kind": "search", "inputs": {"agg": {<experiment>}, "disagg": {<experiment>}}, "top": n}: cli_exp's
      experiments (its flat task config: serving_mode, system_name, total_gpus, isl, osl, ttft, tpot, quant)
  {"kind": "largest-batch", "system": ..., "inputs": {<cli_estimate arguments but batch_size>}, "largest": n}
Answer:  {"aisimulate": version, "answers": [answer, ...]} in the jobs' order, each either
  {"notModelled": "<AISimulate's reason>"} (it has no data for the point) or
  support:  {"aggregated": bool, "disaggregated": bool}
  estimate: {"database": version, "ttftMs", "tpotMs", "outputTokensPerSecondPerGpu",
             "tokensPerSecondPerUser", "concurrency", "gpus", "memoryGb": {role: GB per GPU}, "warning"}
  search:   {"modes": {experiment: [row, ...]}}: each row a configuration (its layout, batch, workers,
             figures, database), best first, each within the experiment's TTFT and TPOT targets; or
             {"notModelled": ..., "closest": row}: AISimulate returns its closest rows when none
             meets the TPOT target, and they are not configurations that meet it
  largest-batch: the estimate at the largest batch per rank up to n that fits the GPU's memory (no
             OOM, no KV cache warning), with its "batch"; or {"notModelled": ...} where none does
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
from functools import cache, partial
from importlib.metadata import version
from typing import Any

DIGITS = 3  # of a millisecond or a token per second, in the answers

# A search row's columns kept, by mode: AISimulate's (AIConfigurator's) names; "(p)"/"(d)" prefix the prefill and
# decode workers of a disaggregated row.
WORKER_COLUMNS = ["tp", "dp", "moe_tp", "moe_ep", "bs", "memory"]
FIGURE_COLUMNS = {
    "ttft": "ttftMs",
    "tpot": "tpotMs",
    "tokens/s/gpu_cluster": "tokensPerSecondPerGpu",  # over all the search's GPUs, every replica
    "tokens/s/user": "tokensPerSecondPerUser",
    "concurrency": "concurrency",
    "num_total_gpus": "gpus",  # of one replica
}


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)  # the request is on stdin
    logging.disable(logging.WARNING)  # its notices about fallback data go to the log, not to our answer
    read_yaml_with_libyaml()
    request = json.load(sys.stdin)
    answers = [_answer(request, job) for job in request["jobs"]]
    json.dump({"aisimulate": version("aisimulate"), "answers": answers}, sys.stdout)


def read_yaml_with_libyaml() -> None:
    """Have yaml.safe_load parse with LibYAML, where this PyYAML has it. AISimulate reads every system's YAML
    file with yaml.safe_load, PyYAML's pure-Python parser, each time it lists its databases (each search and
    estimate does); LibYAML's parser, under the same safe constructor and resolver, gives the same data.
    (Its other reads, yaml.load with yaml.SafeLoader, stay as they are: a class of its own subclasses that.)
    Measured here on make test's AISimulate run (two recipe points, two searches): 35.9 s, 27.8 s with this,
    the answers the same byte for byte."""
    import yaml

    if yaml.__with_libyaml__:
        yaml.safe_load = partial(yaml.load, Loader=yaml.CSafeLoader)


def _answer(request: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    from aisimulate_core.sdk.errors import NoFeasibleConfigError, PerfDataNotAvailableError  # only in .venv-trial

    try:
        kinds = {"support": _support, "estimate": _estimate, "search": _search, "largest-batch": _largest_batch}
        return kinds[job["kind"]](request, job)
    except (PerfDataNotAvailableError, NoFeasibleConfigError) as error:  # no kernel data; nothing meets the targets
        # Its database's place on this machine says nothing to a reader elsewhere: the system, backend, version do.
        reason = re.sub(r" at \S*/systems/data/(\S+)", r" in its \1 database", str(error))
        return {"notModelled": f"{type(error).__name__}: {reason}"}
    except RuntimeError as error:  # its own verdict that the weights and the batch's KV cache do not fit
        if not str(error).startswith("OOM"):
            raise
        return {"notModelled": str(error)}


def _support(request: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    from aisimulate.legacy_cli.api import cli_support

    found = cli_support(request["model"], job["system"], backend=request["backend"])
    return {"aggregated": bool(found.agg_supported), "disaggregated": bool(found.disagg_supported)}


def _estimate(request: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    from aisimulate.legacy_cli.api import cli_estimate

    result = cli_estimate(
        model_path=request["model"],
        system_name=job["system"],
        backend_name=request["backend"],
        backend_version=_database(job["system"], request["backend"]),
        **job["inputs"],
    )
    raw = result.raw
    memory = (
        {"prefill": raw["(p)memory"], "decode": raw["(d)memory"]}
        if job["inputs"].get("mode") == "disagg"
        else {"worker": raw["memory"]}
    )
    return {
        "database": result.backend_version,
        "ttftMs": _rounded(result.ttft),
        "tpotMs": _rounded(result.tpot),
        "outputTokensPerSecondPerGpu": _rounded(result.tokens_per_second_per_gpu),
        "tokensPerSecondPerUser": _rounded(result.tokens_per_second_per_user),
        "concurrency": _rounded(result.concurrency),
        "gpus": result.num_total_gpus,
        "memoryGb": {role: _rounded(value) for role, value in memory.items()},
        "warning": result.kv_cache_warning,
    }


@cache
def _database(system: str, backend: str) -> str | None:
    """The database version cli_estimate would pick by default (the latest for the system), found once: left
    to it, each call lists every system's databases again, 2 s a call here against 0.02 s with the version."""
    from aisimulate_core.sdk.perf_database import get_latest_database_version

    found: str | None = get_latest_database_version(system=system, backend=backend)
    return found


def _search(request: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    from aisimulate.legacy_cli.api import cli_exp

    # Each experiment's model and backend are the request's; a disaggregated one names them per role.
    common = {"model_path": request["model"], "backend_name": request["backend"]}
    experiments = {
        name: experiment
        | (common if experiment["serving_mode"] == "agg" else {f"{role}_{key}": value for role in ("prefill", "decode")
                                                              for key, value in common.items()})
        for name, experiment in job["inputs"].items()
    }  # fmt: skip
    result = cli_exp(config=experiments, top_n=job["top"])
    modes, closest = {}, []
    for mode, table in result.best_configs.items():
        rows = []
        for row in table.head(job["top"]).to_dict("records"):
            if mode == "disagg":
                workers = {
                    role: {column: row[f"({key}){column}"] for column in [*WORKER_COLUMNS, "workers"]}
                    for role, key in (("prefill", "p"), ("decode", "d"))
                }
            else:
                workers = {"worker": {column: row[column] for column in WORKER_COLUMNS}}
            figures = {name: _json(row[column]) for column, name in FIGURE_COLUMNS.items()}
            database = row.get("version") or row.get("(d)version")
            found = {"mode": mode, "workers": _json(workers), **figures, "database": database}
            targets = job["inputs"][mode]
            meets = found["ttftMs"] <= targets["ttft"] and found["tpotMs"] <= targets["tpot"]
            (rows if meets else closest).append(found)
        if rows:
            modes[mode] = rows
    if not modes:
        best = max(closest, key=lambda row: row["tokensPerSecondPerGpu"], default=None)
        return {"notModelled": "no configuration meets the latency targets", "closest": best}
    return {"modes": modes}


def _largest_batch(request: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """Doubling from 1 to the first batch that does not fit (or `largest`), then bisecting."""

    def at(batch: int) -> dict[str, Any] | None:
        answer = _answer(
            request, {"kind": "estimate", "system": job["system"], "inputs": job["inputs"] | {"batch_size": batch}}
        )
        return None if "notModelled" in answer or answer["warning"] else answer

    fits, too_big = None, None
    batch = 1
    while batch <= job["largest"]:
        answer = at(batch)
        if answer is None:
            too_big = batch
            break
        fits = (batch, answer)
        batch *= 2
    if fits is None:
        return {"notModelled": "even one sequence per rank does not fit the GPU's memory"}
    upper = too_big if too_big is not None else job["largest"] + 1
    low = fits[0]
    while upper - low > 1:
        middle = (low + upper) // 2
        answer = at(middle)
        if answer is None:
            upper = middle
        else:
            low, fits = middle, (middle, answer)
    return fits[1] | {"batch": fits[0]}


def _json(value: Any) -> Any:
    """A plain JSON value: numpy numbers as Python ones, rounded."""
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    if hasattr(value, "item"):
        value = value.item()
    return _rounded(value) if isinstance(value, float) else value


def _rounded(value: float | int) -> float | int:
    if isinstance(value, int) or not math.isfinite(value):
        return value
    rounded = round(value, DIGITS)
    return int(rounded) if rounded.is_integer() else rounded


if __name__ == "__main__":
    main()
