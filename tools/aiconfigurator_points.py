"""NVIDIA AIConfigurator's modelled latency at a list of points: run inside its own venv (.venv-aic).

Reads a JSON request on stdin, writes a JSON answer on stdout; imports nothing of this project, so it
runs where only aiconfigurator is installed. tools/mocker_timing.py is its caller.

Request: {"model": ..., "system": ..., "backend": ..., "points": [{"mode": "static_ctx" | "static_gen",
          "isl": int, "batch": int, "layout": {"tp", "moeTp", "moeEp"}, "quant": {...}}, ...]}
Answer:  {"aiconfigurator": version, "database": backend database version,
          "points": [{"ttftMs": float, "tpotMs": float}, ...]} (same order)

static_ctx is one prefill of `isl` tokens for `batch` requests (its TTFT); static_gen one decode step
of `batch` requests at context `isl` (its TPOT, the inter-token latency).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from importlib.metadata import version


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)  # the request is on stdin
    logging.disable(logging.WARNING)  # its notices about fallback data go to the log, not to our answer
    from aiconfigurator.cli.api import cli_estimate  # only in .venv-aic

    request = json.load(sys.stdin)
    answers, database = [], None
    for point in request["points"]:
        layout = point["layout"]
        result = cli_estimate(
            model_path=request["model"],
            system_name=request["system"],
            backend_name=request["backend"],
            mode=point["mode"],
            isl=point["isl"],
            osl=1 if point["mode"] == "static_ctx" else 2,
            batch_size=point["batch"],
            tp_size=layout["tp"],
            moe_tp_size=layout["moeTp"],
            moe_ep_size=layout["moeEp"],
            **point["quant"],
        )
        database = result.backend_version
        answers.append({"ttftMs": result.ttft, "tpotMs": result.tpot})
    json.dump({"aiconfigurator": version("aiconfigurator"), "database": database, "points": answers}, sys.stdout)


if __name__ == "__main__":
    main()
