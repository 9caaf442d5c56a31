"""Runs inside Dynamo 1.6.1's runtime venv (.venv-trial): the release's offline replay (dynamo.replay) of a
request trace through mocker engines built from a rendered worker's command line by the mocker's own
parser, Dynamo's router, and, for the autoscaled run, Dynamo's Planner with the rendered Planner config.
Standard library and that release's `dynamo` package only. Every figure it returns is simulated.

    python replay_driver.py <request.json> <result.json>

request: {"workers": {role: {"args": the mocker's arguments, "files": {in-pod path: base64 content}}},
          "planner": the rendered PlannerConfig fields, "trace": mooncake-format rows, "router": "kv_router" or
          "round_robin", "static": [worker counts to replay at a fixed size]}
result:  {"static": {count: summary}, "planner": summary and its scaling events}
"""

import argparse
import base64
import json
import os
import sys
import tempfile

FIGURES = (
    "num_requests",
    "completed_requests",
    "goodput_completed_requests",
    "median_ttft_ms",
    "p99_ttft_ms",
    "median_itl_ms",
    "p99_itl_ms",
    "gpu_hours",
    "duration_ms",
)


def engine_args(worker, scratch):
    """The mocker's engine config from the rendered arguments, by its own parser (dynamo.mocker.args and
    mocker.config): the files they name (the timing tables) written here, their paths moved with them."""
    from dynamo.mocker.args import parse_args
    from dynamo.mocker.config import build_mocker_engine_args

    moved = {}
    for path, encoded in worker["files"].items():
        local = os.path.join(scratch, os.path.basename(path))
        with open(local, "wb") as out:
            out.write(base64.b64decode(encoded))
        moved[path] = local
    return build_mocker_engine_args(parse_args([moved.get(arg, arg) for arg in worker["args"]]))


def summary(report, keep_events):
    found = report.to_dict() if hasattr(report, "to_dict") else report
    figures = {name: found["summary"].get(name) for name in FIGURES}
    if keep_events:
        figures["scaling_events"] = (found.get("planner") or {}).get("scaling_events") or []
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("request", help="JSON file: see the module's docstring")
    parser.add_argument("result", help="JSON file to write")
    args = parser.parse_args(argv)
    with open(args.request) as request_file:
        request = json.load(request_file)
    from dynamo.replay.api import run_trace_replay

    with tempfile.TemporaryDirectory() as scratch:
        engines = {role: engine_args(worker, scratch) for role, worker in request["workers"].items()}
        trace = os.path.join(scratch, "trace.jsonl")
        with open(trace, "w") as out:
            out.write("".join(json.dumps(row) + "\n" for row in request["trace"]))
        planner = request["planner"]
        disaggregated = planner["mode"] == "disagg"
        sla = {"sla_ttft_ms": planner["ttft_ms"], "sla_itl_ms": planner["itl_ms"]}
        if disaggregated:
            shape = {"prefill_engine_args": engines["prefill"], "decode_engine_args": engines["decode"]}
        else:
            shape = {"extra_engine_args": engines["worker"]}

        def replay(count, **options):
            sizes = {"num_prefill_workers": count, "num_decode_workers": count} if disaggregated else {}
            sizes = sizes or {"num_workers": count}
            return run_trace_replay([trace], router_mode=request["router"], **shape, **sizes, **sla, **options)

        result = {"static": {str(count): summary(replay(count), False) for count in request["static"]}}
        # The replay applies the Planner's decisions itself (environment virtual) to its mocker engines.
        replayed = planner | {"environment": "virtual", "backend": "mocker"}
        start = planner.get("min_endpoint", 1)
        result["planner"] = summary(replay(start, planner_config=replayed), True)
    with open(args.result, "w") as out:
        json.dump(result, out)


if __name__ == "__main__":
    sys.exit(main())
