"""core/resolve/efa.py: which deployments move KV cache between nodes, and which pools get EFA."""

from __future__ import annotations

import copy

from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, on_release


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


def test_gb200_disaggregation_on_1_2_is_warned_for_lack_of_an_arm64_efa_image(catalog):
    config = on_release(namespace_config(copy.deepcopy(example_entries("gb200"))), catalog, "1.2.1")
    stack = build_stack(config, catalog, with_hf_token=False)
    assert stack.efa_pools == {"gb200": False}  # nothing could use it
    (warning,) = [w for w in stack.warnings if "KV cache moves between nodes" in w]
    assert warning.startswith("gpt-oss-infra:deployments.long-prompts:")
    assert "no TensorRT-LLM EFA runtime image for arm64 nodes" in warning


def test_gb200_disaggregation_gets_efa_from_1_3(catalog):
    """Dynamo's -efa runtime images are multi-arch from 1.3.0 (configs/dynamo/versions.yaml)."""
    stack = build_stack(namespace_config(copy.deepcopy(example_entries("gb200"))), catalog, with_hf_token=False)
    assert stack.config.release.dynamo == "1.6.1" and stack.efa_pools == {"gb200": True}
    assert not [w for w in stack.warnings if "KV cache moves between nodes" in w]
    crossing = next(s for s in stack.serving if s.deployment.name == "long-prompts")
    images = {worker.efa.image for worker in crossing.deployment.workers}
    assert images == {"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1-efa"}


def test_an_efa_pool_asked_for_without_crossing_traffic_gets_interfaces_only(catalog):
    entries = copy.deepcopy(example_entries("b200"))
    entries["gpt-oss-infra:nodePools"]["b200"]["efa"] = True
    stack = build_stack(namespace_config(entries), catalog, with_hf_token=False)
    assert stack.efa_pools == {"b200": True}
    assert all(worker.efa is None for serving in stack.serving for worker in serving.deployment.workers)
