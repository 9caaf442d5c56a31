"""Our 1.6.1 TensorRT-LLM graphs against the 1.6.1 wheel's own v1beta1 templates
(vendor/dynamo/1.6.1/templates/, see vendor/dynamo/SOURCES.md), field by field: component types,
container names, commands and flags, images, volume and secret wiring. Every difference is listed
below with its reason; a new one (ours or upstream's) fails the test until it is fixed or listed."""

from __future__ import annotations

from typing import Any

import pytest

from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.core.yaml_files import read_yaml
from tests.support import on_release

TEMPLATES = VENDOR_DIR / "dynamo" / "1.6.1" / "templates"

# What differs, and why it stays.
EXPECTED = {
    "spec: ours sets backendFramework": "the CRD allows it; the operator picks its TensorRT-LLM defaults by it",
    "component names: Frontend, TrtllmWorker / Frontend, TRTLLMWorker": (
        "names are free; ours name the operator's objects since 1.0 (renaming them would replace them)"
    ),
    "component names: Frontend, TrtllmPrefillWorker, TrtllmDecodeWorker / Frontend, decode, prefill": (
        "names are free; ours name the operator's objects since 1.0 (renaming them would replace them)"
    ),
    "frontend command: ['python3', '-m', 'dynamo.frontend'] / ['python3']": (
        "the same argv: upstream passes `-m dynamo.frontend` as args, ours as command"
    ),
    "frontend flags: ours add --http-port --router-mode": "the deployment's router mode and the port its Service names",
    "frontend env Secret: none / hf-token-secret": (
        "gpt-oss-120b is public: a token only raises Hugging Face's rate limit; the workers load from the cache"
    ),
    "worker flags: ours add --dyn-reasoning-parser --dyn-tool-call-parser": (
        "gpt-oss's harmony format [dynamo-gptoss-trtllm]: reasoning and tool calls parsed"
    ),
    "worker flags: upstream adds --publish-kv-events": (
        "KV events feed the frontend's KV router: ours add the flag with routerMode kv only (versions.yaml)"
    ),
    "worker env Secret: hf-token / hf-token-secret": "the Secret the program creates from hfToken is named hf-token",
    "worker workingDir: none / /workspace/": "every path ours pass is absolute",
    "worker engine config: a ConfigMap mounted at /opt/dynamo/configs / a file in the image": (
        "the recipe's engine config, not upstream's Qwen example"
    ),
    "worker model: the model-cache PVC at /opt/models / the hub": (
        "weights are downloaded once into the cache (the download Job) and loaded at a pinned revision"
    ),
    "worker resources: ours request nvidia.com/gpu = limits / upstream limits nvidia.com/gpu": (
        "the recipe's GPU count, requested and limited alike"
    ),
    "worker resources: upstream requests ephemeral-storage": "the weights are on the cache volume, not the node's disk",
    "worker pod: ours add initContainers, nodeSelector, securityContext, tolerations, volumes": (
        "the cache gate (wait-for-model), the pool's nodes, pod security, the GPU taint, the engine config and cache"
    ),
    "worker shared memory: 80Gi / the operator's default": "upstream's gpt-oss recipes give TensorRT-LLM workers 80Gi",
    "container securityContext: ours set it": "README: Pod security",
}


def _flags(args: list[str]) -> set[str]:
    return {arg for arg in args if arg.startswith("--")}


def _secret(component) -> str:
    return component.env_secret or "none"


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> set[str]:
    """What differs between two graphs, read through the accessor, by what a reader compares."""
    found = set()
    if set(ours["spec"]) != set(theirs["spec"]):
        found |= {f"spec: ours sets {key}" for key in sorted(set(ours["spec"]) - set(theirs["spec"]))}
    mine, upstream = graph_components(ours), graph_components(theirs)
    assert sorted(c.type for c in mine) == sorted(c.type for c in upstream)  # the same roles
    names = (", ".join(c.name for c in mine), ", ".join(c.name for c in upstream))
    if names[0] != names[1]:
        found.add(f"component names: {names[0]} / {names[1]}")
    for component in mine:
        theirs_ = next(c for c in upstream if c.type == component.type)
        role = "frontend" if component.type == "frontend" else "worker"
        assert component.main["image"] == theirs_.main["image"]  # the release's runtime image
        assert [c.get("name") for c in component.pod_template()["spec"]["containers"]] == ["main"]
        mine_line = [*component.main["command"], *component.main["args"]]
        their_line = [*theirs_.main["command"], *theirs_.main["args"]]
        assert mine_line[:3] == their_line[:3]  # python3 -m <the same module>
        if component.main["command"] != theirs_.main["command"]:
            found.add(f"{role} command: {component.main['command']} / {theirs_.main['command']}")
        added, dropped = _flags(mine_line) - _flags(their_line), _flags(their_line) - _flags(mine_line)
        if added:
            found.add(f"{role} flags: ours add {' '.join(sorted(added))}")
        if dropped:
            found.add(f"{role} flags: upstream adds {' '.join(sorted(dropped))}")
        if _secret(component) != _secret(theirs_):
            found.add(f"{role} env Secret: {_secret(component)} / {_secret(theirs_)}")
        if component.main.get("securityContext") and not theirs_.main.get("securityContext"):
            found.add("container securityContext: ours set it")
        if role == "frontend":
            continue
        if theirs_.main.get("workingDir") and not component.main.get("workingDir"):
            found.add(f"worker workingDir: none / {theirs_.main['workingDir']}")
        engine_file = their_line[their_line.index("--extra-engine-args") + 1]
        mounts = {m["mountPath"]: m["name"] for m in component.main.get("volumeMounts", [])}
        engine_mount = next(
            (path for path in mounts if mine_line[mine_line.index("--extra-engine-args") + 1].startswith(path)), None
        )
        if engine_mount and not engine_file.startswith("/"):  # upstream's is a path inside its image
            found.add(f"worker engine config: a ConfigMap mounted at {engine_mount} / a file in the image")
        their_model = their_line[their_line.index("--model-path") + 1]
        if component.volume and not their_model.startswith("/"):  # upstream's is a hub model id
            found.add(f"worker model: the {component.volume.claim} PVC at {component.volume.mount_path} / the hub")
        their_resources = (theirs_.pod_template()["spec"]["containers"][0]).get("resources", {})
        if set(their_resources.get("requests", {})) - {"nvidia.com/gpu"}:
            found.add("worker resources: upstream requests ephemeral-storage")
        if "nvidia.com/gpu" not in their_resources.get("requests", {}):
            found.add("worker resources: ours request nvidia.com/gpu = limits / upstream limits nvidia.com/gpu")
        added_pod = sorted(set(component.pod) - set(theirs_.pod) - {"containers"})
        if added_pod:
            found.add(f"worker pod: ours add {', '.join(added_pod)}")
        if component.shared_memory != theirs_.shared_memory:
            found.add(f"worker shared memory: {component.shared_memory} / the operator's default")
    return found


@pytest.fixture
def on_1_6_1(dev_raw, catalog):
    return on_release(dev_raw, catalog, "1.6.1")


@pytest.mark.parametrize(
    ("template", "pool", "recipe"),
    [("trtllm-agg.yaml", "h200", "h200-agg-low-latency"), ("trtllm-disagg.yaml", "b200", "b200-disagg-1p4d")],
)
def test_our_graph_differs_from_upstreams_only_as_listed(on_1_6_1, catalog, template, pool, recipe):
    on_1_6_1["nodePools"]["gpu"] = {"hardware": pool, "nodes": 1}  # one node: no EFA settings on top
    on_1_6_1["deployments"]["gpt-oss"] = {"recipe": recipe, "nodePool": "gpu"}
    ours = build_stack(on_1_6_1, catalog, with_hf_token=True).serving[0].graph
    found = differences(ours, read_yaml(TEMPLATES / template))
    assert found <= set(EXPECTED), sorted(found - set(EXPECTED))
    assert "worker flags: upstream adds --publish-kv-events" in found or template == "trtllm-disagg.yaml"


def test_every_listed_difference_is_still_one(on_1_6_1, catalog):
    """A difference fixed on either side leaves the list."""
    found = set()
    for template, pool, recipe in [
        ("trtllm-agg.yaml", "h200", "h200-agg-low-latency"),
        ("trtllm-disagg.yaml", "b200", "b200-disagg-1p4d"),
    ]:
        on_1_6_1["nodePools"]["gpu"] = {"hardware": pool, "nodes": 1}
        on_1_6_1["deployments"]["gpt-oss"] = {"recipe": recipe, "nodePool": "gpu"}
        found |= differences(
            build_stack(on_1_6_1, catalog, with_hf_token=True).serving[0].graph, read_yaml(TEMPLATES / template)
        )
    assert set(EXPECTED) == found


def test_with_the_kv_router_the_workers_publish_their_kv_events_as_upstream_does(on_1_6_1, catalog):
    on_1_6_1["deployments"]["gpt-oss"]["routerMode"] = "kv"
    ours = build_stack(on_1_6_1, catalog, with_hf_token=True).serving[0].graph
    found = differences(ours, read_yaml(TEMPLATES / "trtllm-agg.yaml"))
    assert "worker flags: upstream adds --publish-kv-events" not in found
