"""core/resolve/efa.py: which deployments move KV cache between nodes, and which pools get EFA."""

from __future__ import annotations

import copy

from core.inputs.config import namespace_config
from core.stack import build_stack
from tests.support import example_entries


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
