"""make simulate: what autoscaling would save, and cost in SLA, for every shipped deployment, before a GPU is paid for.

For each GPU deployment of the shipped stacks (Pulumi.<stack>.yaml and configs/examples/), Dynamo 1.6.1's
offline replay (dynamo.replay, in .venv-trial: tools/replay_driver.py) runs mocker engines with the limits of
the deployment's workers (core/resolve/imitation.py) and the timing NVIDIA AISimulate modelled for them
(configs/mocker-timing/), behind the deployment's router, on traces generated from configs/simulation.yaml
(tools/traces.py):
- a day-shaped trace: static at the peak size, the Planner with its rendered config (new workers serving at
  once, and after a real start delay), and the oracle (the fewest workers that meet the SLA hour by hour,
  with instant starts);
- the recipe's steady traffic: static, the Planner, the oracle;
- the steady traffic with shared prompt prefixes: KV-aware routing against round-robin.
A deployment with `autoscaling` is replayed within its bounds; one without, as if it had them: 1 up to what
its node pool holds, the pool to itself ("what if"). Results go to configs/simulated.yaml, which the plan
summary quotes; every figure is simulated, with the tool and version named.

    python -m gpt_oss_infra simulate [--stack NAME] [--deployment NAME] [--write-traces DIR]
"""

from __future__ import annotations

import argparse
import base64
import copy
import dataclasses
import hashlib
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpt_oss_infra.core.backends.mocker import TIMING_FLAG, MockerBackend
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import Catalog, load_catalog
from gpt_oss_infra.core.inputs.config import EksClusterConfig, namespace_config
from gpt_oss_infra.core.inputs.simulated import Simulated, SimulatedDeployment, SimulatedMatch, SimulatedRun
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.render.planner import CONFIG_FILE
from gpt_oss_infra.core.render.stack_objects import Serving, Stack
from gpt_oss_infra.core.report.simulated import change, deployment_match, kept
from gpt_oss_infra.core.resolve import cost, modelled
from gpt_oss_infra.core.resolve.imitation import imitated_worker
from gpt_oss_infra.core.resolve.recipes import ResolvedDeployment
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.core.yaml_files import read_yaml
from gpt_oss_infra.tools import traces
from gpt_oss_infra.tools.critical_path import load_phases
from gpt_oss_infra.tools.generated_blocks import write_block
from gpt_oss_infra.tools.plan import ROOT, find_program, stack_config_entries

SETTINGS = CONFIG_DIR / "simulation.yaml"
RESULTS = CONFIG_DIR / "simulated.yaml"
DRIVER = ROOT / "tools" / "replay_driver.py"
REPLAY_PYTHON = ROOT / ".venv-trial" / "bin" / "python"
CACHE = ROOT / "build" / "simulate"
TOOL = "Dynamo 1.6.1 offline replay (dynamo.replay), mocker engines"
TABLES_IN_POD = "/timing"  # where the mocker arguments name the timing tables; the driver moves them
ROUTERS = {"kv": "kv_router", "round-robin": "round_robin"}
HEADER = (
    "# Simulated, not measured: Dynamo 1.6.1's offline replay of configs/simulation.yaml's traces through mocker\n"
    "# engines timed by configs/mocker-timing/. Written by make simulate (tools/simulate.py): do not edit by hand.\n"
)


@dataclass(frozen=True)
class Place:
    """Where a stack runs, for its price: its AWS region, and whether it creates its cluster (an existing
    cluster's nodes are billed to that cluster)."""

    region: str | None
    created: bool


@dataclass(frozen=True)
class Case:
    """One deployment to replay: the deployment with autoscaling (its own, or the what-if), its Planner config."""

    stack: str
    name: str
    deployment: ResolvedDeployment
    planner: dict[str, Any]
    what_if: bool
    place: Place
    configured: dict[str, int]  # each role's replicas as the stack file has them (an autoscaled one: its maximum)


def shipped_stacks() -> list[str]:
    """Every shipped stack file: the root's and configs/examples/'s."""
    files = sorted(ROOT.glob("Pulumi.*.yaml")) + sorted((CONFIG_DIR / "examples").glob("Pulumi.*.yaml"))
    return [file.name.removeprefix("Pulumi.").removesuffix(".yaml") for file in files]


@dataclass(frozen=True)
class StackInput:
    """A stack file as the core receives it: its config, its API key clients (names only), its AWS region."""

    raw: dict[str, Any]
    clients: list[str]
    region: str | None

    @classmethod
    def read(cls, stack: str) -> StackInput:
        entries = stack_config_entries(find_program(stack, ROOT).stack_file)
        clients = sorted(entries.get("gpt-oss-infra:apiKeys") or {})
        return cls(namespace_config(entries), clients, entries.get("aws:region"))

    def build(self, catalog: Catalog, raw: dict[str, Any] | None = None) -> Stack:
        config = self.raw if raw is None else raw
        return build_stack(config, catalog, with_hf_token=False, api_key_clients=self.clients, region=self.region)


NOTHING_TO_SCALE = "its node pool holds one of its workers (or prefill-and-decode pairs): nothing to scale"


def cases(catalog: Catalog, stack_filter: str | None = None) -> tuple[list[Case], dict[str, str]]:
    """The deployments to replay, and those that cannot be (stack/deployment -> why)."""
    found, skipped = [], {}
    for stack in shipped_stacks():
        if stack_filter not in (None, stack):
            continue
        stack_input = StackInput.read(stack)
        built = stack_input.build(catalog)
        place = Place(stack_input.region, isinstance(built.config.cluster, EksClusterConfig))
        for serving in built.serving:
            deployment, key = serving.deployment, f"{stack}/{serving.deployment.name}"
            if deployment.pool is None:
                skipped[key] = "runs no GPU (a simulated engine: make trial serves it)"
                continue
            if serving.planner_config is not None:
                replayed, what_if = serving, False
                configured = {worker.role: worker.most_replicas for worker in deployment.workers}
            else:
                # First whether scaling it would make sense at all, then whether the mocker can imitate it.
                scaled, refusal = _what_if_serving(stack_input, deployment, catalog)
                if scaled is None:
                    skipped[key] = f"its what-if autoscaling is refused: {refusal}"
                    continue
                if all(w.scaling and w.scaling.max_replicas == 1 for w in scaled.deployment.workers):
                    skipped[key] = NOTHING_TO_SCALE
                    continue
                replayed, what_if = scaled, True
                configured = {worker.role: worker.replicas for worker in deployment.workers}
            why_not = _not_imitated(catalog, deployment)
            if why_not:
                skipped[key] = why_not
                continue
            assert replayed.planner_config is not None
            planner = json.loads(replayed.planner_config["data"][CONFIG_FILE])
            found.append(Case(stack, deployment.name, replayed.deployment, planner, what_if, place, configured))
    return found, skipped


def _not_imitated(catalog: Catalog, deployment: ResolvedDeployment) -> str | None:
    """Why the mocker cannot stand in for this deployment's workers, if it cannot."""
    if modelled.timing_tables_for(catalog, deployment) is not None:
        return None
    if any(deployment.backend.view(worker.engine).attention_data_parallel for worker in deployment.workers):
        return (
            "attention data parallelism: the mocker's timing tables imitate tensor and expert parallel workers "
            "only (tools/mocker_timing.py)"
        )
    return "no timing tables for its workers: add a profile to configs/mocker-timing/profiles.yaml, make mocker-timing"


def _what_if_serving(
    stack_input: StackInput, deployment: ResolvedDeployment, catalog: Catalog
) -> tuple[Serving | None, str]:
    """The deployment alone on its pool, autoscaled from 1 to as many of its workers (or prefill-and-decode
    pairs) as the pool's GPUs hold, fewer while the stack's checks refuse that many (a disaggregated graph's
    every split of its GPU budget must place); or None and the last refusal."""
    pool_gpus = deployment.gpu_pool.total_gpus
    refusal = ""
    for sets in range(max(1, pool_gpus // sum(worker.gpus for worker in deployment.workers)), 0, -1):
        try:
            (scaled,) = stack_input.build(catalog, _what_if(stack_input.raw, deployment, catalog, sets)).serving
        except ConfigError as refused:
            refusal = "; ".join(problem.message for problem in refused.problems)
            continue
        return scaled, ""
    return None, refusal


def _what_if(raw: dict[str, Any], deployment: ResolvedDeployment, catalog: Catalog, sets: int) -> dict[str, Any]:
    """The stack with this deployment alone, autoscaled from 1 to `sets` workers (or pairs), to its recipe
    goal's targets (configs/aiconfigurator.yaml), with the observability stack the Planner reads."""
    alone = copy.deepcopy(raw)
    config = copy.deepcopy(raw["deployments"][deployment.name])
    config.pop("replicas", None)
    goal = _goal(catalog, deployment)
    targets = {"ttftMs": goal[0], "itlMs": goal[1]}
    if len(deployment.workers) == 1:
        config["autoscaling"] = targets | {"minReplicas": 1, "maxReplicas": sets}
    else:
        config["autoscaling"] = targets | {
            worker.role: {"minReplicas": 1, "maxReplicas": sets} for worker in deployment.workers
        }
    alone["deployments"] = {deployment.name: config}
    alone["observability"] = (alone.get("observability") or {}) | {"enabled": True}
    return alone


def _goal(catalog: Catalog, deployment: ResolvedDeployment) -> tuple[float, float]:
    goal = deployment.recipe.goal
    assert goal is not None, "a GPU recipe has a goal (configs/recipes/)"
    targets = catalog.aiconfigurator.goals[goal]
    return targets.ttft_ms, targets.tpot_ms


def workers(catalog: Catalog, deployment: ResolvedDeployment) -> dict[str, dict[str, Any]]:
    """Each role's mocker arguments and timing-table files, imitating the deployment's worker at its GPUs."""
    found = modelled.timing_tables_for(catalog, deployment)
    assert found is not None, "cases() leaves out deployments without timing tables"
    profile, _ = found
    mocker = catalog.backends["mocker"]
    assert isinstance(mocker, MockerBackend)
    by_role = {worker.role: worker for worker in deployment.workers}
    out = {}
    for role in deployment.recipe.workers:
        worker = by_role[role]
        imitated = imitated_worker(catalog, deployment.recipe_name, role, worker.gpus)
        engine: dict[str, Any] = {"engine_type": "trtllm", TIMING_FLAG: profile} | imitated.mocker_limits()
        args = mocker.worker_args("/models/gpt-oss-120b", "openai/gpt-oss-120b", engine, worker.role, TABLES_IN_POD, [])
        files = {
            f"{TABLES_IN_POD}/{name}": base64.b64encode(
                content if isinstance(content, bytes) else content.encode()
            ).decode()
            for name, content in mocker.config_files(worker.role, engine).items()
        }
        out[worker.role] = {"args": args, "files": files, "gpus": worker.gpus}
    return out


def peak_sets(deployment: ResolvedDeployment) -> int:
    """How many workers (aggregated) or prefill-and-decode pairs the maxima allow."""
    return min(worker.most_replicas for worker in deployment.workers)


def rate_per_set(catalog: Catalog, deployment: ResolvedDeployment, length_floor: float) -> tuple[float, str]:
    """Requests per second one worker (or prefill-and-decode pair) serves at the recipe's concurrency, and from what."""
    figures, why_not = modelled.pace(catalog, deployment)
    if figures is None:
        raise SystemExit(f"{deployment.name}: nothing modelled to size its traffic ({why_not})")
    ttft_ms, tpot_ms, basis = figures
    traffic = deployment.recipe.traffic
    set_gpus = sum(worker.gpus for worker in deployment.workers)
    concurrency = (traffic.concurrency_per_gpu or 0) * set_gpus or (traffic.concurrency_per_replica or 1)
    mean_answer = traffic.output_tokens * (1 + length_floor) / 2
    return concurrency / ((ttft_ms + mean_answer * tpot_ms) / 1000), basis


def modelled_rate(catalog: Catalog, case: Case, settings: dict[str, Any]) -> tuple[float, str]:
    """Requests per second the peak size serves by the modelled figures, and what they are: where the
    calibration's replay starts from (it finds the real rate as a factor of this one)."""
    per_set, basis = rate_per_set(catalog, case.deployment, settings["lengthFloor"])
    return per_set * peak_sets(case.deployment), basis


def sizes(deployment: ResolvedDeployment, gpus: dict[str, int]) -> list[dict[str, int]]:
    """Every fleet within the bounds, fewest GPUs first: the oracle's candidates."""
    ranges = {
        worker.role: range(worker.scaling.min_replicas, worker.scaling.max_replicas + 1)
        if worker.scaling
        else range(worker.replicas, worker.replicas + 1)
        for worker in deployment.workers
    }
    fleets: list[dict[str, int]] = [{}]
    for role, counts in ranges.items():
        fleets = [fleet | {role: count} for fleet in fleets for count in counts]
    return sorted(
        fleets, key=lambda fleet: (sum(count * gpus[role] for role, count in fleet.items()), list(fleet.values()))
    )


@dataclass(frozen=True)
class Setup:
    """What every replay of a case shares: the engines, their GPUs, the SLA, the trace shape, the peak fleet."""

    workers: dict[str, dict[str, Any]]
    gpus: dict[str, int]
    sla: dict[str, float]
    shape: traces.TraceShape
    most: dict[str, int]  # each role at its maximum: the peak size
    router: str

    def base(self, settings: dict[str, Any], planner: dict[str, Any]) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "planner": planner,
            "sla": self.sla,
            "traceBlockSize": settings["traceBlockSize"],
        }


def setup(case: Case, catalog: Catalog, settings: dict[str, Any]) -> Setup:
    deployment = case.deployment
    roles = workers(catalog, deployment)
    traffic = deployment.recipe.traffic
    return Setup(
        workers=roles,
        gpus={role: spec["gpus"] for role, spec in roles.items()},
        sla={"ttftMs": case.planner["ttft_ms"], "itlMs": case.planner["itl_ms"]},
        shape=traces.TraceShape(
            traffic.input_tokens, traffic.output_tokens, settings["lengthFloor"], settings["traceBlockSize"]
        ),
        most={worker.role: worker.most_replicas for worker in deployment.workers},
        router=ROUTERS[deployment.router_mode],
    )


def _steady(
    rate: float, seconds: float, shape: traces.TraceShape, seed: int, groups: int = 0, share: float = 0.0
) -> list[traces.Row]:
    return traces.rows(traces.arrivals(lambda _: rate, rate, seconds, seed), shape, seed, groups, share)


def calibration_request(case: Case, rate: float, settings: dict[str, Any], shared: Setup) -> dict[str, Any]:
    """The driver's request for the highest rate the peak size serves within the SLA: a steady trace at the
    modelled `rate` (modelled_rate: the recipe's concurrency over its modelled time per request, which ignores
    a prefill worker's own limit), sped up or slowed down by the replay until the SLA is just met."""
    count = settings["calibration"]["requests"]
    spec = {"peakPerS": rate, "seconds": count / rate, "seed": settings["seed"]}
    return shared.base(settings, case.planner) | {
        "traceSpecs": {"modelled-rate": spec | {"shape": dataclasses.asdict(shared.shape)}},
        "runs": [
            {
                "name": "capacity",
                "capacity": {"goal": settings["slaGoal"], "steps": settings["calibration"]["bisections"]},
                "trace": "modelled-rate",
                "router": shared.router,
                "workers": shared.most,
            }
        ],
    }


def request(case: Case, settings: dict[str, Any], shared: Setup, capacity: float) -> dict[str, Any]:
    """The driver's request for one case: its traces (the peak at peakLoad of `capacity`, the highest rate in
    requests per second the peak size serves within the SLA) and the runs over them."""
    peak = settings["peakLoad"] * capacity
    seed, day, prefixes = settings["seed"], settings["day"], settings["sharedPrefixes"]
    hour_s = 3600 / day["compression"]
    specs = {
        "day": {"peakPerS": peak, "hourlyShare": day["hourlyShare"], "hourS": hour_s, "seed": seed},
        "steady": {"peakPerS": peak, "seconds": settings["steady"]["minutes"] * 60, "seed": seed + 1},
        "shared": {
            "peakPerS": peak,
            "seconds": prefixes["minutes"] * 60,
            "seed": seed + 2,
            "groups": prefixes["groups"],
            "prefixShare": prefixes["prefixShare"],
        },
    }
    router, most = shared.router, shared.most
    fleets = sizes(case.deployment, shared.gpus)
    delay_s = start_delay_minutes(settings) * 60 / day["compression"]
    # A what-if deployment's own fixed size, when smaller than the peak size: what it serves of the day as it is.
    as_configured = [{"name": "day/configured", "trace": "day", "router": router, "workers": case.configured}]
    runs = (as_configured if case.configured != most else []) + [
        {"name": "day/static", "trace": "day", "router": router, "workers": most},
        {"name": "day/planner", "trace": "day", "router": router, "planner": True},
        {"name": "day/planner-delayed", "trace": "day", "router": router, "planner": True, "startupTimeS": delay_s},
        {"name": "day/oracle", "trace": "day", "router": router, "oracle": _oracle(hour_s, settings, fleets)},
        {"name": "steady/static", "trace": "steady", "router": router, "workers": most},
        # Steady traffic from its first second: the Planner starts where it would be in the middle of it.
        {"name": "steady/planner", "trace": "steady", "router": router, "planner": True, "from": most},
        {"name": "steady/oracle", "trace": "steady", "router": router, "oracle": _oracle(60, settings, fleets)},
        {"name": "shared/kv", "trace": "shared", "router": "kv_router", "workers": most},
        {"name": "shared/round-robin", "trace": "shared", "router": "round_robin", "workers": most},
    ]
    shape = dataclasses.asdict(shared.shape)
    return shared.base(settings, case.planner) | {
        "traceSpecs": {name: spec | {"shape": shape} for name, spec in specs.items()},
        "runs": runs,
    }


def with_traces(replay_request: dict[str, Any]) -> dict[str, Any]:
    """The request with the rows of each of its trace specs: what the driver reads."""
    generated = {}
    for name, spec in replay_request["traceSpecs"].items():
        generated[name] = generate(spec, traces.TraceShape(**spec["shape"]))
    return replay_request | {"traces": generated}


def generate(spec: dict[str, Any], shape: traces.TraceShape) -> list[traces.Row]:
    """A trace from its spec: a day's hourly shape, or steady (with shared prefixes when it has groups)."""
    peak, seed = spec["peakPerS"], spec["seed"]
    if "hourlyShare" in spec:
        hours = spec["hourlyShare"]
        rate = traces.hourly_rate(hours, peak, spec["hourS"])
        return traces.rows(traces.arrivals(rate, peak, spec["hourS"] * len(hours), seed), shape, seed)
    return _steady(peak, spec["seconds"], shape, seed, spec.get("groups", 0), spec.get("prefixShare", 0.0))


def _oracle(interval_s: float, settings: dict[str, Any], fleets: list[dict[str, int]]) -> dict[str, Any]:
    return {"intervalMs": interval_s * 1000, "goal": settings["slaGoal"], "sizes": fleets}


def start_delay_minutes(settings: dict[str, Any]) -> float:
    phase = settings["startDelayPhase"]
    (found,) = [entry for entry in load_phases() if entry.phase == phase]
    assert found.minutes is not None, f"configs/durations.yaml: {phase} has no figure"
    return found.minutes


def _shown(path: Path) -> Path:
    """A path as printed: from the repository's root where it is in it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def fingerprint(replay: dict[str, Any]) -> str:
    """What a result was replayed from: the request (workers, Planner config, SLA, runs) with its traces'
    specs (tools/traces.py turns a spec into the same rows every time: tests/tools/test_traces.py pins them)."""
    inputs = {key: value for key, value in replay.items() if key != "traces"}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def run_driver(replay_request: dict[str, Any], folder: Path, **run: Any) -> dict[str, Any]:
    """tools/replay_driver.py's result for the request, run in .venv-trial with `folder` for its files, quiet
    (the router logs every request otherwise); `run`: more of subprocess.run's options. Its temporary files
    go in `folder` too: Dynamo's logging leaves one behind on every start."""
    (folder / "request.json").write_text(json.dumps(replay_request))
    subprocess.run(
        [str(REPLAY_PYTHON), str(DRIVER), str(folder / "request.json"), str(folder / "result.json")],
        cwd=folder,
        env={"RUST_LOG": "error", "DYN_LOG": "error", "PATH": "/usr/bin:/bin", "TMPDIR": str(folder)},
        check=True,
        **run,
    )
    result: dict[str, Any] = json.loads((folder / "result.json").read_text())
    return result


def replay(replay_request: dict[str, Any], what: str) -> dict[str, Any]:
    """The driver's result for the request: from build/simulate/<fingerprint>.json when the same inputs were
    replayed before (the report can then change without replaying), else replayed now and kept there."""
    cached = CACHE / f"{fingerprint(replay_request)}.json"
    if cached.exists():
        print(f"{what}: the same inputs' replay, from {_shown(cached)}", file=sys.stderr)
        found: dict[str, Any] = json.loads(cached.read_text())
        return found
    requests = sum(map(len, replay_request["traces"].values()))
    print(f"{what}: replaying {requests} requests", file=sys.stderr)
    with tempfile.TemporaryDirectory() as scratch:
        result = run_driver(replay_request, Path(scratch))
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result))
    return result


def summary(
    case: Case, replay_request: dict[str, Any], result: dict[str, Any], catalog: Catalog, settings: dict[str, Any]
) -> dict[str, Any]:
    """What configs/simulated.yaml records for a case: each run's figures with GPU-hours and dollars per
    (real) day or per hour of steady traffic."""
    deployment = case.deployment
    gpus = {worker.role: worker.gpus for worker in deployment.workers}
    gpu_price = _gpu_price(case, catalog)
    scale = {"day": settings["day"]["compression"], "steady": 60 / settings["steady"]["minutes"], "shared": None}
    runs = {}
    for name, figures in result.items():
        trace = name.split("/")[0]
        gpu_hours = sum(seconds * gpus[role] for role, seconds in figures["workerSeconds"].items()) / 3600
        scaled = gpu_hours * scale[trace] if scale[trace] else None
        run = {
            key: _rounded(value)
            for key, value in figures.items()
            if key not in ("workerSeconds", "scalingEvents", "sizes")
        }
        if scaled is not None:
            run["gpuHours"] = round(scaled, 2)
            run["usd"] = round(scaled * gpu_price, 2) if gpu_price is not None else None
        if "scalingEvents" in figures:
            run["scalingEvents"] = len(figures["scalingEvents"])
        if "sizes" in figures:
            run["sizes"] = [_fleet_text(size) for size in figures["sizes"]]
        runs[name] = run
    return {
        "match": match(case).model_dump(by_alias=True, mode="json"),
        "whatIf": case.what_if,
        "bounds": {w.role: [w.scaling.min_replicas, w.scaling.max_replicas] for w in deployment.workers if w.scaling},
        "router": deployment.router_mode,
        "sla": replay_request["sla"],
        "usdPerGpuHour": gpu_price,
        "startDelayMinutes": start_delay_minutes(settings),
        "requests": {name: len(rows) for name, rows in replay_request["traces"].items()},
        "traceSha256": {name: traces.digest(rows) for name, rows in replay_request["traces"].items()},
        "fingerprint": fingerprint(replay_request),
        "runs": runs,
    }


def _gpu_price(case: Case, catalog: Catalog) -> float | None:
    """The pool's price per GPU-hour, as the plan's cost lines price it (core/resolve/cost.py: On-Demand list
    price, or the stack's pricePerNodeHour; None for Spot or a Capacity Block without one, an existing cluster,
    or a region without a price)."""
    pool = case.deployment.gpu_pool
    line = cost.pool_costs({pool.name: pool}, [], catalog.prices, case.place.region, case.place.created)[pool.name]
    usd = line.line.usd_per_hour
    return None if usd is None else round(usd / pool.total_gpus, 3)


def match(case: Case) -> SimulatedMatch:
    """What the replay stands in for: the plan quotes the entry for a deployment of the same recipe, GPUs, pool
    and autoscaling (core/report/simulated.py); a what-if stands in for the deployment without autoscaling."""
    found = deployment_match(case.deployment)
    assert found is not None, "cases() leaves out deployments without GPUs"
    return found.model_copy(update={"autoscaling": None}) if case.what_if else found


def _rounded(value: Any) -> Any:
    return round(value, 1) if isinstance(value, float) else value


def _fleet_text(size: dict[str, int] | None) -> str:
    return "-" if size is None else "+".join(f"{count} {role}" for role, count in size.items())


PAGE = ROOT / "docs" / "autoscaling.md"
PAGE_BEGIN, PAGE_END = "<!-- make simulate: begin -->", "<!-- make simulate: end -->"


def page_table(simulated: Simulated) -> str:
    """The docs' table of every replay (docs/autoscaling.md; tests keep it equal to configs/simulated.yaml)."""
    lines = [
        "| deployment | scaled | day: static at the peak size | the Planner | the Planner, "
        "workers serving after the start delay | the oracle | shared prefixes, p50 TTFT: KV / round-robin |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for key, entry in simulated.deployments.items():
        runs = entry.runs
        bounds = ", ".join(f"{role} {low}..{high}" for role, (low, high) in entry.bounds.items())
        kv, round_robin = runs["shared/kv"], runs["shared/round-robin"]
        day = " | ".join(_day_cell(runs, name) for name in ("static", "planner", "planner-delayed", "oracle"))
        lines.append(
            f"| {key} ({entry.match.recipe}) | {'what if: ' if entry.what_if else ''}{bounds} | {day} "
            f"| {kv.ttft_p50_ms:g} / {round_robin.ttft_p50_ms:g} ms |"
        )
    skipped = [f"- {key}: {why}" for key, why in simulated.not_simulated.items()]
    return "\n".join([*lines, "", "Not simulated:", "", *skipped])


def _day_cell(runs: dict[str, SimulatedRun], name: str) -> str:
    """A day run's GPU-hours (and dollars), what it saves against static at the peak size, and its SLA share."""
    run, static = runs[f"day/{name}"], runs["day/static"]
    assert run.gpu_hours is not None and static.gpu_hours is not None  # the day's runs have them
    saved = "" if name == "static" else f", {change(run.gpu_hours, static.gpu_hours) or 'the same'}"
    if name == "planner-delayed":
        saved += kept(static.gpu_hours, runs["day/planner"].gpu_hours, run.gpu_hours)
    money = f" (${run.usd:,.0f})" if run.usd is not None else ""
    return f"{run.gpu_hours:,.0f} GPU-h{money}{saved}; {100 * run.within_sla / run.requests:.1f}% in SLA"


def stale_entries(catalog: Catalog, simulated: Simulated) -> list[str]:
    """Where configs/simulated.yaml is not what make simulate would replay today (no replay is run): a shipped
    deployment missing or gone, another reason not to simulate, other inputs (workers, Planner config, SLA,
    traces' specs, runs), another match or price."""
    settings = read_yaml(SETTINGS)
    found, skipped = cases(catalog)
    keys = {f"{case.stack}/{case.name}": case for case in found}
    problems = [
        f"{key}: not simulated (run make simulate)" for key in sorted(keys.keys() - simulated.deployments.keys())
    ]
    problems += [
        f"{key}: not a deployment make simulate replays" for key in sorted(simulated.deployments.keys() - keys.keys())
    ]
    if dict(simulated.not_simulated) != skipped:
        problems.append(f"notSimulated: {dict(simulated.not_simulated)}, but today: {skipped}")
    for key, case in keys.items():
        entry = simulated.deployments.get(key)
        if entry is not None:
            problems += [f"{key}: {problem}" for problem in entry_problems(case, entry, catalog, settings)]
    return problems


def entry_problems(case: Case, entry: SimulatedDeployment, catalog: Catalog, settings: dict[str, Any]) -> list[str]:
    """Where a stored entry is not what make simulate would replay for `case` today (no replay is run): other
    inputs (workers, Planner config, SLA, traces' specs, runs, at the capacity its calibration found), another
    deployment, another price."""
    problems = []
    capacity = entry.capacity.of_modelled_rate * modelled_rate(catalog, case, settings)[0]
    if fingerprint(request(case, settings, setup(case, catalog, settings), capacity)) != entry.fingerprint:
        problems.append("replayed from other inputs than today's (run make simulate)")
    if match(case) != entry.match:
        problems.append("replayed for another deployment than today's (run make simulate)")
    if (price := _gpu_price(case, catalog)) != entry.usd_per_gpu_hour:
        problems.append(f"priced at {entry.usd_per_gpu_hour} $/GPU-hour, today {price}")
    return problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", help="one shipped stack (default: all)")
    parser.add_argument("--deployment", help="one deployment of each stack (default: all)")
    parser.add_argument(
        "--write-traces",
        type=Path,
        metavar="DIR",
        help="write the traces as JSON Lines (after the calibration replays, which size them), not the rest",
    )
    parser.add_argument("--check", action="store_true", help="only say where configs/simulated.yaml is stale")
    parser.add_argument(
        "--again", action="store_true", help="replay a deployment whose stored entry is today's too (default: kept)"
    )
    args = parser.parse_args(argv)
    catalog, settings = load_catalog(), read_yaml(SETTINGS)
    if args.check:
        problems = stale_entries(catalog, catalog.simulated)
        print("\n".join(problems) or "configs/simulated.yaml is what make simulate replays today", file=sys.stderr)
        raise SystemExit(1 if problems else 0)
    found, skipped = cases(catalog, args.stack)
    # A run for one stack or deployment keeps the others' results; a whole run writes every result anew.
    partial = args.stack is not None or args.deployment is not None
    stored = read_yaml(RESULTS) if RESULTS.exists() else {}
    results: dict[str, Any] = {"tool": TOOL, "deployments": dict(stored.get("deployments") or {}) if partial else {}}
    done: dict[str, dict[str, Any]] = {}  # fingerprint -> result: stacks that share a deployment replay it once
    for case in found:
        if args.deployment not in (None, case.name):
            continue
        key = f"{case.stack}/{case.name}"
        # No replay repeats another to the digit (docs/autoscaling.md): replaying today's inputs again would
        # only trade the stored figures for others as true.
        entry = catalog.simulated.deployments.get(key)
        replay_anyway = args.again or args.write_traces  # traces are written after the calibration replay
        if not replay_anyway and entry is not None and not entry_problems(case, entry, catalog, settings):
            print(f"{key}: kept, its stored replay is of today's inputs (--again replays it)", file=sys.stderr)
            results["deployments"][key] = stored["deployments"][key]
            continue
        shared = setup(case, catalog, settings)
        rate, basis = modelled_rate(catalog, case, settings)
        calibration = calibration_request(case, rate, settings, shared)
        inputs_key = fingerprint(calibration)
        if inputs_key not in done:
            done[inputs_key] = replay(with_traces(calibration), f"{key}, the highest rate its peak size serves")
        factor = done[inputs_key]["capacity"]["factor"]
        capacity = factor * rate
        if not factor:
            skipped[key] = f"its peak size misses the SLA even at 1/1024 of its modelled rate ({basis})"
            continue
        replay_request = with_traces(request(case, settings, shared, capacity))
        if args.write_traces:
            for name, rows in replay_request["traces"].items():
                target = args.write_traces / f"{case.stack}-{case.name}-{name}.jsonl"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("".join(json.dumps(row) + "\n" for row in rows))
            continue
        inputs_key = fingerprint(replay_request)
        if inputs_key not in done:
            done[inputs_key] = replay(replay_request, key)
        calibrated = {"requestsPerSecond": round(capacity, 3), "ofModelledRate": factor, "modelledRate": basis}
        entry = summary(case, replay_request, done[inputs_key], catalog, settings)
        results["deployments"][key] = entry | {"capacity": calibrated}
    if args.write_traces:
        return
    results["notSimulated"] = (dict(stored.get("notSimulated") or {}) if partial else {}) | skipped
    RESULTS.write_text(HEADER + yaml.safe_dump(results, sort_keys=False, default_flow_style=None, width=120))
    written = Simulated.model_validate(results)
    write_block(PAGE, PAGE_BEGIN, PAGE_END, page_table(written))
    print(f"Simulated ({TOOL}); GPU-hours and dollars per day, as if nodes followed the workers:\n")
    print(page_table(written))
    print(f"\nwrote {_shown(RESULTS)} and the table of {_shown(PAGE)}", file=sys.stderr)


if __name__ == "__main__":
    main()
