"""Labels, taints, placement and Pulumi annotations that several objects share, defined once."""

from __future__ import annotations

from typing import Any

from gpt_oss_infra.core.inputs.catalog import CPU_ONLY

PART_OF = "gpt-oss-infra"
POOL_LABEL = "gpt-oss-infra/pool"  # on every node of ours: the node pool it belongs to
HARDWARE_LABEL = "gpt-oss-infra/hardware"
DEPLOYMENT_LABEL = "gpt-oss-infra/deployment"
ROLE_LABEL = "gpt-oss-infra/role"  # a graph pod's role: frontend, or a worker's: worker, prefill or decode
FRONTEND_ROLE = "frontend"
GPU_NODE_LABEL = {"nvidia.com/gpu.present": "true"}  # on our GPU nodes; the device plugin selects it
GPU_TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
SYSTEM_POOL = "system"  # the CPU node group: platform, jobs, frontends
# On what serves a simulated engine (the mocker: its graphs, and the tokenizer-only model download).
SIMULATED_LABEL = {"gpt-oss-infra/simulated": "true"}

# Platform pods and jobs prefer the system pool (and may run elsewhere in an existing cluster).
SYSTEM_POOL_AFFINITY: dict[str, Any] = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "preference": {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": [SYSTEM_POOL]}]},
            }
        ]
    }
}

# A Job Pulumi waits for that failed stays failed in the cluster: at the next `up`, replace it (run
# it again) instead of failing on it at once (pulumi-kubernetes' pulumi.com/replaceUnready).
REPLACE_UNREADY = {"pulumi.com/replaceUnready": "true"}


def common_labels(component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/component": component,
    }


def worker_labels(deployment_name: str, role: str) -> dict[str, str]:
    """Labels on a graph's pods (frontend and workers) that name its deployment and role: anti-affinity,
    NetworkPolicies and monitors select them."""
    return {DEPLOYMENT_LABEL: deployment_name, ROLE_LABEL: role}


def pool_node_labels(hardware: str, pool: str) -> dict[str, str]:
    """What every node of a pool the program makes carries, a node group's or Karpenter's: workers and the
    placement check select by them."""
    return {**(GPU_NODE_LABEL if hardware != CPU_ONLY else {}), HARDWARE_LABEL: hardware, POOL_LABEL: pool}


def pool_node_taint(hardware: str, pool: str) -> dict[str, str]:
    """The taint on those nodes: the GPU taint; a cpu pool's own, which only its workers tolerate (another pod
    there would keep an empty node from going: WhenEmpty counts every pod but DaemonSets')."""
    if hardware != CPU_ONLY:
        return {"key": GPU_TAINT["key"], "value": "true", "effect": GPU_TAINT["effect"]}
    return {"key": POOL_LABEL, "value": pool, "effect": "NoSchedule"}


def cpu_pool_toleration(pool: str) -> dict[str, str]:
    return {"key": POOL_LABEL, "operator": "Equal", "value": pool, "effect": "NoSchedule"}
