"""make trial's live Planner: a graph with `autoscaling` runs Dynamo 1.6.1's real Planner process here, against the
trial's mocker workers, under a burst that rises and falls, and the trial prints each scaling decision.

On a cluster the Planner (`environment: kubernetes`) sets the scaled workers' replicas through the operator's
scaling adapters. Here its config says `environment: virtual`: the Planner publishes each decision through the
release's VirtualConnectorCoordinator, and tools/virtual_scaler.py (in .venv-trial) takes it with the release's
VirtualConnectorClient, starts or stops worker processes to match, and marks it done. The two coordinate over
etcd (Debian's etcd-server, on loopback); everything else runs as rendered (tools/trial.py). Every figure a
trial prints is simulated (Dynamo's mocker).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpt_oss_infra.core.dynamo_graph import GraphComponent
from gpt_oss_infra.core.render.planner import CONFIG_FILE, PLANNER_ROLE


# The burst: phases one after the other, each client sending one request after another. A phase ends when the
# Planner has made the decision it waits for, or after its most seconds: the Planner decides from five or more
# observations of its workers, and how long it takes to gather them depends on how busy this machine is.
# The first phase is more than one worker serves within the trial's elastic targets, the second far less.
@dataclass(frozen=True)
class BurstPhase:
    clients: int
    until: str  # the decision that ends it: SCALED_UP or SCALED_DOWN
    most_seconds: int


SCALED_UP, SCALED_DOWN = "scaled up", "scaled back down"
BURST = (BurstPhase(96, SCALED_UP, 240), BurstPhase(2, SCALED_DOWN, 240))
PROMPT_WORDS = 500  # about as many tokens with the stand-in tokenizer (a token per character is the most)
ANSWER_TOKENS = 800
REQUEST_SECONDS = 120
ROLES = {"worker": "decode", "decode": "decode", "prefill": "prefill"}  # graph role -> the Planner's
SCALER = Path(__file__).resolve().parent / "virtual_scaler.py"

SUBSTITUTIONS = [
    "the Planner (a graph with autoscaling): its config's environment kubernetes -> virtual, and its model_name -> "
    "the local tokenizer directory (the name the trial's workers serve); its scaled workers are started and "
    "stopped by tools/virtual_scaler.py, which takes the Planner's decisions through Dynamo's VirtualConnectorClient, "
    "in place of the operator's scaling adapters",
    "the Planner's coordination: etcd (Debian's etcd-server) on 127.0.0.1 (ETCD_ENDPOINTS); the Planner gets its "
    "discovery by DYN_DISCOVERY_BACKEND and DYN_REQUEST_PLANE, as its command line takes only --config",
    "the Planner's Prometheus (PROMETHEUS_ENDPOINT, which it reads for the KV hit rate only): none here; it logs "
    "that it cannot reach it",
    "the Planner's live diagnostics dashboard (live_dashboard_port, 8080 by default, which binds 0.0.0.0): off "
    "(live_dashboard_port 0)",
]


class PlannerError(Exception):
    """The live Planner could not run; the message says why."""


def planner_component(components: list[GraphComponent]) -> GraphComponent | None:
    found = [component for component in components if component.type == PLANNER_ROLE]
    return found[0] if found else None


def local_config(config_map: dict[str, Any], model_name: str) -> dict[str, Any]:
    """The rendered Planner config as the trial runs it: the listed substitutions, nothing else changed."""
    config: dict[str, Any] = json.loads(config_map["data"][CONFIG_FILE])
    return config | {"environment": "virtual", "model_name": model_name, "live_dashboard_port": 0}


def etcd_command(data_dir: Path, client_port: int, peer_port: int) -> list[str]:
    etcd = shutil.which("etcd")
    if etcd is None:
        raise PlannerError(
            "etcd is missing: the Planner's virtual connector coordinates over etcd (apt-get install etcd-server)"
        )
    return [
        etcd,
        "--data-dir",
        str(data_dir),
        "--listen-client-urls",
        f"http://127.0.0.1:{client_port}",
        "--advertise-client-urls",
        f"http://127.0.0.1:{client_port}",
        "--listen-peer-urls",
        f"http://127.0.0.1:{peer_port}",
        "--initial-advertise-peer-urls",
        f"http://127.0.0.1:{peer_port}",
        "--initial-cluster",
        f"default=http://127.0.0.1:{peer_port}",
    ]


def scaled_workers(
    components: list[GraphComponent], local: dict[str, tuple[list[str], dict[str, str]]]
) -> dict[str, dict[str, Any]]:
    """tools/virtual_scaler.py's input: each scaled role's command line, rendered environment (as the trial moves
    it; not this process's, which the scaler adds itself, so no secret of it is written) and starting count."""
    return {
        ROLES[component.type]: {"argv": local[component.name][0], "env": local[component.name][1], "start": 1}
        for component in components
        if component.scaling_adapter
    }


def burst(port: int, model: str, made: Callable[[str], bool], phases: tuple[BurstPhase, ...] = BURST) -> dict[str, Any]:
    """The phases' load on the frontend (completions, not streamed), each until `made(phase.until)` or its most
    seconds; how many requests were answered and failed, and how long each phase lasted."""
    counts = {"answered": 0, "failed": 0}
    lock = threading.Lock()
    body = json.dumps(
        {"model": model, "prompt": "hello " * PROMPT_WORDS, "max_tokens": ANSWER_TOKENS, "stream": False}
    ).encode()

    def client(ended: threading.Event) -> None:
        while not ended.is_set():
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/completions", body, {"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=REQUEST_SECONDS) as response:
                    response.read()
                outcome = "answered"
            except OSError:
                outcome = "failed"
            with lock:
                counts[outcome] += 1

    lasted: list[int] = []
    every_client: list[threading.Thread] = []
    ended = threading.Event()
    try:
        for phase in phases:
            started = time.monotonic()
            ended = threading.Event()
            threads = [threading.Thread(target=client, args=(ended,), daemon=True) for _ in range(phase.clients)]
            for thread in threads:
                thread.start()
            every_client += threads
            reached = False
            while time.monotonic() - started < phase.most_seconds and not (reached := made(phase.until)):
                time.sleep(1)
            lasted.append(round(time.monotonic() - started))
            ended.set()  # requests in flight finish; the next phase's clients start beside them
            if not reached:
                break  # the decision never came: the later phases wait for one that follows it
    finally:
        ended.set()  # whatever stopped the phases, no client goes on sending
        for thread in every_client:
            thread.join(REQUEST_SECONDS)
    return {**counts, "phaseSeconds": lasted}


def scaled(made: list[dict[str, Any]], direction: str) -> bool:
    """Whether the decisions `made` (the scaler's, in order) scaled some role up (SCALED_UP), or scaled it up and
    then back down to the count it started from (SCALED_DOWN)."""
    for role in {role for decision in made for role in decision if role != "atSeconds"}:
        changes = [decision[role] for decision in made if role in decision]
        start = changes[0]["from"]
        peak = max(change["to"] for change in changes)
        if peak > start and (direction == SCALED_UP or changes[-1]["to"] == start):
            return True
    return False


def decisions(scaler_log: Path) -> list[dict[str, Any]]:
    """The scaler's record of the Planner's decisions, one JSON line each (its log's other lines skipped, and a
    last line the scaler is still writing)."""
    found = []
    for line in scaler_log.read_text(errors="replace").split("\n")[:-1]:
        if line.startswith('{"atSeconds"'):
            found.append(json.loads(line))
    return found
