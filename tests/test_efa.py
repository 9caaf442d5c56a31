"""EFA is used where it is provisioned: pools whose KV cache crosses nodes get interfaces laid out
from EC2's network-card data, their workers request EFA devices with Dynamo's EFA settings, and
the EFA device plugin pinned runs on every EFA instance type in the catalog."""

from __future__ import annotations

import copy

import pulumi
import pytest
import yaml

from core.aws.efa import efa_network_interfaces
from core.inputs.catalog import Chart
from core.render.gpu_software import ChartRelease, chart_problems
from core.stack import build_stack
from tests.conftest import namespace_config, run_entries, run_in_account
from tests.test_infra import example_entries


@pytest.fixture(scope="module")
def disagg_run():
    run = run_entries(example_entries("b200-disagg"), stack="b200-disagg")
    assert run.error is None, run.error
    return run


def by_name(run):
    return {r.name: r for r in run.resources}


def test_crossing_pool_gets_every_efa_card_of_p6_b200(disagg_run):
    resources = by_name(disagg_run)
    interfaces = resources["gptoss-nodes-b200-template"].inputs["networkInterfaces"]
    layout = [(i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) for i in interfaces]
    # AWS's p6-b200 layout: ENA primary and EFA-only on card 0, EFA-only on cards 1-7 [ec2-efa-layout].
    assert layout == [(0, 0, "interface"), (0, 1, "efa-only")] + [(card, 0, "efa-only") for card in range(1, 8)]
    assert all(i["securityGroups"] == ["gptoss-eks-cluster-sg-id", "gptoss-nodes-efa-id"] for i in interfaces)
    (placement,) = [r for r in disagg_run.resources if r.type == "aws:ec2/placementGroup:PlacementGroup"]
    assert placement.inputs == {"strategy": "cluster"}
    assert resources["gptoss-nodes-b200-template"].inputs["placement"] == {"groupName": placement.name}
    plugin = resources["gpu-software-aws-efa-k8s-device-plugin"].inputs
    assert plugin["version"] == "v0.5.30" and plugin["values"]["tolerations"][0]["key"] == "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("deployment", "service", "devices"),
    [
        ("disagg-4p4d", "TrtllmPrefillWorker", 4),
        ("disagg-4p4d", "TrtllmDecodeWorker", 4),
        ("disagg-1p4d", "TrtllmPrefillWorker", 1),  # 1 GPU of 8: 1 of the node's 8 EFA devices
        ("disagg-1p4d", "TrtllmDecodeWorker", 4),
    ],
)
def test_crossing_workers_request_efa_with_dynamos_settings(disagg_run, deployment, service, devices):
    resources = by_name(disagg_run)
    worker = resources[f"{deployment}-graph"].inputs["spec"]["services"][service]
    assert worker["resources"]["requests"]["custom"] == {"vpc.amazonaws.com/efa": str(devices)}
    assert worker["resources"]["limits"]["custom"] == {"vpc.amazonaws.com/efa": str(devices)}
    pod = worker["extraPodSpec"]
    main = pod["mainContainer"]
    assert main["image"] == "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.2.1-efa-amd64"
    assert pod["initContainers"][0]["image"] == main["image"]  # one image pull per node, not two
    env = {item["name"]: item["value"] for item in main["env"]}
    assert env["TRTLLM_NIXL_KVCACHE_BACKEND"] == "LIBFABRIC" and env["FI_PROVIDER"] == "efa"
    assert env["FI_EFA_USE_DEVICE_RDMA"] == "1" and env["FI_EFA_ENABLE_SHM_TRANSFER"] == "0"
    assert main["securityContext"] == {"privileged": True, "capabilities": {"add": ["IPC_LOCK"]}}
    assert pod["hostIPC"] is True
    engine_files = resources[f"{deployment}-engine-config"].inputs["data"]
    engine = yaml.safe_load(engine_files[f"{'prefill' if 'Prefill' in service else 'decode'}.yaml"])
    assert engine["cache_transceiver_config"]["backend"] == "NIXL"  # LIBFABRIC is a NIXL backend
    assert engine["cache_transceiver_config"]["max_tokens_in_buffer"] > 0  # the recipe's own setting stays


def test_a_disaggregated_deployment_on_one_node_keeps_its_kv_on_the_node(catalog):
    entries = copy.deepcopy(example_entries("b200-disagg"))
    entries["gpt-oss-infra:nodePools"]["b200"]["nodes"] = 1
    del entries["gpt-oss-infra:deployments"]["disagg-1p4d"]
    stack = build_stack(namespace_config(entries), catalog, with_hf_token=False)
    assert stack.efa_pools == {"b200": False}
    (serving,) = stack.serving
    assert all(worker.efa is None for worker in serving.deployment.workers)
    assert all(worker.engine["cache_transceiver_config"]["backend"] == "UCX" for worker in serving.deployment.workers)
    assert not any("KV cache moves between nodes" in warning for warning in stack.warnings)


def test_kv_crossing_nodes_without_efa_is_warned(catalog):
    entries = copy.deepcopy(example_entries("b200-disagg"))
    entries["gpt-oss-infra:nodePools"]["b200"]["efa"] = False
    stack = build_stack(namespace_config(entries), catalog, with_hf_token=False)
    assert stack.efa_pools == {"b200": False}
    warned = [w for w in stack.warnings if "KV cache moves between nodes" in w]
    assert len(warned) == 2 and "node pool b200 has no EFA" in warned[0] and "ai-dynamo/dynamo#4185" in warned[0]


def test_gb200_disaggregation_is_warned_for_lack_of_an_arm64_efa_image(catalog):
    stack = build_stack(namespace_config(copy.deepcopy(example_entries("gb200"))), catalog, with_hf_token=False)
    assert stack.efa_pools == {"gb200": False}  # nothing could use it
    (warning,) = [w for w in stack.warnings if "KV cache moves between nodes" in w]
    assert warning.startswith("gpt-oss-infra:deployments.long-prompts:")
    assert "no TensorRT-LLM EFA runtime image for arm64 nodes" in warning


def test_an_efa_pool_asked_for_without_crossing_traffic_gets_interfaces_only(catalog):
    entries = copy.deepcopy(example_entries("b200"))
    entries["gpt-oss-infra:nodePools"]["b200"]["efa"] = True
    stack = build_stack(namespace_config(entries), catalog, with_hf_token=False)
    assert stack.efa_pools == {"b200": True}
    assert all(worker.efa is None for serving in stack.serving for worker in serving.deployment.workers)


@pytest.mark.parametrize(
    ("hardware", "instance_type", "efa_cards"),
    [
        ("h100", "p5.48xlarge", list(range(32))),
        ("h200", "p5en.48xlarge", list(range(16))),
        ("h200", "p5e.48xlarge", list(range(32))),
        ("b200", "p6-b200.48xlarge", list(range(8))),
        ("gb200", "p6e-gb200.36xlarge", [1, 5, 9, 13]),  # AWS's 4 x 400 Gbps example for GB200
    ],
)
def test_efa_layout_per_instance_type(catalog, hardware, instance_type, efa_cards):
    instance = catalog.hardware[hardware].instance_types[instance_type]
    interfaces, problems = efa_network_interfaces(instance_type, instance.ec2, instance.efa_interfaces)
    assert problems == []
    assert interfaces[0] == {"network_card_index": 0, "device_index": 0, "interface_type": "interface"}
    efa_only = [(i["network_card_index"], i["device_index"]) for i in interfaces[1:]]
    assert efa_only == [(card, 1 if card == 0 else 0) for card in efa_cards]
    assert all(i["interface_type"] == "efa-only" for i in interfaces[1:])


def test_the_layout_comes_from_what_ec2_reports():
    """EC2 reporting fewer EFA cards than the catalog assumes refuses the stack; different facts warn."""

    def fewer_cards(account):
        account.instance_types["p6-b200.48xlarge"]["networkCards"] = account.instance_types["p6-b200.48xlarge"][
            "networkCards"
        ][:4]

    run = run_in_account(example_entries("b200-disagg"), fewer_cards, stack="b200-disagg")
    assert isinstance(run.error, pulumi.RunError)
    assert "configs/hardware.yaml: p6-b200.48xlarge.efaInterfaces: 8 EFA devices per node, but EC2 gives" in str(
        run.error
    )
    assert run.resources == []

    def more_cards(account):
        cards = account.instance_types["p6-b200.48xlarge"]["networkCards"]
        cards.append({"index": 8, "peakBandwidth": 400.0, "baselineBandwidth": 400.0})

    run = run_in_account(example_entries("b200-disagg"), more_cards, stack="b200-disagg")
    assert run.error is None, run.error
    assert any("p6-b200.48xlarge.ec2 differs from what EC2 reports" in line for line in run.log)
    interfaces = by_name(run)["gptoss-nodes-b200-template"].inputs["networkInterfaces"]
    assert len(interfaces) == 9  # still the catalog's 8 EFA devices, spread over the 9 cards EC2 reported


def test_the_pinned_efa_plugin_runs_on_every_efa_instance_type_of_the_catalog(catalog):
    efa_types = {
        name
        for hardware in catalog.hardware.values()
        for name, instance in hardware.instance_types.items()
        if instance.efa_interfaces > 0
    }
    assert {"p6e-gb200.36xlarge", "p6-b200.48xlarge", "p5.48xlarge"} <= efa_types
    plugin = ChartRelease(catalog.charts["aws-efa-k8s-device-plugin"], {"tolerations": []})
    assert chart_problems([plugin], efa_types) == []


def test_an_efa_plugin_without_the_instance_type_is_refused(catalog, tmp_path):
    """0.5.10, pinned before, lacked p6e-gb200.36xlarge: its DaemonSet would never start there."""
    chart = catalog.charts["aws-efa-k8s-device-plugin"]
    values = chart.default_values()
    values["supportedInstanceLabels"]["values"].remove("p6e-gb200.36xlarge")
    folder = tmp_path / "charts" / chart.chart / chart.version
    folder.mkdir(parents=True)
    (folder / "values.yaml").write_text(yaml.safe_dump(values))

    class Vendored(Chart):  # the same chart, its values read from tmp_path
        def default_values(self, config_dir=tmp_path):
            return super().default_values(config_dir)

    broken = Vendored.model_validate(chart.model_dump(by_alias=True))
    (problem,) = chart_problems([ChartRelease(broken, {})], {"p6e-gb200.36xlarge", "p6-b200.48xlarge"})
    assert problem.key == "configs/charts.yaml: aws-efa-k8s-device-plugin v0.5.30"
    assert "does not run on p6e-gb200.36xlarge" in problem.message


def test_efa_prefill_and_decode_never_share_a_node(disagg_run):
    """Dynamo's guide requires them apart: EFA transfers on one node fail (fi_read ... EAGAIN)."""
    for deployment in ("disagg-4p4d", "disagg-1p4d"):
        services = by_name(disagg_run)[f"{deployment}-graph"].inputs["spec"]["services"]
        prefill, decode = services["TrtllmPrefillWorker"], services["TrtllmDecodeWorker"]
        assert prefill["extraPodMetadata"]["labels"] == {
            "gpt-oss-infra/deployment": deployment,
            "gpt-oss-infra/role": "prefill",
        }
        assert decode["extraPodSpec"]["affinity"] == {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": prefill["extraPodMetadata"]["labels"]},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }


def test_placement_keeps_efa_prefill_and_decode_apart(catalog):
    """1 prefill + 1 decode (5 GPUs) fit one node by GPUs; with EFA they need two."""
    entries = copy.deepcopy(example_entries("b200-disagg"))
    entries["gpt-oss-infra:nodePools"]["b200"]["efa"] = True
    entries["gpt-oss-infra:nodePools"]["b200"]["nodes"] = 1
    del entries["gpt-oss-infra:deployments"]["disagg-4p4d"]
    entries["gpt-oss-infra:deployments"]["disagg-1p4d"]["replicas"] = 1
    # One node and EFA asked for: the deployment stays on the node, nothing crosses, no anti-affinity.
    stack = build_stack(namespace_config(copy.deepcopy(entries)), catalog, with_hf_token=False)
    assert all(worker.efa is None for worker in stack.serving[0].deployment.workers)
    # Two nodes, and the 4P4D deployment too: 13 GPUs on 16, but each deployment's prefill and
    # decode must be apart; first-fit decreasing finds room (4|4, 4|1).
    entries = copy.deepcopy(example_entries("b200-disagg"))
    stack = build_stack(namespace_config(entries), catalog, with_hf_token=False)
    assert stack.efa_pools == {"b200": True}
    # Three replicas of 1P4D on two nodes: 15 GPUs fit, but no node can hold a decode away from
    # every prefill of its deployment.
    del entries["gpt-oss-infra:deployments"]["disagg-4p4d"]
    entries["gpt-oss-infra:deployments"]["disagg-1p4d"]["replicas"] = 3
    from core.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        build_stack(namespace_config(entries), catalog, with_hf_token=False)
    (problem,) = caught.value.problems
    assert problem.key == "gpt-oss-infra:deployments.disagg-1p4d.nodePool"
    assert "prefill and decode workers need different nodes (EFA)" in problem.message


def test_card_0_keeps_only_the_primary_unless_every_card_is_needed(catalog):
    """If EC2 reported p6e-gb200's card 0 as fast as the others, it still gets no EFA: AWS requires
    it to be of type interface there."""
    instance = catalog.hardware["gb200"].instance_types["p6e-gb200.36xlarge"]
    flat = instance.ec2.model_copy(update={"network_card_peak_gbps": [400.0] * 17})
    interfaces, problems = efa_network_interfaces("p6e-gb200.36xlarge", flat, 4)
    assert problems == []
    assert [i["network_card_index"] for i in interfaces] == [0, 1, 5, 9, 13]
    assert interfaces[0]["interface_type"] == "interface"
