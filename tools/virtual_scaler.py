"""Runs inside Dynamo 1.6.1's runtime venv (.venv-trial), started by make trial: the trial's stand-in for Kubernetes
when Dynamo's Planner runs with `environment: virtual`. It starts the scaled workers' processes, takes each of the
Planner's decisions through the release's VirtualConnectorClient (coordinated over etcd: ETCD_ENDPOINTS), starts
or stops workers to match (SIGTERM: a stopped worker drains as in a pod), and tells the Planner the decision is
done. It prints one JSON line per decision. Standard library and that release's `dynamo` package only.

    python virtual_scaler.py <workers.json> <log dir>

workers.json: {role: {"argv": the worker's command line, "env": its environment, "start": how many to start with}}
              for each role the Planner scales: "decode" (an aggregated worker is the Planner's decode), "prefill"
"""

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

# A stopped worker's drain here before SIGKILL (its pod's grace period is longer): less than make trial gives this
# process group (tools/trial.py STOP_SECONDS), which the workers share, so that they are stopped with it.
STOP_SECONDS = 8


class Workers:
    """One role's worker processes."""

    def __init__(self, role, spec, log_dir):
        self.role, self.spec, self.log_dir, self.running, self.started = role, spec, log_dir, [], 0

    def start(self):
        with open(os.path.join(self.log_dir, f"{self.role}-{self.started}.log"), "w") as log:
            self.running.append(
                subprocess.Popen(
                    self.spec["argv"],
                    env=os.environ | self.spec["env"],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
            )
        self.started += 1

    def stop_one(self):
        """The newest worker is sent SIGTERM and drains; it is reaped (or killed) in the background."""
        process = self.running.pop()
        process.terminate()
        return process

    def scale_to(self, count):
        while len(self.running) < count:
            self.start()
        return [self.stop_one() for _ in range(len(self.running) - count)]


def _kill(process):
    try:
        process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def serve(roles, began):
    from dynamo._core import DistributedRuntime, VirtualConnectorClient

    runtime = DistributedRuntime(asyncio.get_running_loop(), "file", "tcp")
    client = VirtualConnectorClient(runtime, os.environ.get("DYN_NAMESPACE", "dynamo"))
    while True:
        await client.wait()
        decision = await client.get()
        wanted = {"decode": decision.num_decode_workers, "prefill": decision.num_prefill_workers}
        changes = {}
        for role, workers in roles.items():
            before = len(workers.running)
            if wanted[role] >= 0:  # -1: no decision for this role
                for process in workers.scale_to(wanted[role]):  # each drains, then is reaped, not holding the Planner
                    threading.Thread(target=_kill, args=(process,), daemon=True).start()
            changes[role] = {"from": before, "to": len(workers.running)}
        print(json.dumps({"atSeconds": round(time.monotonic() - began, 1)} | changes), flush=True)
        await client.complete(decision)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workers", help="JSON file: see the module's docstring")
    parser.add_argument("log_dir", help="where each worker's log goes")
    args = parser.parse_args(argv)
    with open(args.workers) as spec_file:
        spec = json.load(spec_file)
    roles = {role: Workers(role, workers, args.log_dir) for role, workers in spec.items()}
    began = time.monotonic()

    def stop(*_):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        for workers in roles.values():
            for _ in range(workers.spec["start"]):
                workers.start()
        asyncio.run(serve(roles, began))
    finally:
        running = [process for workers in roles.values() for process in workers.running]
        for process in running:
            process.terminate()
        for process in running:
            _kill(process)


if __name__ == "__main__":
    sys.exit(main())
