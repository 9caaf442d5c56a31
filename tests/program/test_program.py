"""The real program on Pulumi's mock engine: component conventions, outputs, moved resources keeping
their identity, and bad input registering nothing."""

from __future__ import annotations

import pulumi

from tests.support import MODELLED_BY, example_entries, run_entries, stack_entries


def test_components_follow_the_conventions(dev_run):
    components = [r for r in dev_run.resources if r.type.startswith("gpt-oss-infra:")]
    assert {(r.type, r.name) for r in components} == {
        ("gpt-oss-infra:aws:AwsCluster", "gptoss"),
        ("gpt-oss-infra:aws:Network", "gptoss-network"),
        ("gpt-oss-infra:aws:EksCluster", "gptoss-eks"),
        ("gpt-oss-infra:aws:EksAddons", "gptoss-addons"),
        ("gpt-oss-infra:aws:NodeGroups", "gptoss-nodes"),
        ("gpt-oss-infra:index:GpuNodePool", "gptoss-pool-gpu"),
        ("gpt-oss-infra:aws:EksAddons", "gptoss-node-addons"),
        ("gpt-oss-infra:aws:ModelStorage", "gptoss-model-storage"),
        ("gpt-oss-infra:serving:Workloads", "workloads"),
        ("gpt-oss-infra:gpu:GpuSoftware", "gpu-software"),
        ("gpt-oss-infra:index:DynamoPlatform", "dynamo-platform"),
        ("gpt-oss-infra:index:ModelCache", "model-cache"),
        ("gpt-oss-infra:index:GptOssDeployment", "gpt-oss"),
        ("gpt-oss-infra:teardown:TeardownGuards", "dynamo-platform-teardown"),
        ("gpt-oss-infra:index:GptOssStack", "gpt-oss-infra"),
    }
    # GptOssStack's own children keep the names they had at the stack's root before it (its docstring).
    children = [r for r in dev_run.resources if r.parent and r.parent != "gpt-oss-infra"]
    assert len(children) > 40
    # A GPU pool's resources keep the names they had under the cluster's NodeGroups before 0.4.1 (a
    # node group's name in EKS derives from it: another would replace the nodes).
    moved_pools = {"gptoss-pool-gpu": "gptoss-nodes"}
    for child in children:
        parent = moved_pools.get(child.parent, child.parent)
        assert child.name.startswith(f"{parent}-"), child.name  # names derive from the parent


def test_secret_and_pvc_belong_to_the_model_cache(dev_run):
    by_name = {r.name: r for r in dev_run.resources}
    assert by_name["model-cache-hf-token"].parent == "model-cache"
    assert by_name["model-cache-hf-token"].inputs["stringData"] == {"HF_TOKEN": "[secret]"}
    pvc_options = by_name["model-cache-pvc"].options
    assert "protect" not in pvc_options and "retainOnDelete" not in pvc_options  # `pulumi destroy` deletes it
    # Serving waits for the cache component, i.e. for every child of it, and so do its children.
    cache_children = {
        "model-cache-hf-token",
        "model-cache-pvc",
        "model-cache-download-script",
        "model-cache-download",
        "model-cache-storage-class",
    }
    # The platform's own resources, not its teardown guards (the stack's, made by the platform since 0.6.2).
    platform_children = {
        r.name for r in dev_run.resources if r.parent == "dynamo-platform" and not r.type.startswith("gpt-oss-infra:")
    }
    assert "dynamo-platform-release" in platform_children  # its operator applies the CRDs (1.6.1)
    assert by_name["dynamo-platform-teardown"].parent == "dynamo-platform"
    assert set(by_name["gpt-oss"].options["dependsOn"]) == cache_children | platform_children
    assert set(by_name["gpt-oss-graph"].options["dependsOn"]) >= cache_children


def test_stack_outputs_report_the_deployment(dev_run):
    assert dev_run.outputs["endpoints"] == {"gpt-oss": "http://gpt-oss-frontend.gpt-oss.svc.cluster.local:8000"}
    deployment = dev_run.outputs["report"]["deployments"]["gpt-oss"]
    worker = deployment["workers"]["TrtllmWorker"]
    assert {key: worker[key] for key in ("role", "replicas", "gpusPerWorker", "tensorParallel", "expertParallel")} == {
        "role": "worker",
        "replicas": 1,
        "gpusPerWorker": 8,
        "tensorParallel": 8,
        "expertParallel": 8,
    }
    assert worker["attentionDataParallel"] is False and worker["moeBackend"] == "TRITON"
    # 60.8 GiB checkpoint, experts over 8 ranks, dense part over 8 ranks: 7.6 GiB per GPU.
    assert worker["weightsGiBPerGpu"] == 7.6
    assert worker["kvTokenCapacity"] > 1_000_000 and worker["maxConcurrency"] >= worker["maxBatchSize"]
    # Its share of the pool: one p5en.48xlarge On-Demand in us-east-2 (configs/prices.yaml), all of it.
    assert deployment["usdPerHour"] == 63.296  # the only deployment of its pool: all of it
    # Nothing is published at this recipe's point (8 GPUs, 1k/1k, concurrency 16): the figures are modelled,
    # and say so (configs/estimates.yaml).
    estimate = deployment["estimate"]
    assert estimate["published"].startswith("none at this point; nearest: ")
    assert estimate["basis"].startswith(f"modelled: {MODELLED_BY}, h200_sxm trtllm ")
    assert estimate["tokensPerSecond"] == estimate["modelled"]["tokensPerSecond"] > 0
    assert estimate["usdPerMillionTokens"] == round(63.296 / (estimate["tokensPerSecond"] * 3600) * 1e6, 3)
    assert deployment["tryIt"].startswith("kubectl port-forward svc/gpt-oss-frontend 8000:8000 -n gpt-oss")
    assert deployment["health"] == "curl -s http://localhost:8000/health"


def test_invalid_config_registers_no_resource():
    entries = stack_entries("dev")
    entries["gpt-oss-infra:release"]["modelRevision"] = "main"
    run = run_entries(entries)
    assert isinstance(run.error, pulumi.RunError)
    assert "gpt-oss-infra:release.modelRevision" in str(run.error)
    assert run.resources == []


def test_resources_moved_into_components_keep_their_identity(dev_run):
    """Moving a resource under a component changes its URN; an alias to where it was keeps it (and
    the protected file systems under it) instead of replacing it."""
    by_name = {r.name: r for r in dev_run.resources}
    at_root = {"parent": "(stack)"}
    assert by_name["gptoss-model-storage"].options["aliases"] == [{"name": "model-storage"} | at_root]
    assert by_name["gptoss-model-storage"].parent == "gptoss"  # inside the EKS target now
    assert by_name["workloads-namespace"].options["aliases"] == [{"name": "workloads"} | at_root]
    existing = run_entries(example_entries("existing-cluster"), stack="existing-cluster")
    provider = next(r for r in existing.resources if r.type == "pulumi:providers:kubernetes")
    assert provider.name == "existing-cluster-kubernetes" and provider.parent == "existing-cluster"
    assert provider.options["aliases"] == [{"name": "kubernetes"} | at_root]


def test_a_graph_whose_components_change_is_replaced_not_updated():
    """Dynamo's admission refuses a component added to or removed from a live graph (its Planner, when
    autoscaling is turned on or off): the graph is replaced, the old one deleted first (same name), when
    the component list an autoscaled graph carries changes; a fixed graph carries none, so nothing live
    changes on upgrade."""
    run = run_entries(example_entries("autoscaling"), stack="autoscaling")
    graphs = {r.name: r for r in run.resources if r.type.endswith(":DynamoGraphDeployment")}
    for graph in graphs.values():
        assert graph.options["replaceOnChanges"] == ['metadata.annotations["gpt-oss-infra/components"]']
        assert graph.options["deleteBeforeReplace"] is True
    annotations = graphs["long-prompts-graph"].inputs["metadata"]["annotations"]
    assert annotations["gpt-oss-infra/components"] == "Frontend,Planner,TrtllmDecodeWorker,TrtllmPrefillWorker"
    fixed = next(r for r in run_entries(stack_entries("dev")).resources if r.name == "gpt-oss-graph")
    assert "gpt-oss-infra/components" not in fixed.inputs["metadata"]["annotations"]
