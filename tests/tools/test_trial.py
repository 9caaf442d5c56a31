"""`make trial` (tools/trial.py): the trial stack's rendered graphs served by real Dynamo 1.6.1 on
loopback. The substitutions keep every rendered flag; a flag the real mocker refuses fails the trial
with the worker's own log; and the whole trial (agg and disagg: smoke test and benchmark; elastic: the real
Planner scaling its workers up and down under a burst) passes."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import http.server
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gpt_oss_infra.core.dynamo_graph import graph_components, render_graph
from gpt_oss_infra.core.render.manifests import ENGINE_CONFIG_MOUNT, FRONTEND_PORT
from gpt_oss_infra.tools import trial, trial_planner
from gpt_oss_infra.tools.trial import DISCOVERY_FLAGS, Places, TrialError, local_command, local_env, local_job_env

# The tests reading `deployments` on one worker (make test's --dist loadgroup), so that the trial stack is
# planned once, not once per worker (tests/test_workers.py).
ONE_PLAN = pytest.mark.xdist_group("trial-plan")


@pytest.fixture(scope="module")
def deployments():
    return {d.name: d for d in trial.rendered_deployments(trial.plan_manifests("trial"))}


@pytest.fixture
def places(tmp_path):
    return Places.under(tmp_path, tmp_path / "tokenizer", 18000)


@ONE_PLAN
def test_the_trial_stack_renders_both_modes_with_their_jobs_and_an_elastic_graph(deployments):
    assert sorted(deployments) == ["agg", "disagg", "elastic"]
    for deployment in deployments.values():
        assert deployment.smoke_test and deployment.config_map
        assert {"smoke_test.py", "benchmark.sh"} <= set(deployment.scripts)
    assert deployments["agg"].benchmark and deployments["disagg"].benchmark
    assert deployments["elastic"].planner_config and not deployments["agg"].planner_config
    assert [c.name for c in graph_components(deployments["elastic"].graph) if c.scaling_adapter] == ["MockerWorker"]


@ONE_PLAN
def test_no_rendered_flag_is_dropped_and_only_the_listed_values_change(deployments, places):
    """Each component's local line is its rendered line, token for token, with the listed values
    replaced in place (interpreter, model path and name, port, in-cluster paths), then the discovery
    flags; its environment keeps every rendered variable."""
    changed = set()
    for deployment in deployments.values():
        for component in graph_components(deployment.graph):
            if component.type == "planner":
                continue  # its own line: test_the_planner_runs_its_rendered_line_with_the_listed_changes
            rendered = component.main["command"] + component.main["args"]
            frontend = component.type == "frontend"
            local = local_command(rendered, places, frontend)
            added = DISCOVERY_FLAGS + (["--http-host", "127.0.0.1"] if frontend else [])
            assert local[len(rendered) :] == added
            for before, after in zip(rendered, local, strict=False):
                if before.startswith("--"):
                    assert after == before  # every flag name, in its place
                elif after != before:
                    changed.add(before)
            rendered_env = {e["name"]: e["value"] for e in component.main.get("env", [])}
            assert set(rendered_env) <= set(local_env(rendered_env, places))
    snapshot = "/opt/models/hub/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
    assert changed == {
        "python3",
        snapshot,
        "openai/gpt-oss-120b",
        str(FRONTEND_PORT),
        f"{ENGINE_CONFIG_MOUNT}/h200-agg-low-latency-1gpu.npz",
        f"{ENGINE_CONFIG_MOUNT}/b200-disagg-1p4d.npz",
    }


@ONE_PLAN
def test_the_planner_runs_its_rendered_config_with_the_listed_changes_only(deployments):
    rendered = json.loads(deployments["elastic"].planner_config["data"]["planner_config.json"])
    local = trial_planner.local_config(deployments["elastic"].planner_config, "/tmp/tokenizer")
    assert rendered["environment"] == "kubernetes" and rendered["model_name"] == "openai/gpt-oss-120b"
    differ = {key for key in rendered if local[key] != rendered[key]}
    assert differ == {"environment", "model_name"} and set(local) == set(rendered) | {"live_dashboard_port"}
    assert (local["environment"], local["model_name"], local["live_dashboard_port"]) == ("virtual", "/tmp/tokenizer", 0)


@ONE_PLAN
def test_the_scaler_gets_the_scaled_workers_local_lines(deployments, places):
    components = graph_components(deployments["elastic"].graph)
    local = {c.name: trial.local_process(c, places) for c in components if c.type != "planner"}
    scaled = trial_planner.scaled_workers(components, local)
    assert list(scaled) == ["decode"]  # an aggregated worker is the Planner's decode role
    assert scaled["decode"]["argv"] == local["MockerWorker"][0] and scaled["decode"]["start"] == 1


def test_a_planner_that_does_not_scale_fails_the_trial_with_its_decisions(tmp_path, places, monkeypatch):
    (tmp_path / "elastic-scaler.log").write_text('some log line\n{"atSeconds": 40.1, "decode": {"from": 1, "to": 2}}\n')
    processes = trial.Processes(tmp_path)
    monkeypatch.setattr(trial_planner, "burst", lambda port, model, made, ticks: {"answered": 9, "failed": 0})
    with pytest.raises(TrialError, match=r"did not scale up and back down under the burst.*prompts it observed.*none"):
        trial.planner_burst("elastic", places, processes)
    (tmp_path / "elastic-planner.log").write_text(
        "FPM decode engine 1:dp0: wall_time=0.0442s, sched(prefill_tok=350, prefill_req=14, decode_kv=72068)\n"
    )
    with pytest.raises(TrialError, match=r"prompts it observed .*: \['FPM decode engine 1:dp0: wall_time=0.0442s"):
        trial.planner_burst("elastic", places, processes)
    (tmp_path / "elastic-scaler.log").write_text(
        '{"atSeconds": 40.1, "decode": {"from": 1, "to": 2}}\n{"atSeconds": 90.0, "decode": {"from": 2, "to": 1}}\n'
    )
    found = trial.planner_burst("elastic", places, processes)
    assert [d["decode"]["to"] for d in found["decisions"]] == [2, 1] and found["burst"]["answered"] == 9


def test_a_decision_is_read_only_once_the_scaler_has_written_its_whole_line(tmp_path):
    log = tmp_path / "elastic-scaler.log"
    log.write_text('{"atSeconds": 40.1, "decode": {"from": 1, "to": 2}}\n{"atSeconds": 90.0, "deco')
    assert trial_planner.decisions(log) == [{"atSeconds": 40.1, "decode": {"from": 1, "to": 2}}]


def test_scaled_up_and_back_down_follow_each_role_from_where_it_started():
    up = {"atSeconds": 40.1, "decode": {"from": 1, "to": 2}}
    higher = {"atSeconds": 50.0, "decode": {"from": 2, "to": 3}}
    down = {"atSeconds": 90.0, "decode": {"from": 3, "to": 2}}
    back = {"atSeconds": 95.0, "decode": {"from": 2, "to": 1}}
    again = {"atSeconds": 99.0, "decode": {"from": 1, "to": 2}}
    prefill_down = {"atSeconds": 95.0, "prefill": {"from": 2, "to": 1}}
    cases = [
        ([], (False, False)),
        ([up], (True, False)),
        ([up, higher], (True, False)),
        ([up, higher, down], (True, False)),  # down, but not yet to where it started
        ([up, higher, down, back], (True, True)),
        ([up, back, again], (True, False)),  # back, then up again: the last count is not the start
        ([prefill_down], (False, False)),  # down from where it started is not back down
        ([up, prefill_down], (True, False)),  # decode went up, prefill down: no role did both
    ]
    for made, expected in cases:
        found = tuple(trial_planner.scaled(made, way) for way in (trial_planner.SCALED_UP, trial_planner.SCALED_DOWN))
        assert found == expected, made


class StandInFrontend:
    """A frontend stood in on loopback: each POST streams (chunked, as server-sent events) a token every 20 ms until
    `answer_tokens` (then [DONE]), until `cut_after` tokens (then it drops the connection mid-chunk), or until the
    client closes its stream; it records when each request arrived and how each ended."""

    def __init__(self, answer_tokens: int | None = None, cut_after: int | None = None):
        self.requests: list[dict] = []
        frontend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def chunk(self, data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def do_POST(self):
                request = {"path": self.path, "arrived": time.monotonic(), "ended": None}
                frontend.requests.append(request)
                try:
                    request["body"] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                except ValueError:  # closed before its body was sent
                    request["ended"] = "closed by the client"
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for sent in itertools.count():
                        if sent == answer_tokens:
                            self.chunk(b"data: [DONE]\n\n")
                            self.wfile.write(b"0\r\n\r\n")
                            request["ended"] = "answered"
                            return
                        if sent == cut_after:
                            self.wfile.write(b"40\r\ndata: {")  # a chunk of 64 bytes announced, 7 sent
                            self.wfile.flush()
                            self.connection.shutdown(socket.SHUT_RDWR)
                            self.close_connection = True
                            request["ended"] = "cut off"
                            return
                        self.chunk(b'data: {"choices": [{"text": "w"}]}\n\n')
                        time.sleep(0.02)
                except OSError:
                    request["ended"] = "closed by the client"
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_):
        self.server.shutdown()
        self.server.server_close()
        return False


class Ticks:
    """The Planner's ticks stood in: one every `seconds`, the last `since` seconds ago, counted as
    trial_planner.ticks_logged counts them."""

    def __init__(self, seconds: float, since: float = 0.0):
        self.started, self.seconds = time.monotonic() - since, seconds

    def __call__(self) -> int:
        return self.interval(time.monotonic())

    def interval(self, when: float) -> int:
        """Which interval between ticks `when` falls in: the number of ticks before it."""
        return int((when - self.started) / self.seconds)


def wait_for_requests(frontend: StandInFrontend, count: int) -> None:
    """Until `count` requests have arrived (at most 10 s)."""
    _wait_until(lambda: len(frontend.requests) >= count)


def wait_until_every_stream_ended(frontend: StandInFrontend) -> None:
    """Until the stand-in has seen each stream end (at most 10 s): a closed one on its next write."""
    _wait_until(lambda: all(r["ended"] is not None for r in frontend.requests))


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_each_phase_starts_just_after_a_tick_and_its_streams_are_closed_at_its_decision():
    """Each phase's prompts arrive together just after one of the Planner's ticks and well before the next, one
    streamed request per client that outlasts the phase; once the Planner has made the phase's decision, every
    stream is closed (the frontend cancels it). Clients sending one request after another had put prompts into
    passes at random, and a tick that landed on one left Dynamo 1.6.1's Planner with no ITL estimate."""
    asked = []
    with StandInFrontend() as frontend:
        phases = (
            trial_planner.BurstPhase(3, trial_planner.SCALED_UP, 60),
            trial_planner.BurstPhase(1, trial_planner.SCALED_DOWN, 60),
        )
        ticks = Ticks(1.0, since=0.5)  # a burst started now, not at a tick, would send its prompts mid-interval
        started = ticks()

        def made(direction):
            asked.append(direction)
            wait_for_requests(frontend, 3 if len(asked) == 1 else 4)  # each client's stream has arrived
            return True

        load = trial_planner.burst(frontend.port, "m", made, ticks, phases)
        wait_until_every_stream_ended(frontend)
    assert asked == [trial_planner.SCALED_UP, trial_planner.SCALED_DOWN] and load["phaseSeconds"] == [0, 0]
    assert [r["ended"] for r in frontend.requests] == ["closed by the client"] * 4
    assert (load["answered"], load["closed"], load["failed"]) == (0, 4, 0) and load["tokens"] > 0
    assert {r["path"] for r in frontend.requests} == {"/v1/completions"}
    body = frontend.requests[0]["body"]
    assert body["stream"] is True and body["max_tokens"] == trial_planner.ANSWER_TOKENS
    # The first phase's prompts waited for the next tick (not sent in the interval the burst started in), and the
    # second phase's for the tick after its decision (not sent in the first phase's interval).
    intervals = [ticks.interval(r["arrived"]) for r in frontend.requests]
    assert intervals == [started + 1] * 3 + [started + 2], intervals


def test_a_request_answered_within_its_phase_is_followed_by_the_next_just_after_a_tick():
    """A request the frontend answers while its phase runs is counted, and the client sends the next just after the
    Planner's next tick, not at once: a prompt sent mid-interval is what a tick must not observe."""
    with StandInFrontend(answer_tokens=2) as frontend:
        ticks = Ticks(0.25)
        phase = (trial_planner.BurstPhase(1, trial_planner.SCALED_UP, 1),)
        load = trial_planner.burst(frontend.port, "m", lambda direction: False, ticks, phase)
    assert load["answered"] >= 1 and load["failed"] == 0 and load["tokens"] >= 2 * load["answered"]
    intervals = [ticks.interval(r["arrived"]) for r in frontend.requests]  # one request an interval, in order
    assert len(intervals) >= 2 and intervals == sorted(set(intervals)), intervals
    assert load["sentWithoutTick"] == 0


def test_a_stream_cut_off_or_refused_while_its_phase_runs_fails():
    """A stream the frontend drops mid-chunk (http.client raises IncompleteRead, not an OSError: it had ended the
    client's thread uncounted) and a refused connection each count as failed."""
    phase = (trial_planner.BurstPhase(1, trial_planner.SCALED_UP, 1),)
    with StandInFrontend(cut_after=3) as frontend:
        load = trial_planner.burst(frontend.port, "m", lambda direction: False, Ticks(0.1), phase)
    assert frontend.requests[0]["ended"] == "cut off"
    assert load["failed"] >= 1 and load["answered"] == 0 and load["failed"] + load["closed"] == len(frontend.requests)
    with StandInFrontend() as frontend:
        frontend.server.shutdown()  # nothing listens on its port any more: each connection is refused
        frontend.server.server_close()
        load = trial_planner.burst(frontend.port, "m", lambda direction: False, Ticks(0.1), phase)
    assert load["failed"] >= 1 and load["answered"] == 0


def test_a_burst_whose_decision_never_comes_stops_there_and_stops_its_clients():
    """No scale-up within the first phase: the second (waiting for a scale-down after it) is not run. And a
    failure while waiting stops every client before it propagates."""
    phases = (
        trial_planner.BurstPhase(2, trial_planner.SCALED_UP, 1),
        trial_planner.BurstPhase(1, trial_planner.SCALED_DOWN, 60),
    )
    with StandInFrontend() as frontend:
        started = time.monotonic()
        load = trial_planner.burst(frontend.port, "m", lambda direction: False, Ticks(0.2), phases)
        assert load["phaseSeconds"] == [1] and time.monotonic() - started < 30 and len(frontend.requests) == 2

        def unreadable(direction):
            raise ValueError("a scaler log line that is not JSON")

        with pytest.raises(ValueError, match="not JSON"):
            trial_planner.burst(frontend.port, "m", unreadable, Ticks(0.2), phases)
        assert not [thread for thread in threading.enumerate() if thread.name.endswith("(client)")]
        wait_until_every_stream_ended(frontend)
        assert [r["ended"] for r in frontend.requests] == ["closed by the client"] * len(frontend.requests)


def test_a_phase_waits_for_the_next_tick_at_most_its_bound_and_says_so(monkeypatch):
    """A Planner that logs no tick delays a phase by TICK_SECONDS, no more, and the requests sent then are
    counted as sent without a tick (the trial prints how many)."""
    monkeypatch.setattr(trial_planner, "TICK_SECONDS", 0.3)
    started = time.monotonic()
    assert trial_planner.next_tick(lambda: 7) is False
    assert 0.3 <= time.monotonic() - started < 5
    assert trial_planner.next_tick(Ticks(0.1)) is True
    with StandInFrontend() as frontend:
        phase = (trial_planner.BurstPhase(2, trial_planner.SCALED_UP, 1),)
        load = trial_planner.burst(frontend.port, "m", lambda direction: False, lambda: 7, phase)
    assert load["sentWithoutTick"] == 2 and load["closed"] == 2


def test_the_passes_holding_prompts_the_planner_observed_are_read_from_its_log(tmp_path):
    log = tmp_path / "elastic-planner.log"
    assert trial_planner.prompts_observed(log) == []  # not started yet
    fpm = "\x1b[2mruntime_provider._log_fpm\x1b[0m: FPM decode engine 1:dp0: wall_time={}s, sched(prefill_tok={}, "
    log.write_text(
        fpm.format("0.0244", "0")
        + "prefill_req=0, decode_kv=326216, decode_req=96), queued(prefill_tok=0)\n"
        + fpm.format("0.0442", "350")
        + "prefill_req=14, decode_kv=72068, decode_req=24), queued(prefill_tok=0)\n"
    )
    (found,) = trial_planner.prompts_observed(log)
    assert found.startswith("FPM decode engine 1:dp0: wall_time=0.0442s") and "prefill_req=14," in found


def test_the_planners_ticks_are_its_summary_lines(tmp_path):
    log = tmp_path / "elastic-planner.log"
    assert trial_planner.ticks_logged(log) == 0  # not started yet
    log.write_text(
        "INFO base._log_decision_summary: [summary] HOLD | current: prefill=0 decode=1\n"
        "INFO runtime_provider._log_fpm: FPM decode engine 1:dp0: wall_time=0.0244s\n"
        "INFO base._log_decision_summary: [summary] SCALE_UP | current: prefill=0 decode=1\n"
    )
    assert trial_planner.ticks_logged(log) == 2


def test_aiperf_is_installed_unless_an_earlier_trial_installed_its_pinned_version(monkeypatch, tmp_path):
    """The trial installs the benchmark's aiperf before any Job runs; once the pinned version is there with its
    command, pip is not run again (its look at what is installed cost 6 CPU-seconds per trial). Where
    `pip install --user` puts it is asked of the base interpreter's own `site`."""
    pinned = trial.load_catalog().benchmark.aiperf
    base = getattr(sys, "_base_executable", sys.executable)
    where = [base, "-c", "import site; print(site.getusersitepackages())"]
    user_site = subprocess.run(
        where, env={"PYTHONUSERBASE": str(tmp_path)}, capture_output=True, text=True, check=True
    ).stdout.strip()
    ran: list[list[str]] = []
    monkeypatch.setattr(trial, "USERBASE", tmp_path)
    monkeypatch.setattr(trial.subprocess, "run", lambda command, **_: ran.append(command))
    dist_info = Path(user_site) / "aiperf.dist-info"
    dist_info.mkdir(parents=True)
    (tmp_path / "bin").mkdir()
    command = tmp_path / "bin" / "aiperf"
    for installed, with_command, pip_runs in (
        (None, False, True),  # nothing installed
        ("0.0.1", True, True),  # another version
        (pinned, False, True),  # pip stopped before the package's console scripts
        (pinned, True, False),  # the pinned version, installed through its command
    ):
        if installed:
            (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: aiperf\nVersion: {installed}\n")
        if with_command:
            command.write_text("")
        else:
            command.unlink(missing_ok=True)
        ran.clear()
        trial.install_aiperf()
        assert [line[-1] for line in ran] == ([f"aiperf=={pinned}"] if pip_runs else []), (installed, with_command)


@pytest.mark.parametrize("namespace", [True, False])
def test_aiperf_is_installed_before_the_rerun_and_where_there_is_no_namespace(monkeypatch, tmp_path, namespace):
    """The Jobs' pip runs with PIP_NO_DEPS, so aiperf and what it needs must be there first: main() installs it
    before the rerun in the network namespace (which has no network), and before running here where the system
    refuses a namespace."""
    steps: list[str] = []
    monkeypatch.delenv(trial.IN_PRIVATE_NETWORK, raising=False)
    monkeypatch.setattr(trial.signal, "signal", lambda *_: None)  # main's SIGTERM handler stays out of pytest
    monkeypatch.setattr(trial, "install_aiperf", lambda: steps.append("install"))
    monkeypatch.setattr(
        trial, "rerun_in_private_network", lambda argv: steps.append("rerun") or (0 if namespace else None)
    )
    monkeypatch.setattr(trial, "VENV", tmp_path)  # without namespace: stops at the missing venv, before planning
    assert trial.main([]) == (0 if namespace else 2)
    assert steps == ["install", "rerun"]


def test_aiperf_that_pip_cannot_install_ends_the_trial_with_a_message(monkeypatch, capsys):
    def failing_pip() -> None:
        raise subprocess.CalledProcessError(1, ["pip"])

    monkeypatch.delenv(trial.IN_PRIVATE_NETWORK, raising=False)
    monkeypatch.setattr(trial.signal, "signal", lambda *_: None)
    monkeypatch.setattr(trial, "install_aiperf", failing_pip)
    monkeypatch.setattr(trial, "rerun_in_private_network", lambda argv: pytest.fail("ran without aiperf"))
    assert trial.main([]) == 1
    assert capsys.readouterr().err == "trial failed: pip could not install the benchmark's aiperf (exit 1)\n"


def test_without_etcd_the_trial_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(trial_planner.shutil, "which", lambda name: None)
    with pytest.raises(trial_planner.PlannerError, match="apt-get install etcd-server"):
        trial_planner.etcd_command(tmp_path, 1, 2)


@ONE_PLAN
def test_the_jobs_environment_changes_only_as_listed(deployments, places):
    job = deployments["disagg"].benchmark
    rendered = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    local = local_job_env(rendered, places)
    # One variable added: the aiperf the trial installed, with its dependencies, is checked alone.
    assert set(local) == set(rendered) | {"PIP_NO_DEPS"} and local["PIP_NO_DEPS"] == "1"
    # Only there: another Job's pip (the model download's, say) would need its dependencies.
    download = {"PYTHONUSERBASE": f"{trial.SCRATCH_MOUNT}/pip", "HF_HUB_VERSION": "0.36.0"}
    assert "PIP_NO_DEPS" not in local_job_env(download, places)
    differ = {name for name in rendered if local[name] != rendered[name]}
    assert differ == {
        "ENDPOINT",
        "MODEL",
        "TOKENIZER",
        "REQUEST_COUNT",
        "ARTIFACT_DIR",
        "HF_HOME",
        "HOME",
        "PYTHONUSERBASE",
    }
    assert local["ENDPOINT"] == "127.0.0.1:18000" and local["MODEL"] == str(places.tokenizer)
    assert local["REQUEST_COUNT"] == str(trial.SHORT_RUN_ROUNDS * int(rendered["CONCURRENCY"]))
    assert (local["CONCURRENCY"], local["ISL"], local["OSL"]) == ("8", "8192", "1024")  # the recipe's, unchanged


@ONE_PLAN
def test_the_smoke_test_checks_the_frontend_only_here_its_gateway_settings_dropped(deployments, places):
    """No Envoy Gateway or NLB on this machine: the listed substitution, and nothing else of the Job's."""
    job = deployments["agg"].smoke_test
    rendered = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert {"GATEWAY_SERVICE", "GATEWAY_PORT", "API_KEY_FILE", "SERVICE_ACCOUNT_DIR"} <= set(rendered)
    local = local_job_env(rendered, places)
    assert set(local) == {name for name in rendered if not name.startswith(trial.GATEWAY_ENV)}
    assert set(local) == {"ENDPOINT", "MODEL", "MAX_TOKENS", "DEADLINE_SECONDS", "PYTHONUNBUFFERED", "SIMULATED"}


@pytest.mark.end_to_end
@ONE_PLAN
def test_a_flag_the_real_mocker_refuses_fails_the_trial_with_its_log(deployments, places, tmp_path):
    graph = copy.deepcopy(deployments["agg"].graph)
    components = graph_components(graph)
    (worker,) = [c for c in components if c.name == "MockerWorker"]
    worker.main["args"].append("--block-sise")
    broken_graph = render_graph(graph["apiVersion"], graph["metadata"], None, components)
    broken = dataclasses.replace(deployments["agg"], graph=broken_graph)
    trial.write_tokenizer(places.tokenizer, trial.load_catalog().model)
    places = Places(**{**places.__dict__, "port": trial.free_port()})
    with pytest.raises(TrialError) as failed:
        trial.serve(broken, places, tmp_path, trial.base_python_bin(tmp_path / "bin"))
    message = str(failed.value)
    assert "agg-MockerWorker-0 exited before the model was listed" in message
    assert "unrecognized arguments: --block-sise" in message  # the worker's own log, in the failure
    assert not _ours_running(tmp_path)  # and nothing left behind


def _ours_running(work) -> list[str]:
    """The command lines of the processes whose command line or environment points into this test's directory."""
    return list(_ours(work).values())


def _ours(work) -> dict[int, str]:
    """pid -> command line of each process whose command line or environment points into `work` (the
    frontend's names it only in DYN_FILE_KV, aiperf's workers only in HOME)."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command_line, environment = (proc / "cmdline").read_bytes(), (proc / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if str(work).encode() in command_line + environment:
            found[int(proc.name)] = command_line.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


@pytest.mark.end_to_end
def test_the_trial_serves_every_deployment_and_reports_simulated_figures(capsys, tmp_path):
    """The whole of `make trial`: the output it promises, and nothing left running."""
    aiperf_left_before = set(Path(tempfile.gettempdir()).glob("aiperf_mmap_*"))
    assert trial.main(["--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for line in trial.SUBSTITUTIONS:
        assert line in out
    assert trial.TOKENIZER_NOTE in out
    for name in ("agg", "disagg", "elastic"):
        assert f"==> {name}: " in out and f"  {name} done in " in out
    assert out.count("  smoke test: ok: ") == 3
    # The real Planner scaled the elastic graph's workers up under the burst and back down (planner_burst checks
    # the order; its decisions, printed):
    assert "  the Planner's decision at " in out and "decode 1 -> " in out and "-> 1\n" in out
    assert out.count("  benchmark (simulated): ") == 2 and "TTFT p50/p90/p99" in out and "ITL p50/p90/p99" in out
    assert "==> trial passed in " in out
    assert not _ours_running(tmp_path)
    if subprocess.run([*trial.PRIVATE_NETWORK, "true"], capture_output=True, check=False).returncode == 0:
        assert f"==> {trial.PRIVATE_NETWORK_NOTE}: lo\n" in out  # nothing reachable from another host
    # Every benchmark request its own prompt: a tokenizer that maps them alike makes prefix-cache hits of them all.
    benchmark_inputs = sorted(tmp_path.rglob("inputs.json"))
    assert len(benchmark_inputs) == 2
    for inputs in benchmark_inputs:
        prompts = [json.dumps(item) for item in json.loads(inputs.read_text())["data"]]
        assert len(set(prompts)) == len(prompts) >= 4
    # The benchmarks' temporary files (aiperf's) went with their Jobs: none left in this machine's /tmp.
    assert set(Path(tempfile.gettempdir()).glob("aiperf_mmap_*")) <= aiperf_left_before
    # Only this process's: another trial running on the machine (a fresh-clone CI) has its own.
    assert not list(Path(tempfile.gettempdir()).glob(f"{trial.job_tmp_prefix()}*"))


def test_the_run_starts_with_the_trial_by_its_id():
    """tests/conftest.py starts the run with the trial's test, by its id: renamed, that order is lost."""
    from tests.conftest import LONGEST_TEST

    trial = test_the_trial_serves_every_deployment_and_reports_simulated_figures
    assert f"tests/tools/test_trial.py::{trial.__name__}" == LONGEST_TEST


def test_what_a_process_leaves_in_its_temporary_directory_goes_with_it(tmp_path):
    """Dynamo's processes write a temporary file on every start and never delete it (dynamo.runtime.logging's
    SGLang logging config); a trial's processes get a TMPDIR of their own, removed when they are stopped."""
    leave_one = "import tempfile; print(tempfile.NamedTemporaryFile(suffix='.json', delete=False).name)"
    processes = trial.Processes(tmp_path)
    process = processes.start("leaves-a-file", [sys.executable, "-c", leave_one], {"PATH": os.environ["PATH"]})
    process.popen.wait(timeout=30)
    left = Path(process.log.read_text().strip())
    assert left.exists() and left.parent == processes.tmp and processes.tmp.name.startswith("trial-tmp-")
    assert processes.stop() == []
    assert not left.exists() and not processes.tmp.exists()


def test_a_jobs_temporary_directory_is_named_by_this_process_and_goes_when_the_job_ends(tmp_path, places):
    """The whole trial's test looks for what its Jobs left by this name: a fresh-clone CI's trial running at the
    same time on this machine has Jobs of its own, which that check saw when the prefix was shared."""
    leave_one = "import os, tempfile; print(tempfile.NamedTemporaryFile(delete=False).name, os.environ['TMPDIR'])"
    container = {"command": [sys.executable, "-c", leave_one], "env": []}
    job = {"metadata": {"name": "leaves-a-file"}, "spec": {"template": {"spec": {"containers": [container]}}}}
    processes = trial.Processes(tmp_path)
    output = trial.run_job(job, places, tmp_path, processes, "leaves-a-file", timeout=30)
    left, job_tmp = map(Path, output.split())
    assert job_tmp.parent == Path(tempfile.gettempdir()) and job_tmp.name.startswith(f"trial-job-{os.getpid()}-")
    assert left.parent == job_tmp and not job_tmp.exists()
    assert processes.stop() == []


def test_a_group_still_exiting_after_sigkill_is_waited_for_and_one_that_stays_is_named(tmp_path, monkeypatch):
    """A process of a group other than its leader (a worker the scaler started) is gone a moment after SIGKILL, not
    at once: the trial waits for it (make trial failed with "still running after SIGKILL: elastic-scaler" when
    it looked at once), and names a group still there after KILLED_SECONDS."""
    processes = trial.Processes(tmp_path)
    processes.start("elastic-scaler", ["sleep", "30"], {})
    checks = []
    monkeypatch.setattr(trial, "_group_alive", lambda group: checks.append(group) or len(checks) < 3)
    assert processes.stop() == [] and len(checks) == 3
    processes = trial.Processes(tmp_path)
    processes.start("elastic-scaler", ["sleep", "30"], {})
    monkeypatch.setattr(trial, "_group_alive", lambda group: True)
    monkeypatch.setattr(trial, "KILLED_SECONDS", 0.3)
    started = time.monotonic()
    assert processes.stop() == ["elastic-scaler"] and 0.3 <= time.monotonic() - started < 5


def test_a_sigterm_while_a_process_starts_stops_that_process_too(tmp_path, monkeypatch):
    """SIGTERM (or Ctrl-C) arriving while subprocess.Popen starts a process, after the fork: its exception used to
    unwind past a child the trial never recorded, which outlived the trial (test_sigterm_to_the_trial... saw a
    mocker left running once). Here the signal comes at the end of the real Popen, every time; and once more
    with a Popen that then fails, whose error must not swallow the signal."""
    real_popen = subprocess.Popen
    children: list[subprocess.Popen] = []

    def popen_then_sigterm(*args, **kwargs):
        children.append(real_popen(*args, **kwargs))
        os.kill(os.getpid(), signal.SIGTERM)  # its handler runs before os.kill returns
        return children[-1]

    def sigterm_then_fail(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        raise FileNotFoundError("no such program")

    previous = signal.signal(signal.SIGTERM, trial._stop_on_sigterm)  # as main() sets it
    processes = trial.Processes(tmp_path)
    try:
        monkeypatch.setattr(trial.subprocess, "Popen", popen_then_sigterm)
        with pytest.raises(KeyboardInterrupt):
            processes.start("agg-MockerWorker-0", ["sleep", "30"], {})
        assert [process.name for process in processes.started] == ["agg-MockerWorker-0"]
        assert processes.stop() == [] and children[0].returncode == -signal.SIGTERM
        monkeypatch.setattr(trial.subprocess, "Popen", sigterm_then_fail)
        with pytest.raises(KeyboardInterrupt):
            processes.start("agg-Frontend", ["no-such-program"], {})
        assert signal.getsignal(signal.SIGTERM) is trial._stop_on_sigterm  # put back
    finally:
        signal.signal(signal.SIGTERM, previous)
        for child in children:  # whatever the trial's code did, no child outlives the test
            child.kill()
            child.wait()
        processes.stop()


@pytest.mark.end_to_end
def test_sigterm_to_the_trial_stops_everything_it_started(tmp_path):
    """`kill <pid of make trial's python>`: the rerun in its network namespace, and the Dynamo processes it
    started, stop with it. Only the rerun handled SIGTERM once, and the Dynamo processes outlived the trial."""
    trial_process = subprocess.Popen(
        [sys.executable, "-m", "gpt_oss_infra", "trial", "--only", "agg", "--keep", str(tmp_path)],
        cwd=trial.ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert trial_process.stdout is not None
        for line in trial_process.stdout:  # until the graph's processes have started
            if line.startswith("==> agg: "):
                break
        deadline = time.monotonic() + 60
        while not any("-m dynamo." in line for line in _ours_running(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert any("-m dynamo." in line for line in _ours_running(tmp_path)), _ours_running(tmp_path)
        trial_process.send_signal(signal.SIGTERM)
        trial_process.wait(timeout=60)
        assert _ours_running(tmp_path) == []
    finally:  # this test's processes stopped whatever it found
        trial_process.kill()
        for pid in _ours(tmp_path):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def mocker_flag(args: list[str], flag: str) -> int:
    return int(args[args.index(flag) + 1])


@pytest.mark.end_to_end
@ONE_PLAN
def test_the_planner_has_no_itl_estimate_once_it_has_observed_one_pass_with_prompts(deployments, tmp_path):
    """Why the burst sends every prompt just after a tick (trial_planner's burst): Dynamo 1.6.1's Planner, fed the
    observations of a CI run whose trial failed (a pass with prompts among them), has no ITL estimate for an
    aggregated worker, while fed only decode passes, as the burst makes them, it has one from the fifth pass on.
    Its own perf model, in .venv-trial, with the elastic graph's rendered Planner config and worker's engine."""
    elastic = deployments["elastic"]
    (worker,) = [c for c in graph_components(elastic.graph) if c.scaling_adapter]
    args = worker.main["args"]
    request = {
        "planner_config": trial_planner.local_config(elastic.planner_config, "/tmp/tokenizer"),
        "engine": {
            "num_gpu": 1,
            "max_num_batched_tokens": mocker_flag(args, "--max-num-batched-tokens"),
            "max_num_seqs": mocker_flag(args, "--max-num-seqs"),
            "max_kv_tokens": mocker_flag(args, "--num-gpu-blocks-override") * mocker_flag(args, "--block-size"),
            "kv_cache_block_size": mocker_flag(args, "--block-size"),
        },
    }

    def decoding(wall_time, decode_kv, requests=96, prompt_tokens=0, prompts=0):
        scheduled = {
            "num_prefill_requests": prompts,
            "sum_prefill_tokens": prompt_tokens,
            "num_decode_requests": requests,
            "sum_decode_kv_tokens": decode_kv,
        }
        return {"wall_time": wall_time, "scheduled": scheduled}

    # The failed run's first ten ticks (its Planner log: wall time, decode KV tokens; the third a pass with prompts:
    # 24 decodes beside 14 prompts of 350 tokens in all), and a passing run's first five (decode passes only).
    failed = [(0.0244, 326216), (0.0245, 345896), (0.0442, 72068, 24, 350, 14), (0.0242, 307531), (0.0244, 327307)]
    failed += [(0.0245, 346891), (0.024, 288671), (0.0242, 308639), (0.0244, 328319), (0.0245, 347999)]
    decoded = [(0.0244, 330357), (0.0245, 349941), (0.024, 291305), (0.0243, 311177), (0.0244, 330953)]
    runs = {"failed": [decoding(*seen) for seen in failed], "decoded": [decoding(*seen) for seen in decoded]}
    probe = subprocess.run(
        [str(trial.ROOT / ".venv-trial" / "bin" / "python"), "-m", "tests.tools.planner_itl_probe"],
        input=json.dumps(request | {"runs": runs}),
        capture_output=True,
        text=True,
        cwd=trial.ROOT,
        env=os.environ | {"TMPDIR": str(tmp_path)},  # the Planner's modules leave their logging configs there
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    found = json.loads(probe.stdout)
    assert found["failed"] == [None] * 10
    assert found["decoded"][:4] == [None] * 4 and 24.0 < found["decoded"][4] < 25.0  # above the 20 ms target
