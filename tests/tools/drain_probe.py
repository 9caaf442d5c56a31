"""Run by tests/tools/test_drain.py inside a network namespace of its own (`unshare --net`): the trial stack's
aggregated graph served by real Dynamo 1.6.1 (the frontend and two mocker workers, as `make trial` starts
them), two long answers streaming, one worker sent SIGTERM as the kubelet sends it when the Planner scales
down. Prints what happened as JSON: each answer's tokens and finish reason, a request sent after the
SIGTERM, and when the stopped worker exited."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.tools import trial

ANSWER_TOKENS = 2000  # about 10 s at the mocker's pace here: the SIGTERM lands mid-answer
SIGTERM_AFTER_SECONDS = 2.0


def stream(port: int, model: str, max_tokens: int, finished: dict[str, object], key: str, started: float) -> None:
    body = {"model": model, "messages": [{"role": "user", "content": key}], "max_tokens": max_tokens, "stream": True}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    tokens, reason = 0, None
    try:
        with urllib.request.urlopen(request, timeout=240) as response:
            for raw in response:
                line = raw.decode().strip()
                if not line.startswith("data:") or line == "data: [DONE]":
                    continue
                for choice in json.loads(line[len("data:") :]).get("choices", []):
                    tokens += bool(choice.get("delta", {}).get("content"))
                    reason = choice.get("finish_reason") or reason
    except OSError as error:
        reason = f"error: {error}"
    finished[key] = {"tokens": tokens, "finishReason": reason, "endedAfter": round(time.monotonic() - started, 2)}


def main() -> int:
    trial.bring_loopback_up()
    deployment = next(d for d in trial.rendered_deployments(trial.plan_manifests("trial-local")) if d.name == "agg")
    with tempfile.TemporaryDirectory(prefix="drain-probe-") as scratch:
        work = Path(scratch)
        places = trial.Places.under(work, work / "tokenizer", trial.free_port())
        trial.write_tokenizer(places.tokenizer, load_catalog().model)
        trial.write_config_map(deployment.config_map, places.config_dir)
        places.discovery.mkdir(parents=True)
        processes = trial.Processes(work)
        workers = []
        try:
            for component in graph_components(deployment.graph):
                argv, env = trial.local_process(component, places)
                for replica in range(1 if component.type == "frontend" else 2):  # two workers: one stops
                    process = processes.start(f"{component.name}-{replica}", argv, os.environ | env)
                    if component.type != "frontend":
                        workers.append(process)
            trial.wait_until_listed(processes, places.port, str(places.tokenizer))
            time.sleep(3)  # both workers registered with the router, not only the first
            started, finished = time.monotonic(), {}
            threads = [
                threading.Thread(
                    target=stream, args=(places.port, str(places.tokenizer), ANSWER_TOKENS, finished, key, started)
                )
                for key in ("first", "second")
            ]
            for thread in threads:
                thread.start()
            time.sleep(SIGTERM_AFTER_SECONDS)
            stopped, exited = workers[0], {}
            os.killpg(stopped.popen.pid, signal.SIGTERM)
            sent_at = round(time.monotonic() - started, 2)
            watcher = threading.Thread(
                target=lambda: exited.update(code=stopped.popen.wait(), after=round(time.monotonic() - started, 2))
            )
            watcher.start()
            time.sleep(1)  # the stopped worker has left discovery: this one goes to the other
            stream(places.port, str(places.tokenizer), 50, finished, "after", started)
            for thread in [*threads, watcher]:
                thread.join(timeout=240)
            result = {
                "sigtermAfter": sent_at,
                "answers": finished,
                "stoppedWorkerExitedAfter": exited.get("after"),
                "stoppedWorkerExitCode": exited.get("code"),
                "otherWorkerRunning": workers[1].popen.poll() is None,
                "answerTokens": ANSWER_TOKENS,
            }
        finally:
            processes.stop()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
