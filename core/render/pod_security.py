"""Pod security: the Pod Security Admission level of each namespace the program creates, and the
securityContext of the graph's pods (the Jobs set their own: core/render/model_cache.py,
smoke_test_job.py).

Each namespace enforces the strictest level its pods meet [psa], and warns and audits at
`restricted`, so what keeps it from `restricted` shows up in `kubectl` warnings and the audit log:
  workloads (gpt-oss)  baseline: the model-cache Jobs run as root (their volume may admit only uid 0,
                       core/render/model_cache.py); privileged when a worker uses EFA, which Dynamo's
                       EFA guide requires to be privileged with hostIPC (configs/efa.yaml)
  platform             baseline: the dynamo-platform chart's operator sets no seccomp profile and its
                       NATS container no securityContext at all, and the chart declares no value to
                       add them (research: issue 12, network REPORT section 3)
  monitoring           privileged: node-exporter reads the host (hostNetwork, hostPID, hostPath)
  envoy-gateway-system restricted: Envoy Gateway's own securityContexts meet it (core/render/gateway.py)
  GPU software's       privileged, on an existing cluster (elsewhere Helm makes them, unlabelled): the
                       device plugin, DCGM exporter and GPU Operator read the host (core/render/stack_objects.py)
  [psa] https://kubernetes.io/docs/concepts/security/pod-security-standards/
"""

from __future__ import annotations

from typing import Any

PSA_PREFIX = "pod-security.kubernetes.io/"
RESTRICTED, BASELINE, PRIVILEGED = "restricted", "baseline", "privileged"

# The Dynamo runtime images run as `dynamo`, uid 1000 (their Dockerfile's USER): runAsNonRoot needs
# the number, as kubelet cannot check a user name. fsGroup 1000 is what the operator sets when a pod
# sets no securityContext of its own. Workers get no seccomp profile: the runtime's default blocks
# pidfd_getfd, which TensorRT-LLM's MoE all-to-all uses (TensorRT-LLM PR #6047; flashinfer #2394);
# the frontend runs no engine and gets RuntimeDefault.
WORKER_POD = {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 1000}
FRONTEND_POD = WORKER_POD | {"seccompProfile": {"type": "RuntimeDefault"}}
GRAPH_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def admission_labels(enforce: str, kubernetes_version: str) -> dict[str, str]:
    """Enforce `enforce`; warn and audit at restricted; each pinned to the cluster's version."""
    version = f"v{kubernetes_version}"
    labels: dict[str, str] = {}
    for mode, level in (("enforce", enforce), ("warn", RESTRICTED), ("audit", RESTRICTED)):
        labels |= {f"{PSA_PREFIX}{mode}": level, f"{PSA_PREFIX}{mode}-version": version}
    return labels


def workloads_level(efa: bool) -> str:
    return PRIVILEGED if efa else BASELINE


def secured_container(container: dict[str, Any]) -> dict[str, Any]:
    return container | {"securityContext": GRAPH_CONTAINER}
