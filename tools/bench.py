"""`make bench`: how long `make plan`, the tests and `make estimate` take. Prints figures; asserts nothing.

1. The floor: a fresh interpreter that imports exactly the SDK classes behind the resource types
   the largest example's plan registers (read from its resources.json), and nothing of ours; its
   collector tuned and its exit as the command line's (tools/process.py), so both are timed alike.
   `make plan` of that example against it: what the program, validation and the mock engine add
   on top of loading the SDK it cannot avoid. Target: at most 1.5x. Floor and plan run in pairs,
   back to back, and the ratio is the median of the pairs' ratios (paired_ratios).
   Beside it, a second floor: the first, then the SDK registering that plan's resources on its own
   mocks with its generic classes (tools/registration_floor.py): at least what any program making
   those resources pays, whatever it does besides.
2. Where that plan's time goes, in one fresh interpreter: the first plan (with the SDK modules the
   program reaches and every one-time load: catalog, CRD schemas, AWS models), a second plan of the
   same stack (what is left once everything is loaded), and the rest (starting, importing the
   command, reading the stack file, exiting).
3. A 20-deployment stack vs a 1-deployment stack: how plan time grows with deployments.
4. The unit and program tests (`pytest -n 3 -m "not end_to_end"`), once. Target: 90 s.
5. The whole pytest (`make test` without its lint: the trial, the replay, AISimulate, checkov, the built
   wheel too), once. Target: 240 s.
6. `make estimate` of every recipe's points with NVIDIA AISimulate (written to a scratch file;
   once, not repeated: it takes tens of seconds). Its searches and calibration are timed by
   `make estimate` itself.
Each plan and floor command runs in a fresh interpreter, REPEATS times; the median is reported.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from gpt_oss_infra.tools.plan import EXAMPLES, ROOT, load_stack_files, planned, shown
from gpt_oss_infra.tools.process import GC_THRESHOLDS

REPEATS = 7
REGISTRATION_FLOOR = ROOT / "tools" / "registration_floor.py"  # run by path: nothing of ours is imported
FAILED_RUNS = ROOT / "build" / "bench"  # a failing test run's output (build/ is git-ignored)
FLOOR_TARGET = 1.5
FAST_TESTS_TARGET = 90  # seconds, on 2 cores
ALL_TESTS_TARGET = 240  # seconds, on 2 cores
# make test's pytest workers, on 2 cores: a third worker runs while the trial's and the drain test's processes
# wait on their timers (measured here: the whole pytest 269 s with 3 workers, 336 s with 2; the unit and
# program tests 79 s and 87 s).
TEST_WORKERS = 3
# --dist loadgroup: tests of one xdist_group run on one worker (those sharing one AISimulate run, say).
PYTEST = [
    sys.executable,
    "-m",
    "pytest",
    "-n",
    str(TEST_WORKERS),
    "--dist",
    "loadgroup",
    "-q",
    "-p",
    "no:cacheprovider",
]


def median_seconds(command: list[str]) -> float:
    return statistics.median(seconds(command) for _ in range(REPEATS))


def paired_ratios(command: list[str], floor: list[str]) -> tuple[float, float, list[float]]:
    """The medians of `command`'s and of `floor`'s seconds, run REPEATS times in pairs, and each pair's ratio,
    lowest first. This machine's speed drifts: the floor alone took 1.3 s and 1.8 s minutes apart (2026-11-28),
    so a ratio of medians taken minutes apart mixes two speeds; a pair's two runs share one. The pairs take
    turns at running the floor first, so that neither command is always the one run just after the other."""
    pairs = []
    for turn in range(REPEATS):
        if turn % 2 == 0:
            base = seconds(floor)
            timed = seconds(command)
        else:
            timed = seconds(command)
            base = seconds(floor)
        pairs.append((base, timed))
    return (
        statistics.median(timed for _, timed in pairs),
        statistics.median(base for base, _ in pairs),
        sorted(timed / base for base, timed in pairs),
    )


def seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def seconds_and_outcome(command: list[str], log: Path) -> tuple[float, str, list[str]]:
    """A pytest run's time, "passed" or "FAILED", and the tests that failed or erred (pytest's short summary, -rfE):
    a failing test run is timed, not fatal, and says what to look at. A failing run's whole output is kept in
    `log`, and the summary ends with where: a failure seen once in a timed run must be readable afterwards."""
    start = time.perf_counter()
    run = subprocess.run([*command, "-rfE"], cwd=ROOT, capture_output=True, text=True)
    seconds_taken = time.perf_counter() - start
    if run.returncode == 0:
        return seconds_taken, "passed", []
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(run.stdout + run.stderr)
    failed = [line for line in run.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    return seconds_taken, "FAILED", [*(failed or [f"pytest exited with {run.returncode}"]), f"its output: {shown(log)}"]


def plan_command(stack: str, stack_dir: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gpt_oss_infra",
        "plan",
        "--stack",
        stack,
        "--stack-dir",
        str(stack_dir),
        "--out",
        str(out),
    ]


def ratio_text(ratios: list[float]) -> str:
    """The median of paired ratios (paired_ratios), with their range."""
    return f"{statistics.median(ratios):.2f}x the floor (pairs {ratios[0]:.2f}-{ratios[-1]:.2f}x)"


def sdk_class(resource_type: str) -> tuple[str, str] | None:
    """(module, class) of the SDK class that registers a resource type; None for our components.

    aws:eks/nodeGroup:NodeGroup -> pulumi_aws.eks.NodeGroup; kubernetes:core/v1:ConfigMap ->
    pulumi_kubernetes.core.v1.ConfigMap; a custom resource's kind -> apiextensions.CustomResource."""
    package, module, name = resource_type.split(":")
    if package == "aws":
        service = module.split("/")[0]
        return ("pulumi_aws" if service == "index" else f"pulumi_aws.{service}", name)
    if package == "pulumi" and module == "providers":
        return (f"pulumi_{name}", "Provider")
    if package == "kubernetes":
        group, version = module.split("/")
        api_group = f"pulumi_kubernetes.{group.split('.')[0]}"
        if importlib.util.find_spec(api_group) is None:  # a CRD's kind, not a built-in API group
            return ("pulumi_kubernetes.apiextensions", "CustomResource")
        return (f"{api_group}.{version}", name)
    return None


def floor_command(resources_json: Path) -> list[str]:
    """A fresh interpreter importing exactly the SDK classes the plan's resources come from, as the
    command line runs: its garbage collector tuned, and ended with no teardown (tools/process.py)."""
    return _fresh_interpreter(sdk_imports(resources_json))


def registration_floor_command(resources_json: Path) -> list[str]:
    """The floor, then the SDK registering the plan's resources on its own mocks with its generic classes
    (REGISTRATION_FLOOR)."""
    return _fresh_interpreter(
        [
            *sdk_imports(resources_json),
            f"import sys; sys.argv = [{str(REGISTRATION_FLOOR)!r}, {str(resources_json)!r}]",
            f"import runpy; runpy.run_path({str(REGISTRATION_FLOOR)!r}, run_name='__main__')",
        ]
    )


def sdk_imports(resources_json: Path) -> list[str]:
    """`import pulumi` and one import per SDK class the plan's resource types come from."""
    types = {resource["type"] for resource in json.loads(resources_json.read_text())}
    classes = sorted({found for found in map(sdk_class, types) if found})
    return ["import pulumi", *(f"from {module} import {name}" for module, name in classes)]


def _fresh_interpreter(statements: list[str]) -> list[str]:
    return [
        sys.executable,
        "-c",
        "; ".join([f"import gc; gc.set_threshold(*{GC_THRESHOLDS})", *statements, "import os; os._exit(0)"]),
    ]


def largest_example() -> str:
    """The example stack with the most deployments and node pools (a proxy for resources)."""

    def size(path: Path) -> int:
        config = yaml.safe_load(path.read_text())["config"]
        return len(config.get("gpt-oss-infra:deployments", {})) + len(config.get("gpt-oss-infra:nodePools", {}))

    return max(sorted(EXAMPLES.glob("Pulumi.*.yaml")), key=size).stem.removeprefix("Pulumi.")


def scaled_stack(directory: Path, deployments: int) -> str:
    """The dev stack with `deployments` one-GPU H200 deployments on enough GPU and system nodes."""
    name = f"bench-{deployments}"
    config = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]
    config["gpt-oss-infra:nodePools"]["gpu"]["nodes"] = -(-deployments // 8)
    # Each deployment's frontend and smoke test ask the system nodes for CPU and memory: two more per ten.
    config["gpt-oss-infra:cluster"]["systemNodes"] = {"nodes": 2 + -(-deployments // 5)}
    config["gpt-oss-infra:deployments"] = {
        f"gpt-oss-{i}": {"recipe": "h200-agg-low-latency", "nodePool": "gpu", "gpus": 1} for i in range(deployments)
    }
    (directory / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))
    load_stack_files(name, directory)  # fail early on a broken generated file
    return name


def plan_stages(stack: str) -> dict[str, float]:
    """Seconds of the first plan of `stack` (Pulumi.<stack>.yaml here or in configs/examples/) in this
    interpreter, and of a second one."""
    files = load_stack_files(stack)
    start = time.perf_counter()
    planned(files, stack)
    first = time.perf_counter()
    planned(files, stack)
    return {"first plan": first - start, "second plan": time.perf_counter() - first}


def stages_in_fresh_interpreters(stack: str) -> dict[str, float]:
    """plan_stages in REPEATS fresh interpreters, the median of each stage and of the rest of each
    interpreter's time: starting, importing the command (and the SDK modules it imports), reading
    the stack file, exiting."""
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        stages = json.loads(
            subprocess.run(
                [sys.executable, "-m", "gpt_oss_infra", "bench", "--stages-of", stack],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        runs.append(stages | {"rest": time.perf_counter() - start - sum(stages.values())})
    return {stage: statistics.median(run[stage] for run in runs) for stage in runs[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--stages-of",
        metavar="STACK",
        help="only time two plans of STACK in this interpreter and print them as JSON (what bench runs)",
    )
    args = parser.parse_args(argv)
    if args.stages_of:
        print(json.dumps(plan_stages(args.stages_of)))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        example = largest_example()
        largest_plan = plan_command(example, EXAMPLES, work / "out")
        seconds(largest_plan)  # its resources.json, which both floors read
        resources_json = work / "out" / example / "resources.json"
        the_floor = floor_command(resources_json)
        largest, floor, ratios = paired_ratios(largest_plan, the_floor)
        registered, registered_floor, registered_ratios = paired_ratios(
            registration_floor_command(resources_json), the_floor
        )
        registrations = len(json.loads(resources_json.read_text()))
        stages = stages_in_fresh_interpreters(example)
        one = median_seconds(plan_command(scaled_stack(work, 1), work, work / "out"))
        twenty = median_seconds(plan_command(scaled_stack(work, 20), work, work / "out"))
        fast_tests, fast_outcome, fast_failed = seconds_and_outcome(
            [*PYTEST, "-m", "not end_to_end"], FAILED_RUNS / "unit-and-program-tests.log"
        )
        all_tests, all_outcome, all_failed = seconds_and_outcome(PYTEST, FAILED_RUNS / "whole-pytest.log")
        estimate = seconds(
            [sys.executable, "-m", "gpt_oss_infra", "estimate", "--skip-search", "--skip-calibration", "--out",
             str(work / "estimates.yaml")]
        )  # fmt: skip
    print(f"median of {REPEATS} runs, fresh interpreter each, this machine:")
    print(f"  floor: import the SDK classes used     {floor:6.2f} s")
    print(
        f"  make plan, largest example ({example})   {largest:6.2f} s   {ratio_text(ratios)} (target {FLOOR_TARGET}x)"
    )
    print(
        f"  the floor, then the SDK registering that plan's {registrations} resources (generic classes, its mocks)"
        f" {registered:6.2f} s   {ratio_text(registered_ratios)}; its pairs' floor {registered_floor:.2f} s"
    )
    print(
        f"    the first plan in the process      {stages['first plan']:6.2f} s   (SDK modules it reaches, first loads)"
    )
    print(f"    a second plan of it                {stages['second plan']:6.2f} s")
    print(f"    the rest: start, imports, exit     {stages['rest']:6.2f} s")
    print(f"  make plan, 1 deployment              {one:6.2f} s")
    print(f"  make plan, 20 deployments            {twenty:6.2f} s   ratio to 1 deployment {twenty / one:5.2f}x")
    workers = f"-n {TEST_WORKERS}"
    fast = f"one run, {fast_outcome}; target {FAST_TESTS_TARGET} s"
    whole = f"one run, {all_outcome}; target {ALL_TESTS_TARGET} s"
    print(f"  unit and program tests ({workers})        {fast_tests:6.2f} s   ({fast})")
    print(f"  the whole pytest ({workers})              {all_tests:6.2f} s   ({whole})")
    print(f"  make estimate, every recipe's points {estimate:6.2f} s   (one run; AISimulate, modelled)")
    for run, failed in (("the unit and program tests", fast_failed), ("the whole pytest", all_failed)):
        for line in failed:
            print(f"  {run}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
