"""Runs inside Dynamo 1.6.1's runtime venv (.venv-trial): the release's offline replay (dynamo.replay) of request
traces through mocker engines built from a rendered worker's command line by the mocker's own parser, Dynamo's
router and, where a run asks for it, Dynamo's Planner with the rendered Planner config. Standard library and
that release's `dynamo` package only. Every figure it returns is simulated.

    python replay_driver.py <request.json> <result.json>

request: {"workers": {role: {"args": the mocker's arguments, "files": {in-pod path: base64 content},
                             "gpus": the GPUs of the worker it stands in for}},
          "planner": the rendered PlannerConfig fields, "sla": {"ttftMs", "itlMs"},
          "traces": {name: mooncake-format rows}, "traceBlockSize": tokens per hash id,
          "runs": [{"name", "trace", "router": "kv_router" | "round_robin", "startupTimeS": seconds or null,
                    and one of "workers": {role: count} (a fixed size), "planner": true (the Planner scales
                    from its minimum, or from "from": {role: count}),
                    "oracle": {"intervalMs", "goal", "sizes": [{role: count}, ...]}},
                    or, for the highest rate a fixed size serves, {"name", "capacity": {"goal", "steps"},
                    "trace", "router", "workers"}]}
result:  {run name: figures}, each run's figures from its requests: how many, how many within both targets,
         p50/p99 TTFT and ITL (ms), worker-seconds by role; the Planner's scaling events; the oracle's
         chosen size per interval (the smallest of `sizes`, in order, whose requests met `goal`, replayed
         from empty workers: instant starts).
"""

import argparse
import base64
import copy
import json
import os
import sys
import tempfile


def engine_args(worker, scratch, startup_time_s):
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
    args = [moved.get(arg, arg) for arg in worker["args"]]
    if startup_time_s:
        args += ["--startup-time", str(startup_time_s)]
    # The Planner counts an engine's GPUs from its tensor parallel size (dynamo/replay/planner.py: _engine_caps)
    # against max_gpu_budget; the mocker's timing comes from its tables, whatever that size.
    return build_mocker_engine_args(parse_args(args)) | {"tensor_parallel_size": worker["gpus"]}


def percentile(values, share):
    """The nearest-rank percentile of `values` (None when there are none)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(-(-share * len(ordered) // 1)) - 1))]


def figures(requests, sla):
    """A run's figures from its requests (dynamo.replay's per-request records)."""
    done = [r for r in requests if r.get("terminal_status") == "completed"]
    ttft = [r["ttft_ms"] for r in done if r.get("ttft_ms") is not None]
    itl = [r["itl_ms"] for r in done if r.get("itl_ms") is not None]
    within = [r for r in done if r["ttft_ms"] <= sla["ttftMs"] and (r.get("itl_ms") or 0.0) <= sla["itlMs"]]
    return {
        "requests": len(requests),
        "completed": len(done),
        "withinSla": len(within),
        "ttftP50Ms": percentile(ttft, 0.5),
        "ttftP99Ms": percentile(ttft, 0.99),
        "itlP50Ms": percentile(itl, 0.5),
        "itlP99Ms": percentile(itl, 0.99),
    }


def worker_seconds(summary, sizes):
    """Worker-seconds by role: the replay's own accounting (its prefill and decode worker-seconds; an
    aggregated worker is counted as decode)."""
    if "worker" in sizes:
        return {"worker": summary.get("decode_worker_seconds") or 0.0}
    return {
        "prefill": summary.get("prefill_worker_seconds") or 0.0,
        "decode": summary.get("decode_worker_seconds") or 0.0,
    }


class Replayer:
    def __init__(self, request, scratch):
        from dynamo.replay.api import run_trace_replay

        self.request, self.scratch, self.run_trace_replay = request, scratch, run_trace_replay
        self.sla = request["sla"]
        self.disaggregated = "worker" not in request["workers"]
        self.traces = {}
        for name, rows in request["traces"].items():
            self.traces[name] = self.write(name, rows)
        self.built = {}  # start time -> each role's engine config: parsed and written once, not per replay

    def engines(self, startup_time_s):
        """Each role's engine config with this start time (a copy: the replay gets its own)."""
        if startup_time_s not in self.built:
            self.built[startup_time_s] = {
                role: engine_args(worker, self.scratch, startup_time_s)
                for role, worker in self.request["workers"].items()
            }
        return copy.deepcopy(self.built[startup_time_s])

    def write(self, name, rows):
        path = os.path.join(self.scratch, f"{name}.jsonl")
        with open(path, "w") as out:
            out.write("".join(json.dumps(row) + "\n" for row in rows))
        return path

    def replay(self, trace_path, router, sizes, startup_time_s=None, planner=None):
        engines = self.engines(startup_time_s)
        if self.disaggregated:
            shape = {"prefill_engine_args": engines["prefill"], "decode_engine_args": engines["decode"]}
            counts = {"num_prefill_workers": sizes["prefill"], "num_decode_workers": sizes["decode"]}
        else:
            shape, counts = {"extra_engine_args": engines["worker"]}, {"num_workers": sizes["worker"]}
        report = self.run_trace_replay(
            [trace_path],
            router_mode=router,
            trace_block_size=self.request["traceBlockSize"],
            sla_ttft_ms=self.sla["ttftMs"],
            sla_itl_ms=self.sla["itlMs"],
            capture_per_request=True,
            planner_config=planner,
            **shape,
            **counts,
        )
        found = report.to_dict()
        return found, figures(found["per_request"], self.sla) | {
            "workerSeconds": worker_seconds(found["summary"], sizes)
        }

    def run(self, spec):
        if "capacity" in spec:
            return self.capacity(spec)
        trace = self.traces[spec["trace"]]
        if "workers" in spec:
            return self.replay(trace, spec["router"], spec["workers"], spec.get("startupTimeS"))[1]
        if spec.get("planner"):
            # The replay applies the Planner's decisions itself (environment virtual) to its mocker engines.
            planner = self.request["planner"] | {"environment": "virtual", "backend": "mocker"}
            start = spec.get("from") or self.minimum(planner)
            found, result = self.replay(trace, spec["router"], start, spec.get("startupTimeS"), planner)
            return result | {"scalingEvents": (found.get("planner") or {}).get("scaling_events") or []}
        return self.oracle(spec)

    def capacity(self, spec):
        """The highest speed-up of the trace's arrivals (a Poisson trace sped up by f is one at f times the rate)
        that the fixed size serves with `goal` of its requests within the SLA: doubled while met, then bisected."""
        rows, goal = self.request["traces"][spec["trace"]], spec["capacity"]["goal"]
        tried = {}

        def met(factor):
            path = self.write("capacity", [row | {"timestamp": row["timestamp"] / factor} for row in rows])
            result = self.replay(path, spec["router"], spec["workers"])[1]
            tried[factor] = result["withinSla"] / result["requests"]
            return result["withinSla"] >= goal * result["requests"]

        low, high = 0.0, 1.0  # low: the highest factor met so far; high: the lowest missed
        while met(high):
            low, high = high, high * 2
        while low == 0.0 and high > 1 / 1024:  # even the trace's own rate is missed: halve until met
            high /= 2
            if met(high):
                low, high = high, high * 2
        for _ in range(spec["capacity"]["steps"] if low else 0):  # none met: factor 0, nothing to bisect
            middle = (low + high) / 2
            low, high = (middle, high) if met(middle) else (low, middle)
        return {"factor": low, "tried": {str(f): share for f, share in sorted(tried.items())}}

    def minimum(self, planner):
        if self.disaggregated:
            return {role: planner.get(f"{role}_min_endpoint", 1) for role in ("prefill", "decode")}
        return {"worker": planner.get("min_endpoint", 1)}

    def smallest_meeting(self, path, router, oracle, at):
        """The position in oracle["sizes"] of the smallest size that meets the goal on this trace, searched from
        `at` (the last interval's): up while missed, then down while the next smaller still meets; its
        replay's report; and whether it met the goal (not when even the largest missed)."""
        outcomes = {}

        def meets(position):
            if position not in outcomes:
                report, result = self.replay(path, router, oracle["sizes"][position])
                outcomes[position] = (result["withinSla"] >= oracle["goal"] * result["requests"], report)
            return outcomes[position][0]

        while not meets(at) and at + 1 < len(oracle["sizes"]):
            at += 1
        if meets(at):
            while at > 0 and meets(at - 1):
                at -= 1
        return at, outcomes[at][1], outcomes[at][0]

    def oracle(self, spec):
        """The fewest workers that meet the SLA interval by interval, each interval replayed alone from empty
        workers (instant starts, nothing queued from before): the floor an autoscaler is measured against."""
        oracle, rows = spec["oracle"], self.request["traces"][spec["trace"]]
        interval = oracle["intervalMs"]
        slices = {}
        for row in rows:
            slices.setdefault(int(row["timestamp"] // interval), []).append(row)
        chosen, requests, seconds, unmet, at = [], [], {}, 0, 0
        for index in range(int(max(row["timestamp"] for row in rows) // interval) + 1):
            found = slices.get(index, [])
            if not found:
                chosen.append(None)
                continue
            start = index * interval
            path = self.write("slice", [row | {"timestamp": row["timestamp"] - start} for row in found])
            at, report, met = self.smallest_meeting(path, spec["router"], oracle, at)
            unmet += not met  # not even the largest size met it: kept, and counted
            sizes = oracle["sizes"][at]
            chosen.append(sizes)
            requests += report["per_request"]
            for role, count in sizes.items():
                seconds[role] = seconds.get(role, 0.0) + count * interval / 1000
        return figures(requests, self.sla) | {"workerSeconds": seconds, "sizes": chosen, "unmetIntervals": unmet}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("request", help="JSON file: see the module's docstring")
    parser.add_argument("result", help="JSON file to write")
    args = parser.parse_args(argv)
    with open(args.request) as request_file:
        request = json.load(request_file)
    with tempfile.TemporaryDirectory() as scratch:
        replayer = Replayer(request, scratch)
        result = {spec["name"]: replayer.run(spec) for spec in request["runs"]}
    with open(args.result, "w") as out:
        json.dump(result, out)


if __name__ == "__main__":
    sys.exit(main())
