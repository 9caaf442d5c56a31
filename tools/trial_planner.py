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

import contextlib
import http.client
import json
import re
import shutil
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpt_oss_infra.core.dynamo_graph import GraphComponent
from gpt_oss_infra.core.render.planner import CONFIG_FILE, PLANNER_ROLE


# The burst: phases one after the other, each client streaming one long request, closed when the phase ends (the
# frontend then cancels it). A phase ends when the Planner has made the decision it waits for, or after its most
# seconds: the Planner decides from five or more observations of its workers, and how long it takes to gather them
# depends on how busy this machine is. The first phase is more than one worker serves within the trial's elastic
# targets, the second far less.
#
# Why long requests, each sent just after one of the Planner's ticks: each tick the Planner observes each worker's
# latest forward pass. Once it has observed one that holds a prompt (a prefill), Dynamo 1.6.1's aggregated Planner
# estimates every later ITL for a pass that mixes prompts with decodes, which it can do only after five such
# observations (AISimulate's regression keeps one store per kind of pass), or once that pass has left its last 64
# observations (320 s with one worker). Clients that send one request after another put prompts into passes at
# random, and a tick that landed on one left the Planner with no ITL estimate for the rest of the burst (one CI
# run's trial failed so; docs/trial.md). Here the prompts arrive together, between two ticks, and then the
# workers only decode; a request answered within its phase is followed by the next just after a tick too.
@dataclass(frozen=True)
class BurstPhase:
    clients: int
    until: str  # the decision that ends it: SCALED_UP or SCALED_DOWN
    most_seconds: int


SCALED_UP, SCALED_DOWN = "scaled up", "scaled back down"
BURST = (BurstPhase(96, SCALED_UP, 240), BurstPhase(2, SCALED_DOWN, 240))
PROMPT_WORDS = 500  # 3,000 characters: 3,001 tokens with the stand-in tokenizer (a token per character)
# Longer than the first phase's most seconds at its pace (24-25 ms a token: about 300 s), and 96 of them within the
# mocker's KV cache (48,139 blocks of 32 tokens, 1.54 million tokens; its TensorRT-LLM scheduler admits a request
# only with room for its whole answer): 96 x 15,001 tokens = 1.44 million.
ANSWER_TOKENS = 12_000
TICK_SECONDS = 15  # the most a request waits for the Planner's next tick (one every 5 s)
CLOSE_SECONDS = 15  # the most the clients take to end once their streams are closed
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


def burst(
    port: int,
    model: str,
    made: Callable[[str], bool],
    ticks: Callable[[], int],
    phases: tuple[BurstPhase, ...] = BURST,
) -> dict[str, Any]:
    """The phases' load on the frontend, each request sent just after one of the Planner's ticks (`ticks()` counts
    them), each phase lasting until `made(phase.until)` or its most seconds. How many requests were answered,
    closed at their phase's end and failed, how many tokens were streamed, how long each phase lasted, and how many
    requests were sent without a tick seen (the Planner logged none for TICK_SECONDS)."""
    counts = {"answered": 0, "closed": 0, "failed": 0, "tokens": 0, "sentWithoutTick": 0}
    lock = threading.Lock()
    body = json.dumps(
        {"model": model, "prompt": "hello " * PROMPT_WORDS, "max_tokens": ANSWER_TOKENS, "stream": True}
    ).encode()
    open_streams: set[socket.socket] = set()  # each stream's socket (its HTTPConnection lets go of it once answering)

    def stream(ended: threading.Event) -> str | None:
        """One streamed completion: answered, closed at its phase's end, or failed; None if its phase ended first."""
        connection = http.client.HTTPConnection("127.0.0.1", port)
        sock, tokens, answered = None, 0, False
        try:
            connection.connect()
            sock = connection.sock
            with lock:  # registered for close_streams, unless it has run: then this request is not sent
                if ended.is_set():
                    return None
                open_streams.add(sock)
            connection.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            while line := response.readline():  # a server-sent event line each: a token, then [DONE]
                tokens += line.startswith(b"data: {")
                answered = answered or (response.status == 200 and line.startswith(b"data: [DONE]"))
        except (OSError, http.client.HTTPException):  # closed, refused, or cut off mid-answer
            pass
        finally:
            with lock:
                open_streams.discard(sock)
                counts["tokens"] += tokens
            connection.close()
        return "answered" if answered else "closed" if ended.is_set() else "failed"

    def client(ended: threading.Event, ticked: bool) -> None:
        while not ended.is_set():
            with lock:
                counts["sentWithoutTick"] += not ticked
            outcome = stream(ended)
            if outcome is None:
                return
            with lock:
                counts[outcome] += 1
            if outcome == "failed":
                ended.wait(1)  # a frontend that refuses is not asked again at once
            ticked = next_tick(ticks) if outcome == "answered" else True

    def close_streams(ended: threading.Event) -> None:
        """The phase's streams closed: each client's read ends, and the frontend cancels its request."""
        ended.set()
        with lock:
            for sock in open_streams:
                with contextlib.suppress(OSError):  # closed already
                    sock.shutdown(socket.SHUT_RDWR)

    lasted: list[int] = []
    every_client: list[threading.Thread] = []
    ended = threading.Event()
    try:
        for phase in phases:
            ticked = next_tick(ticks)
            started = time.monotonic()
            ended = threading.Event()
            threads = [threading.Thread(target=client, args=(ended, ticked), daemon=True) for _ in range(phase.clients)]
            for thread in threads:
                thread.start()
            every_client += threads
            reached = False
            while time.monotonic() - started < phase.most_seconds and not (reached := made(phase.until)):
                time.sleep(1)
            lasted.append(round(time.monotonic() - started))
            close_streams(ended)
            if not reached:
                break  # the decision never came: the later phases wait for one that follows it
    finally:
        close_streams(ended)  # whatever stopped the phases, no client goes on streaming
        closed_by = time.monotonic() + CLOSE_SECONDS
        for thread in every_client:
            thread.join(max(closed_by - time.monotonic(), 0))
    return {**counts, "phaseSeconds": lasted}


def next_tick(ticks: Callable[[], int]) -> bool:
    """Return just after the Planner's next tick (True), or after TICK_SECONDS without one (False)."""
    seen = ticks()
    deadline = time.monotonic() + TICK_SECONDS
    while ticks() == seen:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def ticks_logged(planner_log: Path) -> int:
    """How many ticks the Planner has logged (Dynamo 1.6.1 logs one `[summary]` line a tick)."""
    return _text(planner_log).count("[summary]")


def prompts_observed(planner_log: Path) -> list[str]:
    """The forward passes holding prompts that the Planner observed (Dynamo 1.6.1 logs each it observes): after
    one, it has no ITL estimate for an aggregated worker until it has observed five."""
    passes = re.findall(r"FPM \w+ engine [^\n]*", _text(planner_log))
    return [line for line in passes if "prefill_req=0," not in line]


def _text(log: Path) -> str:
    return log.read_text(errors="replace") if log.exists() else ""  # none before its process has started


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
