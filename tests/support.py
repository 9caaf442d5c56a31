"""Helpers the tests share: stack configs as written, runs of the real program on the mock engine,
and short ways to read what a run registered or why a config was refused."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import pickle
import selectors
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from uv import find_uv_bin

from gpt_oss_infra.components import gpt_oss_stack
from gpt_oss_infra.components.targets import eks
from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import Catalog, load_catalog
from gpt_oss_infra.core.inputs.config import KEY_PREFIX, SECRET_KEYS, StackConfig, namespace_config
from gpt_oss_infra.core.inputs.rules import parse_stack_config
from gpt_oss_infra.core.render.aws.account import CapacityBlock
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan
from gpt_oss_infra.core.render.stack_objects import Serving, Stack
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.core.yaml_files import YamlFileError
from gpt_oss_infra.tools.plan import EXAMPLES, ROOT, engine_config, stack_config_entries
from gpt_oss_infra.tools.pulumi_engine import ProgramRun, Registration, mock_account, run_program

# The installer of the tests' fresh venvs: uv (requirements-dev.txt) reads a package's metadata as pip does
# and installs the same distributions, without compiling every module to bytecode first (measured here,
# the wheel test's venv: pip 78 s, pip --no-compile 39 s, uv 6 s; the policy pack's: pip 22 s, uv 2 s).
# --native-tls: the system's certificates, as pip uses them (uv has its own bundle otherwise).
UV = [find_uv_bin(), "--native-tls"]

# --- stack configs


def stack_entries(stack: str = "dev") -> dict[str, Any]:
    """The `config:` block of Pulumi.<stack>.yaml, as written."""
    return yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]


def example_entries(stack: str) -> dict[str, Any]:
    """The config entries of a root stack (dev, staging, prod) or of an example stack."""
    if (ROOT / f"Pulumi.{stack}.yaml").exists():
        return stack_entries(stack)
    return yaml.safe_load((EXAMPLES / f"Pulumi.{stack}.yaml").read_text())["config"]


def stack_names() -> list[str]:
    """Every valid stack file: the root's (dev, staging, prod) and configs/examples/'s. A stray or
    outdated one the program refuses is left out here, so that no unrelated test crashes on it, and
    named with its problems by tests/configs/test_stack_files.py."""
    return sorted(stack for stack, parsed in _stack_files().items() if isinstance(parsed, StackConfig))


def stray_stack_files() -> dict[str, str]:
    """Stack files in the checkout the program refuses: file -> the refusal."""
    return {stack: parsed for stack, parsed in _stack_files().items() if isinstance(parsed, str)}


def eks_stack_names() -> list[str]:
    """The valid stack files whose cluster the program creates on EKS (as the program reads them:
    an older file's `create: true`, or no kind at all, is EKS too)."""
    return [stack for stack in stack_names() if _stack_files()[stack].cluster.kind == "eks"]


@functools.cache
def _stack_files() -> dict[str, StackConfig | str]:
    """Every Pulumi.<stack>.yaml of the checkout -> its parsed config, or why the program refuses it."""
    files: dict[str, StackConfig | str] = {}
    for path in sorted([*ROOT.glob("Pulumi.*.yaml"), *EXAMPLES.glob("Pulumi.*.yaml")]):
        stack = path.stem.removeprefix("Pulumi.")
        try:
            files[stack], _ = parse_stack_config(namespace_config(stack_config_entries(path)), load_catalog())
        except (ConfigError, YamlFileError) as error:
            files[stack] = f"{path}: {error}"
    return files


def write_stack(directory: Path, stack: str, entries: dict[str, Any]) -> Path:
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": entries}, sort_keys=False))
    return path


def existing(raw: dict[str, Any], **keys: Any) -> dict[str, Any]:
    """The dev stack's config with an existing cluster of the same name and version instead."""
    cluster = raw["cluster"]
    raw["cluster"] = {"kind": "existing", "name": cluster["name"], "kubernetesVersion": "1.33"} | keys
    for pool in raw.get("nodePools", {}).values():  # an existing cluster's pools name their nodes' labels
        for key in ("capacityType", "capacityReservationId", "availabilityZone"):
            pool.pop(key, None)
        pool.setdefault("nodeSelector", {"nvidia.com/gpu.product": "NVIDIA-H200"})
    return raw


# --- the functional core


def on_release(raw: dict[str, Any], catalog, version: str) -> dict[str, Any]:
    """The config on another Dynamo release, with that release's published runtime image for its backend
    (its TensorRT-LLM one where the release has none for the backend)."""
    backend = next((catalog.recipes[d["recipe"]].backend for d in raw.get("deployments", {}).values()), "trtllm")
    images = catalog.dynamo_versions[version].spec.runtime_images
    image = images.get(backend, images["trtllm"])
    raw["release"] |= {"dynamo": version, "runtimeImage": image}
    return raw


def stack_names_on(catalog, version: str) -> list[str]:
    """Every stack file whose deployments run on this Dynamo release: their recipes' backends (the trial
    stacks' mocker: on 1.6.1) and, for an autoscaled one, the release's Planner."""
    release = catalog.dynamo_versions[version].spec

    def runs(deployment: dict[str, Any]) -> bool:
        backend = catalog.recipes[deployment["recipe"]].backend
        return backend not in release.unsupported_backends and ("autoscaling" not in deployment or release.planner)

    return [
        stack
        for stack in stack_names()
        if all(runs(deployment) for deployment in example_entries(stack).get(f"{KEY_PREFIX}deployments", {}).values())
    ]


def refused(raw: dict[str, Any], catalog, api_key_clients: tuple[str, ...] = ("ci",)) -> ConfigError:
    """The error that refuses this config (the test fails if it is accepted); API keys are set
    unless a test is about their absence."""
    with pytest.raises(ConfigError) as caught:
        build_stack(raw, catalog, with_hf_token=False, api_key_clients=list(api_key_clients))
    return caught.value


def problem_keys(raw: dict[str, Any], catalog) -> list[str]:
    return [problem.key for problem in refused(raw, catalog).problems]


def resolve(dev_raw: dict[str, Any], catalog, recipe: str, gpus: int | None = None, **deployment: Any) -> Serving:
    """The dev stack's one deployment on `recipe`, resolved and rendered."""
    dev_raw["deployments"]["gpt-oss"] = {"recipe": recipe, "nodePool": "gpu", **deployment}
    if gpus is not None:
        dev_raw["deployments"]["gpt-oss"]["gpus"] = gpus
    return build_stack(dev_raw, catalog, with_hf_token=False).serving[0]


# The window of the Capacity Block the mock account and these tests use.
BLOCK_START, BLOCK_END = datetime(2030, 1, 7, 11, 30, tzinfo=UTC), datetime(2030, 1, 21, 11, 30, tzinfo=UTC)


def block(state: str) -> CapacityBlock:
    return CapacityBlock("cr-0a1b2c3d4e5f60718", "p6e-gb200.36xlarge", "us-east-2b", 9, BLOCK_START, BLOCK_END, state)


# --- runs of the real program


def run_entries(entries: dict[str, Any], stack: str = "test") -> ProgramRun:
    """Run the real __main__.py on the mock engine with these stack-file config entries.

    Secret keys (hfToken, ngcApiKey, apiKeys) count as set with `--secret`: their values here are
    what the engine hands the program once decrypted. Runs are deterministic, so one run per
    distinct (entries, stack) serves every test that asks for it; tests only read a run."""
    return _run_once(json.dumps(entries, sort_keys=True), stack).run


def rendered_objects(entries: dict[str, Any], stack: str = "test") -> list[dict[str, Any]]:
    """The Kubernetes objects the core rendered for run_entries' run of these entries (GptOssStack's
    Stack as it registers it: after defer_serving), from that same run."""
    return _run_once(json.dumps(entries, sort_keys=True), stack).rendered


@dataclass(frozen=True)
class _Made:
    run: ProgramRun
    rendered: list[dict[str, Any]]  # what GptOssStack's core rendered (none when the run stopped before)


# A folder the test workers of one session share (tests/conftest.py sets it under pytest-xdist): a run
# one worker made, the other reads instead of making it again.
SHARED_RUNS = "GPT_OSS_INFRA_SHARED_RUNS"
# The simulator every modelled figure names (configs/estimates.yaml `tool`, configs/mocker-timing/*.yaml).
# The AISimulate release requirements-trial.txt pins.
AISIMULATE_VERSION = next(
    line.split("==")[1]
    for line in (Path(__file__).resolve().parents[1] / "requirements-trial.txt").read_text().splitlines()
    if line.startswith("aisimulate==")
)
MODELLED_BY = f"NVIDIA AISimulate {AISIMULATE_VERSION}"


@functools.cache
def _run_once(entries_json: str, stack: str) -> _Made:
    shared = os.environ.get(SHARED_RUNS)
    if not shared:
        return _run(entries_json, stack)
    key = hashlib.sha256(f"{stack} {entries_json}".encode()).hexdigest()[:24]
    path = Path(shared) / f"{key}.pickle"
    with path.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for this run rather than making it too
        if path.exists():
            made: _Made = pickle.loads(path.read_bytes())
            return made
        made = _run(entries_json, stack)
        partial = path.with_suffix(".partial")  # renamed into place whole: never half a pickle to read
        partial.write_bytes(pickle.dumps(made))
        partial.replace(path)
        return made


def _run(entries_json: str, stack: str) -> _Made:
    config, secret_keys = engine_config(json.loads(entries_json))
    decrypted = [f"{KEY_PREFIX}{key}" for key in SECRET_KEYS if f"{KEY_PREFIX}{key}" in config]
    rendered: list[dict[str, Any]] = []
    defer_serving = gpt_oss_stack.defer_serving

    def recorded(stack_objects: Stack, waiting_pools: dict[str, str]) -> Stack:
        deferred = defer_serving(stack_objects, waiting_pools)
        rendered.extend([*deferred.objects(), *deferred.platform.crds])
        return deferred

    plan = eks.plan

    def planned(stack_objects: Stack, catalog: Catalog) -> ClusterPlan:
        """The created cluster's plan, with its Karpenter objects (elastic pools) among the rendered ones."""
        cluster_plan = plan(stack_objects, catalog)
        if cluster_plan.eks is not None and cluster_plan.eks.karpenter is not None:
            rendered.extend(cluster_plan.eks.karpenter.objects())
        return cluster_plan

    gpt_oss_stack.defer_serving = recorded  # type: ignore[assignment]
    eks.plan = planned  # type: ignore[assignment]
    try:
        run = run_program(ROOT / "__main__.py", "gpt-oss-infra", stack, config, sorted({*secret_keys, *decrypted}))
    finally:
        gpt_oss_stack.defer_serving = defer_serving
        eks.plan = plan
    return _Made(run, rendered)


def run_in_account(entries: dict[str, Any], change_account, stack: str = "test") -> ProgramRun:
    """Run with the AWS account the stack expects (mock_account), changed by `change_account`
    (a function that edits the MockAccount's dicts in place): what EC2 really reports can differ."""
    config, secret_keys = engine_config(entries)
    account = mock_account(config)
    change_account(account)
    return run_program(ROOT / "__main__.py", "gpt-oss-infra", stack, config, secret_keys, account=account)


def successful_run(entries: dict[str, Any], stack: str = "test") -> ProgramRun:
    run = run_entries(entries, stack)
    assert run.error is None, run.error
    return run


def by_name(run: ProgramRun) -> dict[str, Registration]:
    return {r.name: r for r in run.resources}


def registered(run: ProgramRun, name: str) -> Registration:
    return by_name(run)[name]


def by_type(run: ProgramRun, type_: str) -> list[Registration]:
    return [r for r in run.resources if r.type == type_]


# --- local stand-in HTTP servers


class JsonHandler(BaseHTTPRequestHandler):
    """A request handler that answers JSON and logs nothing (subclasses say what to answer)."""

    def reply(self, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def dynamo_logging_configs(folder: Path) -> set[Path]:
    """The files Dynamo's processes have left in `folder` as their temporary directory: dynamo.runtime.logging
    writes SGLang's logging config there on every start, with delete=False."""
    return {path for path in folder.glob("tmp*.json") if "dynamo.runtime.logging.LogHandler" in path.read_text()}


def next_line(process: subprocess.Popen[str], seconds: float) -> str | None:
    """The next line `process` writes to its standard output, with its newline ("" once it closed its output),
    or None when it writes nothing within `seconds`."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=seconds):
            return None
    return process.stdout.readline()


def local_kubeconfig(port: int) -> dict[str, Any]:
    """A kubeconfig for a stand-in Kubernetes API on this machine (plain HTTP, a made-up token)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "lab", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "me", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "me"}}],
        "current-context": "lab",
    }


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler], tls: tuple[Path, Path] | None = None) -> Iterator[int]:
    """A local HTTP server for the duration of the block: its port. `tls`: (certificate, key) to serve HTTPS."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
