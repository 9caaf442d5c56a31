"""EFA in the real program: interfaces on the pools whose KV cache crosses nodes, the layout EC2 reports,
workers requesting their share, prefill and decode kept on different nodes."""

from __future__ import annotations

import pulumi
import pytest
import yaml

from gpt_oss_infra.core.dynamo_graph import components_by_name
from tests.support import by_name, example_entries, run_in_account


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
    worker = components_by_name(resources[f"{deployment}-graph"].inputs)[service]
    assert worker.devices == {"vpc.amazonaws.com/efa": str(devices)}
    pod, main = worker.pod, worker.main
    assert main["image"] == "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1-efa"  # the release's, multi-arch
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


def test_efa_prefill_and_decode_never_share_a_node(disagg_run):
    """Dynamo's guide requires them apart: EFA transfers on one node fail (fi_read ... EAGAIN)."""
    for deployment in ("disagg-4p4d", "disagg-1p4d"):
        components = components_by_name(by_name(disagg_run)[f"{deployment}-graph"].inputs)
        prefill, decode = components["TrtllmPrefillWorker"], components["TrtllmDecodeWorker"]
        assert prefill.labels == {
            "gpt-oss-infra/deployment": deployment,
            "gpt-oss-infra/role": "prefill",
        }
        assert decode.pod["affinity"] == {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": prefill.labels},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
