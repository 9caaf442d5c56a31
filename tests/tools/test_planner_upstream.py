"""Every autoscaled deployment's Planner, checked by Dynamo 1.6.1's own code (tools/planner_driver.py in
.venv-trial): its command line and config as the Planner's start-up reads them (dynamo.planner.__main__,
PlannerConfig), and the graph beside what the release's profiler makes of the same graph with the same
PlannerConfig (dynamo.profiler.utils.dgd_generation: enable_planner_worker_scaling_adapters,
add_planner_to_config): which components are scaled, the Planner's image, command, working directory,
arguments and mount, each difference named and why. Upstream's layer keeps the config it is given, so
the config's values are pinned apart, for the example stack."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpt_oss_infra.core.dynamo_graph import components_by_name, graph_components, render_graph
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.planner import CONFIG_FILE, PLANNER_COMPONENT
from gpt_oss_infra.core.render.stack_objects import Serving
from gpt_oss_infra.core.stack import build_stack
from tests.support import dynamo_logging_configs, example_entries, next_line, stack_names

# The slower tier (pyproject.toml markers), on one pytest worker: the tests share one driver process.
pytestmark = [pytest.mark.end_to_end, pytest.mark.xdist_group("planner-driver")]

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv-trial" / "bin" / "python"  # Dynamo 1.6.1's runtime (requirements-trial.txt)
DRIVER = ROOT / "tools" / "planner_driver.py"
RUNTIME_RELEASE = "1.6.1"  # the release .venv-trial holds
RESULT_SECONDS = 300  # for one result, the first one importing the release's modules


def autoscaled(catalog) -> list[Serving]:
    """The autoscaled deployments of every shipped stack."""
    found = []
    for stack in stack_names():
        entries = example_entries(stack)
        if not any("autoscaling" in d for d in entries.get("gpt-oss-infra:deployments", {}).values()):
            continue
        built = build_stack(namespace_config(entries), catalog, with_hf_token=True, api_key_clients=["ci"])
        found += [serving for serving in built.serving if serving.planner_config is not None]
    return found


def without_planner(graph: dict[str, Any]) -> dict[str, Any]:
    """The graph as upstream's Planner layer starts from it: no Planner, no scaling adapters, replicas set."""
    components = [
        dataclasses.replace(component, scaling_adapter=False)
        for component in graph_components(graph)
        if component.name != PLANNER_COMPONENT
    ]
    framework = graph["spec"].get("backendFramework")
    return render_graph(graph["apiVersion"], graph["metadata"], framework, components)


class Driver:
    """tools/planner_driver.py running in .venv-trial: one request per line in, one result per line out. A
    driver that failed to answer is stopped, and the next request starts another: a late answer never
    reaches a later request."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.log = work / "driver.log"
        self.process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        with self.log.open("a") as log:
            return subprocess.Popen(
                [str(PYTHON), str(DRIVER)],
                cwd=self.work,  # the Planner's modules may write logs: never into the checkout
                # Where Dynamo's images keep their workspace (dynamo.common.utils.paths.get_workspace_dir:
                # /workspace there); without it upstream's paths would be under this directory.
                # TMPDIR: the Planner's modules leave seven files there as the driver starts (dynamo.runtime.logging;
                # tools/dynamo_parsers.py: parse); pytest removes this folder with its old runs.
                env={
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "WORKSPACE_DIR": "/workspace",
                    "TMPDIR": str(self.work),
                },
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )

    def result(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.process is None:
            self.process = self._start()
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            line = next_line(process, RESULT_SECONDS)
        except OSError:  # a broken pipe: the driver is gone
            line = ""
        if line and line.endswith("\n"):
            result: dict[str, Any] = json.loads(line)
            return result
        self.stop()
        # No whole line: the driver closed its output, it ended.
        why = f"gave no result in {RESULT_SECONDS} s" if line is None else f"exited with {process.returncode}"
        raise AssertionError(f"the Planner driver {why}: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        """End the driver (at the end of its input, or killed after 30 s) and close its pipes; never raises."""
        if self.process is None:
            return
        process, self.process = self.process, None
        assert process.stdin is not None and process.stdout is not None
        try:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
        finally:
            process.kill()
            process.wait()
            process.stdout.close()


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Iterator[Driver]:
    """One driver for the module's tests: importing the release's modules is most of a check's time."""
    started = Driver(tmp_path_factory.mktemp("planner-driver"))
    yield started
    started.stop()


def checked(driver: Driver, serving: Serving, config_text: str | None = None) -> dict[str, Any]:
    """What the release's own code says of this deployment's Planner (config_text: a changed config)."""
    components = components_by_name(serving.graph)
    planner = components[PLANNER_COMPONENT]
    args = planner.main["args"]
    settings_text = serving.planner_config["data"][CONFIG_FILE]
    return driver.result(
        {
            "graph": without_planner(serving.graph),
            "planner_args": args,
            "config_path": args[args.index("--config") + 1],
            "config_text": config_text or settings_text,
            "runtime_image": components["Frontend"].main["image"],
            "model": json.loads(settings_text)["model_name"],
        }
    )


STAND_IN = """
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    time.sleep(request.get("delay", 0))
    if "exit" in request:
        sys.exit(request["exit"])
    print(json.dumps({"echo": request}), flush=True)
"""


def test_a_driver_that_fails_to_answer_is_replaced_so_no_late_answer_reaches_a_later_request(tmp_path, monkeypatch):
    """A stand-in driver: the request it answers too late is refused, and the next request gets its own answer
    from a new driver, not the late one; a driver that exits says so."""
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    monkeypatch.setattr(sys.modules[__name__], "DRIVER", tmp_path / "stand_in.py")
    monkeypatch.setattr(sys.modules[__name__], "RESULT_SECONDS", 2)
    driver = Driver(tmp_path)
    try:
        # Its answer comes 1 s into the next request's 2 s: a driver kept running would give it to that request.
        with pytest.raises(AssertionError, match="gave no result in 2 s"):
            driver.result({"n": 0, "delay": 3})
        assert driver.result({"n": 1}) == {"echo": {"n": 1}}
        with pytest.raises(AssertionError, match="exited with 3"):
            driver.result({"n": 2, "exit": 3})
        assert driver.result({"n": 3}) == {"echo": {"n": 3}}
    finally:
        driver.stop()


def test_the_runtime_venv_is_the_release_whose_planner_is_rendered(catalog):
    """Only releases this venv can check may have a Planner rendered (configs/dynamo/versions.yaml `planner`)."""
    with_planner = sorted(v for v, release in catalog.dynamo_versions.items() if release.spec.planner)
    assert with_planner == [RUNTIME_RELEASE]
    assert PYTHON.exists(), "`make test` makes .venv-trial (requirements-trial.txt)"


def differences(serving: Serving, result: dict[str, Any]) -> list[str]:
    """Where this deployment's Planner differs from what the release reads and renders, but for the
    differences named below."""
    if result["refused"] is not None:
        return [f"refused: {result['refused']}"]
    found = []
    ours = json.loads(serving.planner_config["data"][CONFIG_FILE])
    # The Planner reads every field as written (the model would coerce or drop a misspelt one), and upstream's
    # ConfigMap holds the same, but the profile directory it always sets (there is no profile data here).
    found += [f"the Planner reads {key} as {result['read'][key]!r}" for key in ours if result["read"][key] != ours[key]]
    upstream = result["upstream"]
    found += [
        f"upstream's config has {key} {upstream['config'][key]!r}"
        for key in ours
        if upstream["config"][key] != ours[key]
    ]
    theirs = {c.name: c for c in graph_components(upstream["graph"])}
    mine = {c.name: c for c in graph_components(serving.graph)}
    if set(theirs) != set(mine):
        return [*found, f"components {sorted(mine)}, upstream's {sorted(theirs)}"]
    for component in mine.values():
        other = theirs[component.name]
        # The same components scaled. Upstream writes {enabled: true}, a v1alpha1 field the v1beta1 CRD does
        # not have (its scalingAdapter is an empty marker object): both are on.
        if component.scaling_adapter != other.scaling_adapter:
            found.append(
                f"{component.name}: scaling adapter {component.scaling_adapter}, upstream's {other.scaling_adapter}"
            )
        # Upstream retypes a lone aggregated worker as decode; the 1.6.1 Planner's Kubernetes connector also
        # takes "a unique generic type: worker for agg" (connectors/kubernetes.py), which keeps the
        # operator's view of the engine unchanged.
        retyped = component.scaling_adapter and (component.type, other.type) == ("worker", "decode")
        if component.type != other.type and not retyped:
            found.append(f"{component.name}: type {component.type}, upstream's {other.type}")
    planner, upstream_planner = mine[PLANNER_COMPONENT], theirs[PLANNER_COMPONENT]
    if planner.replicas != upstream_planner.replicas:
        found.append(f"Planner replicas {planner.replicas}, upstream's {upstream_planner.replicas}")
    # The same process, reading the same file at the same place (upstream names its ConfigMap
    # planner-config-<4 random characters>, ours <deployment>-planner-config).
    for field in ("image", "command", "workingDir", "args"):
        if planner.main.get(field) != upstream_planner.main.get(field):
            found.append(
                f"Planner {field} {planner.main.get(field)!r}, upstream's {upstream_planner.main.get(field)!r}"
            )
    mounts = [{m["mountPath"] for m in c.main["volumeMounts"]} for c in (planner, upstream_planner)]
    if mounts[0] != mounts[1]:
        found.append(f"Planner mounts {mounts[0]}, upstream's {mounts[1]}")
    return found


def test_every_autoscaled_deployment_is_what_the_release_itself_renders(catalog, driver):
    servings = autoscaled(catalog)
    assert {s.deployment.recipe.mode for s in servings} >= {"aggregated", "disaggregated"}  # both shapes shipped
    for serving in servings:
        result = checked(driver, serving)
        assert result["upstream"]["config"]["profile_results_dir"] != result["read"]["profile_results_dir"]
        assert differences(serving, result) == [], serving.deployment.name
    # The files Dynamo's logging left as the driver started are in the driver's own folder, not in /tmp.
    assert dynamo_logging_configs(driver.work)


def test_the_example_stacks_planners_are_told_their_deployments_bounds(catalog):
    """Upstream's layer keeps the PlannerConfig it is given, so the comparison above cannot check the values
    themselves: these are the example stack's (configs/examples/Pulumi.autoscaling.yaml), from its bounds."""
    settings = {s.deployment.name: json.loads(s.planner_config["data"][CONFIG_FILE]) for s in autoscaled(catalog)}
    common = {
        "environment": "kubernetes",
        "backend": "trtllm",
        "optimization_target": "sla",
        "pre_deployment_sweeping_mode": "none",
        "enable_load_scaling": True,
        "enable_throughput_scaling": False,
        "model_name": "openai/gpt-oss-120b",
    }
    assert settings["chat"] == common | {
        "mode": "agg",
        "ttft_ms": 300.0,
        "itl_ms": 10.0,
        "min_endpoint": 1,
        "decode_engine_num_gpu": 4,
        "max_gpu_budget": 16,  # 4 workers of 4 GPUs
    }
    assert settings["long-prompts"] == common | {
        "mode": "disagg",
        "ttft_ms": 1000.0,
        "itl_ms": 10.0,
        "prefill_min_endpoint": 1,
        "decode_min_endpoint": 1,
        "prefill_engine_num_gpu": 1,
        "decode_engine_num_gpu": 4,
        "max_gpu_budget": 12,  # 4 prefill workers of 1 GPU, 2 decode workers of 4
    }


def test_a_planner_rendered_apart_from_upstream_is_caught(catalog, driver):
    """Its config mounted elsewhere than the release's Planner expects it, its worker left unscaled."""
    serving = autoscaled(catalog)[0]
    components = []
    for component in graph_components(serving.graph):
        if component.name == PLANNER_COMPONENT:
            (mount,) = component.main["volumeMounts"]
            main = component.main | {"volumeMounts": [mount | {"mountPath": "/etc/planner"}]}
            component = dataclasses.replace(component, pod=component.pod | {"containers": [main]})
        components.append(dataclasses.replace(component, scaling_adapter=False))
    graph = render_graph(
        serving.graph["apiVersion"],
        serving.graph["metadata"],
        serving.graph["spec"].get("backendFramework"),
        components,
    )
    drifted = dataclasses.replace(serving, graph=graph)
    found = differences(drifted, checked(driver, drifted))
    assert any("Planner mounts {'/etc/planner'}" in line for line in found), found
    assert any("scaling adapter False, upstream's True" in line for line in found), found


def test_a_config_the_planner_refuses_is_caught(catalog, driver):
    """The check runs the Planner's own model: a mode it has not, and a scaling loop turned off."""
    serving = autoscaled(catalog)[0]
    settings = json.loads(serving.planner_config["data"][CONFIG_FILE])
    refused = checked(driver, serving, json.dumps(settings | {"mode": "aggregated"}))["refused"]
    assert "mode" in refused and "'disagg', 'prefill', 'decode' or 'agg'" in refused
    both_off = settings | {"enable_load_scaling": False, "enable_throughput_scaling": False}
    refused = checked(driver, serving, json.dumps(both_off))["refused"]
    assert "At least one scaling mode must be enabled" in refused
