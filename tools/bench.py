"""`make bench`: how long `make plan` takes, against two baselines. Prints ratios; asserts nothing.

1. The largest example stack's plan vs a bare `import pulumi, pulumi_aws, pulumi_kubernetes`:
   how much the program, validation and mock engine add on top of loading the SDKs.
2. A 20-deployment stack vs a 1-deployment stack: how plan time grows with deployments.
Each command runs in a fresh interpreter, REPEATS times; the median is reported.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from tools.plan import EXAMPLES, ROOT, load_stack_files

REPEATS = 3
BARE_IMPORT = [sys.executable, "-c", "import pulumi, pulumi_aws, pulumi_kubernetes"]


def median_seconds(command: list[str]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def plan_command(stack: str, stack_dir: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "tools.plan", "--stack", stack, "--stack-dir", str(stack_dir), "--out", str(out)]


def largest_example() -> str:
    """The example stack with the most deployments and node pools (a proxy for resources)."""

    def size(path: Path) -> int:
        config = yaml.safe_load(path.read_text())["config"]
        return len(config.get("gpt-oss-infra:deployments", {})) + len(config.get("gpt-oss-infra:nodePools", {}))

    return max(sorted(EXAMPLES.glob("Pulumi.*.yaml")), key=size).stem.removeprefix("Pulumi.")


def scaled_stack(directory: Path, deployments: int) -> str:
    """The dev stack with `deployments` one-GPU H200 deployments on enough nodes."""
    name = f"bench-{deployments}"
    config = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]
    config["gpt-oss-infra:nodePools"]["gpu"]["nodes"] = -(-deployments // 8)
    config["gpt-oss-infra:deployments"] = {
        f"gpt-oss-{i}": {"recipe": "h200-agg-low-latency", "nodePool": "gpu", "gpus": 1} for i in range(deployments)
    }
    (directory / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))
    load_stack_files(name, directory)  # fail early on a broken generated file
    return name


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        example = largest_example()
        bare = median_seconds(BARE_IMPORT)
        largest = median_seconds(plan_command(example, EXAMPLES, work / "out"))
        one = median_seconds(plan_command(scaled_stack(work, 1), work, work / "out"))
        twenty = median_seconds(plan_command(scaled_stack(work, 20), work, work / "out"))
    print(f"median of {REPEATS} runs, fresh interpreter each, this machine:")
    print(f"  bare SDK import                      {bare:6.2f} s")
    print(f"  make plan, largest example ({example}) {largest:6.2f} s   ratio to bare import {largest / bare:5.1f}x")
    print(f"  make plan, 1 deployment              {one:6.2f} s")
    print(f"  make plan, 20 deployments            {twenty:6.2f} s   ratio to 1 deployment {twenty / one:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
