"""`make trial`: the trial stack's rendered graphs served by real Dynamo on this machine, on loopback.

Plans the trial stack (configs/examples/Pulumi.trial.yaml) with the program itself, then, for each of
its DynamoGraphDeployments (aggregated and disaggregated), starts the real Dynamo 1.6.1 frontend and
mocker workers (the pinned ai-dynamo wheels, in .venv-trial) from the command lines and environment of
the rendered graph, runs the project's smoke-test and benchmark scripts from the rendered Jobs against
that frontend, prints what they report, and stops every process it started.

What cannot hold off the cluster is replaced by the fixed substitutions of `SUBSTITUTIONS`, printed
by every run; every other flag and variable of the rendered objects passes unchanged (the tests check
that no rendered flag is dropped). gpt-oss-120b's tokenizer cannot be downloaded here (no network but
the package index): a small stand-in tokenizer with the model's config is made, and the run says so.
The mocker emits token ids, which the stand-in decodes to placeholder words. The run happens in a
network namespace of its own where the system allows one (PRIVATE_NETWORK). Every throughput and
latency it prints is simulated.

    python -m tools.trial [--stack trial] [--only agg|disagg] [--keep DIR]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import importlib.metadata
import json
import os
import shutil
import signal
import socket
import string
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpt_oss_infra.core.checks.validation import DGD_KIND
from gpt_oss_infra.core.dynamo_graph import GraphComponent, graph_components
from gpt_oss_infra.core.inputs.catalog import ModelSpec, load_catalog
from gpt_oss_infra.core.render.manifests import ENGINE_CONFIG_MOUNT, FRONTEND_PORT, MODEL_CACHE_MOUNT
from gpt_oss_infra.core.render.model_cache import SCRATCH_MOUNT
from gpt_oss_infra.core.render.planner import CONFIG_FILE, planner_config_name
from gpt_oss_infra.core.render.scripts import SCRIPT_MOUNT
from gpt_oss_infra.tools import trial_planner
from gpt_oss_infra.tools.plan import ROOT, plan_files

VENV = ROOT / ".venv-trial"
USERBASE = VENV / "userbase"  # where benchmark.sh's `pip install --user aiperf` lands, kept between runs
READY_SECONDS = 120  # for the frontend to list the model once the processes start
STOP_SECONDS = 10  # after SIGTERM, before SIGKILL
# After SIGKILL: a process of a group other than its leader (the scaler's workers) exits, and is reaped by whoever
# adopted it, a moment after the signal; until then the group is still there.
KILLED_SECONDS = 5
SHORT_RUN_ROUNDS = 2  # benchmark requests per concurrent stream (the Job sends its recipe's 10)
SMOKE_DEADLINE_SECONDS = "120"
TOKENIZER_NOTE = (
    "gpt-oss-120b's tokenizer cannot be downloaded here: a stand-in is made (a token per character of a prompt, "
    "then words up to gpt-oss-120b's vocabulary size; its config.json figures); the mocker's token ids decode to "
    "stand-in words"
)

# What differs from the cluster, and why; printed by every run. Nothing else is changed.
SUBSTITUTIONS = [
    "python3 (the image's) -> .venv-trial's Python, with the pinned ai-dynamo and ai-dynamo-runtime 1.6.1 wheels",
    "discovery: every component gets --discovery-backend file --request-plane tcp --event-plane zmq and DYN_FILE_KV "
    "(a temporary directory); in a cluster the operator injects Kubernetes discovery and NATS",
    "loopback: DYN_TCP_RPC_HOST, DYN_EVENT_PLANE_HOST, DYN_TCP_RESPONSE_STREAM_HOST and DYN_SYSTEM_HOST are "
    "127.0.0.1, and the frontend gets --http-host 127.0.0.1",
    f"port: the frontend's --http-port {FRONTEND_PORT} -> a free port; the Jobs' ENDPOINT "
    f"(<frontend service>:{FRONTEND_PORT}) -> 127.0.0.1:<that port>",
    "model: --model-path (the snapshot under the model cache) and --model-name and the Jobs' MODEL and TOKENIZER "
    "(a hub name the frontend would fetch from Hugging Face) -> the local tokenizer directory",
    f"in-cluster paths: {ENGINE_CONFIG_MOUNT} (the engine-config ConfigMap) and {SCRIPT_MOUNT} (the scripts' "
    f"ConfigMaps) -> local copies of those ConfigMaps; {MODEL_CACHE_MOUNT} (HF_HOME, ARTIFACT_DIR) -> a temporary "
    f"directory; the Jobs' HOME and PYTHONUSERBASE ({SCRATCH_MOUNT}) -> a temporary directory and .venv-trial/userbase",
    "the Jobs' image (python:3.12 slim) -> this machine's Python, as python3 and pip on PATH",
    "the benchmark's `pip install --user aiperf` gets PIP_NO_DEPS=1: the trial installed that aiperf and what "
    "it needs beforehand (from outside the network namespace, which has no network), so pip checks aiperf "
    "alone, not its transitive dependencies against this machine's Python, which are not the image's",
    f"short run: the benchmark's REQUEST_COUNT -> {SHORT_RUN_ROUNDS} x CONCURRENCY; the smoke test's "
    f"DEADLINE_SECONDS -> {SMOKE_DEADLINE_SECONDS}",
    "the gateway: none here (Envoy Gateway, the NLB): the smoke test's gateway settings (GATEWAY_*, API_KEY_FILE, "
    "SERVICE_ACCOUNT_DIR) are dropped, so it checks the frontend only; tests/jobs checks its gateway "
    "part against stand-ins",
    *trial_planner.SUBSTITUTIONS,
]
GATEWAY_ENV = ("GATEWAY_", "API_KEY_FILE", "SERVICE_ACCOUNT_DIR")
DISCOVERY_FLAGS = ["--discovery-backend", "file", "--request-plane", "tcp", "--event-plane", "zmq"]
LOOPBACK_ENV = dict.fromkeys(
    ("DYN_TCP_RPC_HOST", "DYN_EVENT_PLANE_HOST", "DYN_TCP_RESPONSE_STREAM_HOST", "DYN_SYSTEM_HOST"), "127.0.0.1"
)


# Dynamo's runtime binds its ZMQ event publishers to 0.0.0.0 whatever DYN_EVENT_PLANE_HOST says (it
# only advertises that address): the trial runs in a network namespace of its own, where loopback
# is the only interface, wherever the system lets an unprivileged user make one.
PRIVATE_NETWORK = ["unshare", "--net", "--map-root-user"]
IN_PRIVATE_NETWORK = "GPT_OSS_TRIAL_PRIVATE_NETWORK"  # set for the rerun inside the namespace
PRIVATE_NETWORK_NOTE = (
    "in a network namespace of its own: loopback is its only interface, nothing here is reachable from another host"
)
NO_PRIVATE_NETWORK_NOTE = (
    "WARNING: no private network namespace here (`unshare --net --map-root-user` refused): Dynamo's ZMQ event "
    "publishers bind 0.0.0.0 on this machine's interfaces"
)


class TrialError(Exception):
    """A step failed; the message says which, with the logs of the processes involved."""


@dataclass(frozen=True)
class Places:
    """Where the in-cluster paths, names and ports point on this machine."""

    python: str  # .venv-trial's interpreter
    tokenizer: Path
    config_dir: Path  # the engine-config ConfigMap's files
    scripts: Path  # the scripts' ConfigMaps' files
    scratch: Path
    discovery: Path
    port: int

    @classmethod
    def under(cls, directory: Path, tokenizer: Path, port: int) -> Places:
        """A deployment's places in one directory of its own, with .venv-trial's Python."""
        return cls(
            python=str(VENV / "bin" / "python"),
            tokenizer=tokenizer,
            config_dir=directory / "config",
            scripts=directory / "scripts",
            scratch=directory / "scratch",
            discovery=directory / "discovery",
            port=port,
        )

    def path(self, value: str) -> str:
        """An in-cluster path on this machine (model snapshot, mounts); anything else unchanged."""
        if value.startswith(f"{MODEL_CACHE_MOUNT}/hub/"):
            return str(self.tokenizer)
        for mount, local in (
            (ENGINE_CONFIG_MOUNT, self.config_dir),
            (SCRIPT_MOUNT, self.scripts),
            (MODEL_CACHE_MOUNT, self.scratch / "models"),
        ):
            if value == mount or value.startswith(f"{mount}/"):
                return str(local) + value[len(mount) :]
        return value


def local_command(argv: list[str], places: Places, frontend: bool) -> list[str]:
    """A rendered component's command line as it runs here: every token kept, in place, but the few
    that SUBSTITUTIONS name; the discovery flags (and the frontend's host) appended."""
    local = []
    for index, token in enumerate(argv):
        before = argv[index - 1] if index else None
        if index == 0 and token == "python3":
            local.append(places.python)
        elif before == "--model-name":
            local.append(str(places.tokenizer))
        elif before == "--http-port":
            local.append(str(places.port))
        else:
            local.append(places.path(token))
    return local + DISCOVERY_FLAGS + (["--http-host", "127.0.0.1"] if frontend else [])


def local_process(component: GraphComponent, places: Places) -> tuple[list[str], dict[str, str]]:
    """A rendered component's command line and environment as its process runs here (the environment its
    pod would have, moved here; its process gets this one's too)."""
    main = component.main
    argv = local_command(main["command"] + main.get("args", []), places, component.type == "frontend")
    env = {item["name"]: item["value"] for item in main.get("env", []) if "value" in item}
    return argv, local_env(env, places)


def local_env(env: dict[str, str], places: Places) -> dict[str, str]:
    """A rendered component's environment as it runs here (paths moved), plus discovery on loopback."""
    moved = {name: places.path(value) for name, value in env.items()}
    return moved | LOOPBACK_ENV | {"DYN_FILE_KV": str(places.discovery)}


def local_job_env(env: dict[str, str], places: Places) -> dict[str, str]:
    """A rendered Job's environment as it runs here."""
    local = {name: places.path(value) for name, value in env.items() if not name.startswith(GATEWAY_ENV)}
    if "ENDPOINT" in local:
        local["ENDPOINT"] = f"127.0.0.1:{places.port}"
    for name in ("MODEL", "TOKENIZER"):
        if name in local:
            local[name] = str(places.tokenizer)
    if "REQUEST_COUNT" in local:
        local["REQUEST_COUNT"] = str(SHORT_RUN_ROUNDS * int(local["CONCURRENCY"]))
    if "DEADLINE_SECONDS" in local:
        local["DEADLINE_SECONDS"] = SMOKE_DEADLINE_SECONDS
    if local.get("PYTHONUSERBASE", "").startswith(SCRATCH_MOUNT):
        local["PYTHONUSERBASE"] = str(USERBASE)
    if "AIPERF_VERSION" in local:  # the benchmark: main() installed that aiperf and what it needs
        local["PIP_NO_DEPS"] = "1"
    if local.get("HOME", "").startswith(SCRATCH_MOUNT):
        local["HOME"] = str(places.scratch / "home")
    return local


def write_tokenizer(directory: Path, model: ModelSpec) -> None:
    """A stand-in for gpt-oss-120b's tokenizer: a word-level vocabulary (tokenizers' JSON format) whose
    words carry their leading space (Metaspace, as SentencePiece's), so that text streamed token by
    token and counted again by aiperf gives the same number of tokens; a chat template; and the model's
    own config figures (layers, KV heads, head size, context)."""
    directory.mkdir(parents=True, exist_ok=True)
    special = ["<|endoftext|>", "<|start|>", "<|end|>", "<|message|>", "<|return|>"]
    # Every character of a prompt is a token of its own, so that different prompts stay different
    # (a prompt of words the vocabulary lacked would be one unknown token repeated: every request
    # alike, all prefix-cache hits); then words w<id> up to the real vocabulary's size, which the
    # mocker emits (an id the stand-in lacked would decode to nothing and go uncounted).
    characters = ["\u2581", *string.ascii_letters, *string.digits, *string.punctuation, "\n", "\t"]
    vocab = {token: index for index, token in enumerate(special + characters)}
    vocab |= {f"\u2581w{index}": index for index in range(len(vocab), model.vocab_size)}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for i, t in enumerate(special)
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
                # a mocker word whole, anything else one character at a time
                {
                    "type": "Split",
                    "pattern": {"Regex": "\u2581?w\\d+|[\\s\\S]"},
                    "behavior": "Isolated",
                    "invert": False,
                },
            ],
        },
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<|endoftext|>"},
    }
    template = (
        "{% for m in messages %}<|start|>{{ m['role'] }}<|message|>{{ m['content'] }}<|end|>{% endfor %}"
        "<|start|>assistant"
    )
    files = {
        "tokenizer.json": tokenizer,
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": "<|start|>",
            "eos_token": "<|return|>",
            "pad_token": "<|endoftext|>",
            "model_max_length": model.max_position_embeddings,
            "chat_template": template,
        },
        "config.json": {
            "architectures": ["GptOssForCausalLM"],
            "model_type": "gpt_oss",
            "num_hidden_layers": model.layers,
            "num_key_value_heads": model.kv_heads,
            "head_dim": model.head_dim,
            "sliding_window": model.sliding_window,
            "max_position_embeddings": model.max_position_embeddings,
            "vocab_size": len(vocab),
            "bos_token_id": vocab["<|start|>"],
            "eos_token_id": vocab["<|return|>"],
        },
        "generation_config.json": {"bos_token_id": vocab["<|start|>"], "eos_token_id": [vocab["<|return|>"]]},
    }
    for name, content in files.items():
        (directory / name).write_text(json.dumps(content, indent=1))


@dataclass
class Process:
    name: str
    log: Path
    popen: subprocess.Popen = field(repr=False)

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return "\n".join(f"  {self.name}| {line}" for line in text[-lines:])


class Processes:
    """Every process the trial starts, each in its own process group, all stopped on exit.

    Each gets TMPDIR in a directory of their own, removed when they are stopped: Dynamo's processes leave a
    temporary file behind on every start (dynamo.runtime.logging writes SGLang's logging config with
    delete=False). The directory is a short one under /tmp, as the default is: Unix socket paths there
    must stay within 107 bytes. A Job that brings its own TMPDIR keeps it."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.started: list[Process] = []
        self.tmp: Path | None = None  # made with the first process

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> Process:
        self.tmp = self.tmp or Path(tempfile.mkdtemp(prefix="trial-tmp-"))
        log = self.log_dir / f"{name}.log"
        with log.open("w") as out, interruptions_held():  # recorded before a SIGTERM can unwind past it
            popen = subprocess.Popen(
                argv,
                env={"TMPDIR": str(self.tmp)} | env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            process = Process(name, log, popen)
            self.started.append(process)
        return process

    def failed(self) -> list[Process]:
        """Those that exited (a serving process should not; a Job's exit is read by run_job)."""
        return [p for p in self.started if p.popen.poll() is not None]

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} (log {p.log}) ---\n{p.tail()}" for p in self.started)

    def stop(self) -> list[str]:
        """Stop every process group (SIGTERM, then SIGKILL); the names of any still alive after."""
        for process in self.started:
            _signal(process.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in self.started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(max(deadline - time.monotonic(), 0.1))
            _signal(process.popen.pid, signal.SIGKILL)  # the rest of its group, if any outlived it
            process.popen.wait()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        gone_by = time.monotonic() + KILLED_SECONDS
        while (alive := [p.name for p in self.started if _group_alive(p.popen.pid)]) and time.monotonic() < gone_by:
            time.sleep(0.1)
        return alive


@contextlib.contextmanager
def interruptions_held() -> Iterator[None]:
    """SIGTERM and Ctrl-C held back for the block, then sent again to the handlers they would have met (the
    trial's raise KeyboardInterrupt), even when the block raised: one arriving within subprocess.Popen, after
    the fork, unwound past a child no one had recorded, and the child outlived the trial. Only the main thread
    runs handlers and sets them; a handler set outside Python (getsignal's None) is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    with ExitStack() as restore:  # each handler put back, whatever interrupts the putting in or back
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(sig)
            if previous is not None:
                restore.callback(signal.signal, sig, previous)
                signal.signal(sig, lambda signum, _: received.append(signum))
        try:
            yield
        finally:
            restore.close()
            for signum in received[:1]:  # the first: its handler ends the run
                signal.raise_signal(signum)


def _signal(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # gone already
        os.killpg(group, sig)  # the group: a component's own children too


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def base_python_bin(directory: Path) -> Path:
    """A directory with python3 and pip of this machine's base interpreter (pip --user refuses a venv's)."""
    directory.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    (directory / "python3").symlink_to(base)
    pip = directory / "pip"
    pip.write_text(f'#!/bin/sh\nexec "{base}" -m pip "$@"\n')
    pip.chmod(0o755)
    return directory


@dataclass(frozen=True)
class Rendered:
    """One deployment's rendered objects, as the plan holds them."""

    name: str
    graph: dict[str, Any]
    config_map: dict[str, Any] | None
    planner_config: dict[str, Any] | None  # the Planner's ConfigMap (a graph with autoscaling)
    smoke_test: dict[str, Any]  # Job
    benchmark: dict[str, Any] | None  # Job
    scripts: dict[str, str]  # file name -> text, from the Jobs' script ConfigMaps


def rendered_deployments(manifests: list[dict[str, Any]]) -> list[Rendered]:
    by_kind_name = {(m["kind"], m["metadata"]["name"]): m for m in manifests}
    scripts = {
        name: text
        for m in manifests
        if m["kind"] == "ConfigMap" and m["metadata"]["name"].endswith(("-smoke-test", "-benchmark"))
        for name, text in m["data"].items()
    }
    deployments = []
    for graph in (m for m in manifests if m["kind"] == DGD_KIND):
        name = graph["metadata"]["name"]
        jobs = [
            m
            for m in manifests
            if m["kind"] == "Job" and m["metadata"]["labels"].get("gpt-oss-infra/deployment") == name
        ]
        component = {job["metadata"]["labels"]["app.kubernetes.io/component"]: job for job in jobs}
        deployments.append(
            Rendered(
                name=name,
                graph=graph,
                config_map=by_kind_name.get(("ConfigMap", f"{name}-engine-config")),
                planner_config=by_kind_name.get(("ConfigMap", planner_config_name(name))),
                smoke_test=component["smoke-test"],
                benchmark=component.get("benchmark"),
                scripts=scripts,
            )
        )
    return deployments


def plan_manifests(stack: str) -> list[dict[str, Any]]:
    files, _ = plan_files(stack)
    return [yaml.safe_load(text) for path, text in sorted(files.items()) if path.startswith("manifests/")]


def write_config_map(config_map: dict[str, Any] | None, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    if config_map is None:
        return
    for name, text in (config_map.get("data") or {}).items():
        (directory / name).write_text(text)
    for name, encoded in (config_map.get("binaryData") or {}).items():
        (directory / name).write_bytes(base64.b64decode(encoded))


def wait_until_listed(processes: Processes, port: int, model: str) -> float:
    started = time.monotonic()
    url = f"http://127.0.0.1:{port}/v1/models"
    while time.monotonic() - started < READY_SECONDS:
        if processes.failed():
            names = ", ".join(p.name for p in processes.failed())
            raise TrialError(f"{names} exited before the model was listed")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if any(entry.get("id") == model for entry in json.load(response).get("data", [])):
                    return time.monotonic() - started
        except OSError:
            pass
        time.sleep(1)
    raise TrialError(f"{url} did not list the model within {READY_SECONDS} s")


def job_tmp_prefix() -> str:
    """The name its Jobs' temporary directories start with in this process's trial."""
    return f"trial-job-{os.getpid()}-"


def run_job(
    job: dict[str, Any], places: Places, path_dir: Path, processes: Processes, name: str, timeout: float
) -> str:
    """A rendered Job's container command, with its environment, as it runs here; its output."""
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = local_job_env({item["name"]: item["value"] for item in container["env"]}, places)
    env["PATH"] = f"{path_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    env["TERMINATION_LOG"] = str(processes.log_dir / f"{name}.termination")
    argv = [places.path(token) for token in container["command"] + container.get("args", [])]
    # A pod's /tmp goes with the pod; here the Job's temporary files (aiperf leaves an empty directory per run)
    # go with a directory of the Job's own, removed when it ends. Under /tmp, not the trial's deeper scratch
    # directory: aiperf's ZMQ sockets live there, and a Unix socket's path may not exceed 107 bytes. Named by
    # this process, so that a check for what a trial left sees only its own (job_tmp_prefix).
    with tempfile.TemporaryDirectory(prefix=job_tmp_prefix()) as job_tmp:
        process = processes.start(name, argv, env | {"TMPDIR": job_tmp})
        try:
            returncode = process.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TrialError(f"Job {job['metadata']['name']} did not end within {timeout:.0f} s") from None
    output = process.log.read_text(errors="replace")
    if returncode != 0:
        raise TrialError(f"Job {job['metadata']['name']} failed (exit {returncode})")
    return output


def benchmark_figures(artifact_dir: Path) -> dict[str, Any]:
    """aiperf's own summary (profile_export_aiperf.json) of the run: requests, tokens/s, TTFT, ITL."""
    exports = sorted(artifact_dir.rglob("profile_export_aiperf.json"))
    if not exports:
        raise TrialError(f"aiperf wrote no profile_export_aiperf.json under {artifact_dir}")
    data = json.loads(exports[-1].read_text())
    metrics = data.get("records", data)

    def metric(name: str) -> dict[str, Any]:
        value = metrics.get(name)
        return value if isinstance(value, dict) else {}

    return {
        "requests": metric("request_count").get("avg"),
        "outputTokensPerSecond": metric("output_token_throughput").get("avg"),
        "ttftMs": {p: metric("time_to_first_token").get(p) for p in ("p50", "p90", "p99")},
        "itlMs": {p: metric("inter_token_latency").get(p) for p in ("p50", "p90", "p99")},
    }


def serve(deployment: Rendered, places: Places, work: Path, path_dir: Path) -> dict[str, Any]:
    """Start the graph's components, run its smoke test and benchmark, stop everything; what they said."""
    write_config_map(deployment.config_map, places.config_dir)
    places.scripts.mkdir(parents=True, exist_ok=True)
    for name, text in deployment.scripts.items():
        (places.scripts / name).write_text(text)
    places.discovery.mkdir(parents=True, exist_ok=True)
    processes = Processes(work)
    serving = []  # the graph's processes (the Jobs' end by themselves)
    started = time.monotonic()
    try:
        components = graph_components(deployment.graph)
        planner = trial_planner.planner_component(components)
        local = {c.name: local_process(c, places) for c in components if c is not planner}
        for component in components:
            if component is planner or (planner and component.scaling_adapter):
                continue  # the Planner, and the workers it scales, start below
            argv, env = local[component.name]
            for replica in range(component.replicas):
                serving.append(f"{deployment.name}-{component.name}-{replica}")
                processes.start(serving[-1], argv, os.environ | env)
        if planner is not None:
            serving += start_planner(deployment, planner, components, local, places, processes)
        ready = wait_until_listed(processes, places.port, str(places.tokenizer))
        smoke = run_job(deployment.smoke_test, places, path_dir, processes, f"{deployment.name}-smoke-test", 180)
        result: dict[str, Any] = {"listedAfterSeconds": round(ready, 1), "smokeTest": smoke.strip().splitlines()[-1]}
        if deployment.benchmark is not None:
            run_job(deployment.benchmark, places, path_dir, processes, f"{deployment.name}-benchmark", 240)
            figures = benchmark_figures(places.scratch / "models" / "perf")
            if not figures["requests"] or not figures["outputTokensPerSecond"]:
                raise TrialError(f"the benchmark measured nothing: {figures}")
            result["benchmark"] = figures
        if planner is not None:
            result["planner"] = planner_burst(deployment.name, places, processes)
        exited = [p.name for p in processes.failed() if p.name in serving]
        if exited:
            raise TrialError(f"{', '.join(exited)} exited during the trial")
        result["seconds"] = round(time.monotonic() - started, 1)
    except TrialError as error:
        raise TrialError(f"{deployment.name}: {error}\n{processes.logs()}") from None
    finally:  # whatever ends the run: a failed step, an error, Ctrl-C or SIGTERM
        left = processes.stop()
    if left:
        raise TrialError(f"{deployment.name}: still running after SIGKILL: {', '.join(left)}")
    return result


def start_planner(
    deployment: Rendered,
    planner: GraphComponent,
    components: list[GraphComponent],
    local: dict[str, tuple[list[str], dict[str, str]]],
    places: Places,
    processes: Processes,
) -> list[str]:
    """etcd, the Planner (virtual) and the scaler that starts its workers (tools/trial_planner.py); their names."""
    if deployment.planner_config is None:
        raise TrialError(f"{deployment.name}'s graph has a Planner but the plan has no ConfigMap for it")
    work = places.scratch / "planner"
    work.mkdir(parents=True, exist_ok=True)
    try:
        etcd = trial_planner.etcd_command(work / "etcd", free_port(), free_port())
    except trial_planner.PlannerError as error:
        raise TrialError(str(error)) from None
    coordination = {"ETCD_ENDPOINTS": etcd[etcd.index("--listen-client-urls") + 1]}
    config = work / CONFIG_FILE
    config.write_text(json.dumps(trial_planner.local_config(deployment.planner_config, str(places.tokenizer))))
    main = planner.main
    argv = [places.python if token == "python3" else token for token in main["command"] + main.get("args", [])]
    argv[argv.index("--config") + 1] = str(config)
    env = local_env({item["name"]: item["value"] for item in main.get("env", []) if "value" in item}, places)
    discovery = {"DYN_DISCOVERY_BACKEND": "file", "DYN_REQUEST_PLANE": "tcp"}
    workers = work / "workers.json"
    workers.write_text(json.dumps(trial_planner.scaled_workers(components, local)))
    names = [f"{deployment.name}-{suffix}" for suffix in ("etcd", "scaler", "planner")]
    processes.start(names[0], etcd, dict(os.environ))
    scaler = [places.python, str(trial_planner.SCALER), str(workers), str(processes.log_dir)]
    processes.start(names[1], scaler, os.environ | LOOPBACK_ENV | {"DYN_FILE_KV": str(places.discovery)} | coordination)
    processes.start(names[2], argv, os.environ | env | discovery | coordination)
    return names


def planner_burst(name: str, places: Places, processes: Processes) -> dict[str, Any]:
    """The burst on the frontend, and the Planner's decisions through it: it must scale up, then back down."""
    scaler_log, planner_log = (processes.log_dir / f"{name}-{process}.log" for process in ("scaler", "planner"))
    load = trial_planner.burst(
        places.port,
        str(places.tokenizer),
        lambda direction: trial_planner.scaled(trial_planner.decisions(scaler_log), direction),
        lambda: trial_planner.ticks_logged(planner_log),
    )
    made = trial_planner.decisions(scaler_log)
    if not trial_planner.scaled(made, trial_planner.SCALED_DOWN):
        prompts = trial_planner.prompts_observed(planner_log)
        raise TrialError(
            f"the Planner did not scale up and back down under the burst: its decisions {made}; the passes holding "
            f"prompts it observed (after one it has no ITL estimate until it has observed five): {prompts or 'none'}"
        )
    return {"burst": load, "decisions": made}


def rerun_in_private_network(argv: list[str]) -> int | None:
    """This trial rerun inside a network namespace of its own, its output passed on; None where the
    system refuses one."""
    if subprocess.run([*PRIVATE_NETWORK, "true"], capture_output=True, check=False).returncode != 0:
        return None
    rerun = subprocess.Popen(
        [*PRIVATE_NETWORK, sys.executable, "-m", "gpt_oss_infra.tools.trial", *argv],
        env=os.environ | {IN_PRIVATE_NETWORK: "1"},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for line in rerun.stdout:
            print(line, end="", flush=True)
        return rerun.wait()
    finally:  # interrupted: the rerun stops what it started (its SIGTERM handler)
        if rerun.poll() is None:
            rerun.terminate()
            rerun.wait()


def install_aiperf() -> None:
    """What benchmark.sh's first line does, for the version configs/benchmark.yaml pins, with the
    dependencies this machine's Python lacks; nothing where an earlier trial installed it (pip's own look at
    what is installed took 6 CPU-seconds here). The Job's line then runs with PIP_NO_DEPS (local_job_env):
    it checks aiperf alone."""
    version = load_catalog().benchmark.aiperf
    if aiperf_installed(version, USERBASE):
        return
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run(
        [base, "-m", "pip", "install", "--user", "--no-cache-dir", "--quiet", f"aiperf=={version}"],
        env=os.environ | {"PYTHONUSERBASE": str(USERBASE), "PIP_ROOT_USER_ACTION": "ignore"},
        check=True,
    )


def aiperf_installed(version: str, userbase: Path) -> bool:
    """Whether `pip install --user aiperf==<version>` got through under `userbase`. pip installs a package's
    dependencies before the package (in topological order), and writes the package's console scripts after
    all its files: the `aiperf` command (what benchmark.sh runs) beside that version's metadata means it got
    that far. What pip writes after them (INSTALLER, REQUESTED, RECORD's rewrite) nothing here reads."""
    site_packages = sysconfig.get_path("purelib", "posix_user", vars={"userbase": str(userbase)})
    found = importlib.metadata.distributions(name="aiperf", path=[site_packages])
    return any(dist.version == version for dist in found) and (userbase / "bin" / "aiperf").exists()


def bring_loopback_up() -> None:
    """`ip link set lo up`, in a fresh network namespace, without needing iproute2."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(control, siocgifflags, request))[1]
        fcntl.ioctl(control, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))


def _stop_on_sigterm(*_: object) -> None:
    raise KeyboardInterrupt  # unwinds through serve(), which stops every process it started


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="trial", help="the trial stack to plan (default: trial)")
    parser.add_argument("--only", help="one deployment of the stack (default: every one)")
    parser.add_argument("--keep", type=Path, help="keep logs and files in this directory (default: removed)")
    args = parser.parse_args(argv)
    # In both processes: SIGTERM to this one stops the rerun too (its `finally`), and the rerun's own
    # processes (serve()'s), instead of ending this one alone and leaving the rest running.
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    if os.environ.get(IN_PRIVATE_NETWORK) != "1":
        # Here, not in the rerun: its namespace has no network. The Jobs' pip then adds nothing (PIP_NO_DEPS).
        try:
            install_aiperf()
        except subprocess.CalledProcessError as error:
            print(
                f"trial failed: pip could not install the benchmark's aiperf (exit {error.returncode})", file=sys.stderr
            )
            return 1
        returncode = rerun_in_private_network(argv)
        if returncode is not None:
            return returncode
        print(f"==> {NO_PRIVATE_NETWORK_NOTE}")
    else:
        bring_loopback_up()
        print(f"==> {PRIVATE_NETWORK_NOTE}: {', '.join(name for _, name in socket.if_nameindex())}")
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"{python} is missing: make trial installs it", file=sys.stderr)
        return 2
    began = time.monotonic()
    print(f"==> planning stack {args.stack}")
    deployments = rendered_deployments(plan_manifests(args.stack))
    deployments = [d for d in deployments if args.only in (None, d.name)]
    if not deployments:
        print(f"no deployment {args.only!r} in stack {args.stack}", file=sys.stderr)
        return 2
    print("==> substitutions (everything else runs as rendered):")
    print("\n".join(f"  - {line}" for line in SUBSTITUTIONS))
    print(f"==> {TOKENIZER_NOTE}")
    model = load_catalog().model
    with ExitStack() as stack:
        work = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gpt-oss-trial-")))
        work.mkdir(parents=True, exist_ok=True)
        tokenizer = work / "tokenizer"
        write_tokenizer(tokenizer, model)
        path_dir = base_python_bin(work / "bin")
        results = {}
        for deployment in deployments:
            places = Places.under(work / deployment.name, tokenizer, free_port())
            count = len(graph_components(deployment.graph))
            print(f"==> {deployment.name}: {count} components on 127.0.0.1:{places.port}")
            try:
                results[deployment.name] = serve(deployment, places, work, path_dir)
            except TrialError as error:
                print(f"trial failed: {error}", file=sys.stderr)
                return 1
            print_result(deployment.name, results[deployment.name])
    print(f"==> trial passed in {time.monotonic() - began:.0f} s; every figure above is simulated (Dynamo's mocker)")
    return 0


def print_result(name: str, result: dict[str, Any]) -> None:
    print(f"  listed the model after {result['listedAfterSeconds']} s")
    print(f"  smoke test: {result['smokeTest'][:120]}")
    figures = result.get("benchmark")
    if figures:
        ttft, itl = figures["ttftMs"], figures["itlMs"]
        print(
            f"  benchmark (simulated): {figures['requests']:.0f} requests, {figures['outputTokensPerSecond']:,.0f} "
            f"output tokens/s; TTFT p50/p90/p99 {_ms(ttft)} ms; ITL p50/p90/p99 {_ms(itl)} ms"
        )
    planner = result.get("planner")
    if planner:
        burst = planner["burst"]
        phases = ", then ".join(
            f"{phase.clients} clients until the Planner {phase.until} ({seconds} s; at most {phase.most_seconds} s)"
            for phase, seconds in zip(trial_planner.BURST, burst["phaseSeconds"], strict=True)
        )
        print(
            f"  burst: {phases}: {burst['tokens']:,} tokens streamed; {burst['answered']} requests answered, "
            f"{burst['closed']} closed at their phase's end, {burst['failed']} failed"
        )
        if burst["sentWithoutTick"]:
            print(
                f"  {burst['sentWithoutTick']} requests sent without a tick of the Planner's (none logged in "
                f"{trial_planner.TICK_SECONDS} s)"
            )
        for decision in planner["decisions"]:
            changes = ", ".join(
                f"{role} {change['from']} -> {change['to']}" for role, change in decision.items() if role != "atSeconds"
            )
            print(f"  the Planner's decision at {decision['atSeconds']} s: {changes}")
    print(f"  {name} done in {result['seconds']} s, every process stopped")


def _ms(percentiles: dict[str, float | None]) -> str:
    return "/".join("?" if value is None else f"{value:,.1f}" for value in percentiles.values())


if __name__ == "__main__":
    sys.exit(main())
