"""The GPU-less trial stacks (configs/examples/Pulumi.trial*.yaml): on EKS the same platform, gateway,
smoke test, benchmark and dashboards as a GPU stack; on a local cluster the platform, cache, graphs and
smoke tests; both with zero GPU requests, a cache of
the tokenizer only, CPU costs only and figures said to be simulated; and the keys a CPU recipe cannot
take, refused by name."""

from __future__ import annotations

import base64
import copy
import json

import pytest

from gpt_oss_infra.core.dynamo_graph import graph_components
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan
from gpt_oss_infra.core.report.stack_report import stack_report
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, on_release, refused

TRIAL_STACKS = ["trial", "trial-local"]


def trial_raw(stack: str) -> dict:
    return copy.deepcopy(namespace_config(example_entries(stack)))


@pytest.fixture(scope="module", params=TRIAL_STACKS)
def trial_stack(request, catalog):
    return build_stack(trial_raw(request.param), catalog, with_hf_token=False, api_key_clients=["ci"])


def _pods(stack) -> list[dict]:
    """Every pod spec the stack renders: each graph component's, each Job's."""
    pods = [component.pod for serving in stack.serving for component in graph_components(serving.graph)]
    return pods + [obj["spec"]["template"]["spec"] for obj in stack.objects() if obj["kind"] == "Job"]


def test_nothing_requests_a_gpu_or_goes_to_gpu_nodes(trial_stack):
    assert trial_stack.pools == {} and trial_stack.gpu_software == []  # no device plugin, no DCGM exporter
    for serving in trial_stack.serving:
        assert serving.deployment.total_gpus == 0
        for component in graph_components(serving.graph):
            assert component.gpus == 0 and not component.devices and component.shared_memory is None
    text = json.dumps([obj for obj in trial_stack.objects()])
    assert "nvidia.com/gpu" not in text  # no request, toleration or selector of GPUs anywhere
    # On EKS only the elastic graph's workers are placed: on the cpu pool, tolerating its taint (nothing else).
    placed = [pod for pod in _pods(trial_stack) if "nodeSelector" in pod or "tolerations" in pod]
    on_cpu_pool = (
        {"gpt-oss-infra/pool": "workers"},
        [{"key": "gpt-oss-infra/pool", "operator": "Equal", "value": "workers", "effect": "NoSchedule"}],
    )
    expected = [on_cpu_pool] if "workers" in trial_stack.config.node_pools else []
    assert [(pod["nodeSelector"], pod["tolerations"]) for pod in placed] == expected


def test_the_mocker_workers_get_their_recipes_resources_and_the_system_nodes(trial_stack, catalog):
    for serving in trial_stack.serving:
        recipe = catalog.recipes[serving.deployment.recipe_name]
        workers = [c for c in graph_components(serving.graph) if c.type not in ("frontend", "planner")]
        assert {c.type for c in workers} == set(recipe.workers)
        for component in workers:
            assert component.main["resources"] == recipe.workers[component.type].resources
            assert component.main["command"] == ["python3", "-m", "dynamo.mocker"]
            if serving.deployment.config.node_pool:  # the elastic graph, on the cpu pool
                assert component.pod["nodeSelector"] == {"gpt-oss-infra/pool": "workers"}
                continue
            weight = component.pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
            assert weight["preference"]["matchExpressions"][0]["values"] == ["system"]
        assert "backendFramework" not in serving.graph["spec"]  # as Dynamo's own mocker template
        assert serving.graph["metadata"]["labels"]["gpt-oss-infra/simulated"] == "true"


def test_the_timing_tables_are_mounted_as_the_npz_the_workers_read(trial_stack):
    for serving in trial_stack.serving:
        (name,) = serving.engine_config["binaryData"]
        assert name.endswith(".npz") and base64.b64decode(serving.engine_config["binaryData"][name])[:2] == b"PK"
        for component in graph_components(serving.graph):
            if component.type not in ("frontend", "planner"):
                args = component.main["args"]
                assert args[args.index("--planner-profile-data") + 1] == f"/opt/dynamo/configs/{name}"


def test_the_cache_holds_the_tokenizer_never_the_weights(trial_stack):
    job = trial_stack.model_cache.download.job
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert job["metadata"]["name"] == "model-download-b5c939de8f75-tokenizer"
    assert env["EXCLUDES"].split(",") == ["original/*", "metal/*", "*.safetensors", "*.bin", "*.pt", "*.pth", "*.gguf"]
    assert env["MARKER"].endswith("@b5c939de8f754692c1647ca79fbf85e8c1e70f8a.tokenizer.complete")
    full = env["MARKER"].removesuffix(".tokenizer.complete") + ".complete"
    waiting = [
        init["env"]
        for serving in trial_stack.serving
        for component in graph_components(serving.graph)
        for init in component.pod.get("initContainers", [])
    ]
    # The workers wait for that marker, or a full cache's (which holds the tokenizer too).
    assert waiting and all(each == [{"name": "MARKERS", "value": f"{env['MARKER']} {full}"}] for each in waiting)


def test_the_smoke_test_accepts_token_counts_for_the_mocker_only(trial_stack, dev_stack):
    def smoke_env(serving):
        return {
            e["name"]: e["value"] for e in serving.smoke_test.job["spec"]["template"]["spec"]["containers"][0]["env"]
        }

    assert all(smoke_env(serving).get("SIMULATED") == "1" for serving in trial_stack.serving)
    assert all("SIMULATED" not in smoke_env(serving) for serving in dev_stack.serving)


def test_dashboards_and_alerts_keep_no_gpu_panel_nor_gpu_alert(catalog):
    stack = build_stack(trial_raw("trial"), catalog, with_hf_token=False, api_key_clients=["ci"])
    objects = stack.observability.objects
    rules = next(o for o in objects if o["kind"] == "PrometheusRule")
    alerts = {rule["alert"] for group in rules["spec"]["groups"] for rule in group["rules"]}
    assert "GpuXidError" not in alerts and {"GptOssFrontendDown", "GptOssTtftP95High", "ModelDownloadFailed"} <= alerts
    dashboards = [
        json.loads(text)
        for o in objects
        if o["metadata"]["name"].startswith("grafana-dashboard-")
        for text in o["data"].values()
    ]
    assert len(dashboards) == 3  # agg, disagg, elastic
    for dashboard in dashboards:
        titles = [panel["title"] for panel in dashboard["panels"]]
        assert not any(title.startswith("GPU") for title in titles)
        (cost,) = [panel for panel in dashboard["panels"] if panel["title"].startswith("$ per million")]
        assert cost["options"]["content"].startswith("**none**: a simulated engine")


def test_the_report_shows_cpu_costs_only_and_says_the_figures_are_simulated(catalog):
    stack = build_stack(trial_raw("trial"), catalog, with_hf_token=False, api_key_clients=["ci"])
    report = stack_report(stack, catalog, ClusterPlan(api_access=""), "us-east-2")
    items = [line["item"] for line in report["cost"]["lines"]]
    assert not any("GPU" in item for item in items)
    (pool,) = report["nodePools"].values()  # the elastic cpu pool, priced at its most
    assert (pool["hardware"], pool["gpus"], pool["nodes"]) == ("cpu", 0, 2)
    assert "cpu pool workers: m7i.2xlarge, at its most (scaling.maxNodes)" in items
    (efs,) = [line for line in report["cost"]["lines"] if line["item"].startswith("EFS")]
    assert efs["quantity"] == "< 1 GiB, as 1"
    for deployment in report["deployments"].values():  # nodePool: a GPU pool's (the cpu pool's is above)
        assert deployment["gpus"] == 0 and deployment["nodePool"] is None and deployment["usdPerHour"] is None
        estimate = deployment["estimate"]
        assert estimate["tokensPerSecond"] is None and estimate["usdPerMillionTokens"] is None
        assert estimate["basis"].startswith("simulated: Dynamo's mocker, timed as ")
    assert report["deployments"]["agg"]["traffic"]["concurrency"] == 2  # per replica, as the recipe says


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("nodePool", "gpu", "recipe trial-mocker-agg needs no GPU: its workers run on CPU nodes; leave it out"),
        ("gpus", 8, "recipe trial-mocker-agg needs no GPU: its workers run on CPU nodes; leave it out"),
    ],
)
def test_a_cpu_recipe_refuses_gpu_keys_by_name(catalog, key, value, message):
    raw = trial_raw("trial")
    raw["deployments"]["agg"][key] = value
    (problem,) = refused(raw, catalog).problems
    assert problem.key == f"gpt-oss-infra:deployments.agg.{key}"
    assert problem.message.startswith(message)


def test_a_cpu_recipe_refuses_a_benchmark_concurrency_per_gpu(catalog):
    raw = trial_raw("trial")
    raw["deployments"]["agg"]["benchmark"]["concurrencyPerGpu"] = 4
    (problem,) = refused(raw, catalog).problems
    assert problem.key == "gpt-oss-infra:deployments.agg.benchmark.concurrencyPerGpu"
    assert problem.message.endswith("leave it out: the recipe's concurrency is per replica")


def test_a_gpu_recipe_still_needs_its_node_pool(dev_raw, catalog):
    del dev_raw["deployments"]["gpt-oss"]["nodePool"]
    (problem,) = refused(dev_raw, catalog).problems
    assert (problem.key, problem.message) == (
        "gpt-oss-infra:deployments.gpt-oss.nodePool",
        "required: the node pool of h200 GPUs to run on",
    )


def test_the_mocker_runs_on_1_6_1_only_and_says_why_elsewhere(catalog):
    raw = on_release(trial_raw("trial"), catalog, "1.5.1")
    problems = refused(raw, catalog).problems
    assert [p.key for p in problems] == [
        "gpt-oss-infra:deployments.agg.recipe",
        "gpt-oss-infra:deployments.disagg.recipe",
        "gpt-oss-infra:deployments.elastic.recipe",
        "gpt-oss-infra:deployments.elastic.autoscaling",  # and no Planner rendered for 1.5.1
    ]
    assert problems[0].message.startswith("recipe trial-mocker-agg does not run on Dynamo 1.5.1: the trial recipes run")
