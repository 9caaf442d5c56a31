"""core/dynamo_graph.py: the one accessor that knows both DynamoGraphDeployment shapes."""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
from pathlib import Path

import pytest

from gpt_oss_infra.core import dynamo_graph
from gpt_oss_infra.core.dynamo_graph import API_VERSIONS, GraphComponent, ModelVolume, graph_components, render_graph
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.plan import ROOT
from tests.support import example_entries, stack_names

WORKER = GraphComponent(
    name="TrtllmDecodeWorker",
    type="decode",
    replicas=2,
    pod={
        "nodeSelector": {"pool": "gpu"},
        "volumes": [{"name": "engine-config", "configMap": {"name": "x-engine-config"}}],
        "containers": [{"image": "runtime:1.6.1", "args": ["--x"], "volumeMounts": [{"name": "engine-config"}]}],
    },
    labels={"role": "decode"},
    annotations={"sha": "1"},
    gpus=4,
    devices={"vpc.amazonaws.com/efa": "4"},
    shared_memory="80Gi",
    volume=ModelVolume("model-cache", "/opt/models"),
    env_secret="hf-token",
)


@pytest.mark.parametrize("api_version", API_VERSIONS)
def test_a_component_reads_back_as_written(api_version):
    frontend = GraphComponent(name="Frontend", type="frontend", replicas=1, pod={"containers": [{"image": "f:1"}]})
    graph = render_graph(api_version, {"name": "x"}, "trtllm", [frontend, WORKER])
    assert graph_components(graph) == [frontend, WORKER]


def test_a_scaled_component_opts_into_its_scaling_adapter_and_leaves_its_replicas_out():
    """Dynamo's Planner sets its replicas through the adapter: a `pulumi up` that wrote them would reset
    them (the operator starts the adapter at one, what reading it back gives)."""
    scaled = dataclasses.replace(WORKER, replicas=1, scaling_adapter=True)
    alpha = render_graph("nvidia.com/v1alpha1", {}, "trtllm", [scaled])["spec"]["services"]["TrtllmDecodeWorker"]
    assert alpha["scalingAdapter"] == {"enabled": True} and "replicas" not in alpha  # v1alpha1: off unless enabled
    (beta,) = render_graph("nvidia.com/v1beta1", {}, "trtllm", [scaled])["spec"]["components"]
    assert beta["scalingAdapter"] == {} and "replicas" not in beta  # v1beta1: the marker object itself
    for api_version in API_VERSIONS:
        assert graph_components(render_graph(api_version, {}, "trtllm", [scaled])) == [scaled]


def test_each_shape_puts_the_fields_where_its_crd_has_them():
    alpha = render_graph("nvidia.com/v1alpha1", {}, "trtllm", [WORKER])["spec"]
    service = alpha["services"]["TrtllmDecodeWorker"]
    assert alpha["pvcs"] == [{"name": "model-cache", "create": False}]
    assert (service["componentType"], service["subComponentType"]) == ("worker", "decode")
    assert service["resources"]["requests"] == {"gpu": "4", "custom": {"vpc.amazonaws.com/efa": "4"}}
    assert service["sharedMemory"] == {"size": "80Gi"} and service["envFromSecret"] == "hf-token"
    assert service["volumeMounts"] == [{"name": "model-cache", "mountPoint": "/opt/models"}]
    assert service["extraPodSpec"]["mainContainer"]["image"] == "runtime:1.6.1"

    (beta,) = render_graph("nvidia.com/v1beta1", {}, "trtllm", [WORKER])["spec"]["components"]
    assert (beta["name"], beta["type"], beta["sharedMemorySize"]) == ("TrtllmDecodeWorker", "decode", "80Gi")
    (main,) = beta["podTemplate"]["spec"]["containers"]
    assert main["name"] == "main" and main["envFrom"] == [{"secretRef": {"name": "hf-token"}}]
    assert main["resources"]["limits"] == {"nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": "4"}
    assert main["volumeMounts"][-1] == {"name": "model-cache", "mountPath": "/opt/models"}
    assert beta["podTemplate"]["spec"]["volumes"][-1] == {
        "name": "model-cache",
        "persistentVolumeClaim": {"claimName": "model-cache"},
    }


@pytest.mark.parametrize("stack", stack_names())
def test_every_rendered_graph_reads_back_the_same_in_either_shape(catalog, stack):
    """What the renderer means survives a change of apiVersion: the components read back equal."""
    built = build_stack(namespace_config(example_entries(stack)), catalog, with_hf_token=True, api_key_clients=["ci"])
    for serving in built.serving:
        components = graph_components(serving.graph)
        for api_version in API_VERSIONS:
            graph = render_graph(api_version, serving.graph["metadata"], "trtllm", components)
            if api_version == "nvidia.com/v1alpha1":  # it has no runtime version override (admission needs none)
                expected = [dataclasses.replace(c, runtime_version=None) for c in components]
            else:
                expected = components
            assert graph_components(graph) == expected


def test_the_accessor_imports_the_standard_library_only():
    """The policy pack (its own venv, pulumi-policy only) imports it."""
    tree = ast.parse(Path(dynamo_graph.__file__).read_text())
    imported = {
        name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in ([alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module])
    }
    assert imported <= sys.stdlib_module_names | {"__future__"}


# What differs between the graph's shapes: only the accessor and the version table may name it.
SHAPE_WORDS = re.compile(
    r"nvidia\.com/v1(alpha|beta)1|extraPodSpec|mainContainer|extraPodMetadata|envFromSecret|subComponentType"
    r"|componentType|sharedMemory|runtimeVersionOverride|\[\"(services|components|pvcs|podTemplate)\"\]"
    r"|\"(services|components|pvcs)\":"
)
ALLOWED = {Path("core/dynamo_graph.py"), Path("tests/core/test_dynamo_graph.py")}


def test_nothing_else_names_a_graph_field_that_differs_between_releases():
    sources = [
        *ROOT.glob("*.py"),
        *(p for d in ("core", "components", "tools", "policy", "tests") for p in (ROOT / d).rglob("*.py")),
    ]
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources
        if path.relative_to(ROOT) not in ALLOWED
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if SHAPE_WORDS.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "line",
    [  # what the placement check, the dependency walk and the policy pack read before the accessor
        'for service, spec in graph["spec"]["services"].items():',
        'main = extra.get("mainContainer", {})',
        'GRAPH_TYPE = "kubernetes:nvidia.com/v1alpha1:DynamoGraphDeployment"',
        'for component in graph["spec"]["components"]:',
    ],
)
def test_the_shape_check_catches_a_field_path_outside_the_accessor(line):
    assert SHAPE_WORDS.search(line)
