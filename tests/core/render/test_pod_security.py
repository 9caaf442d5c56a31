"""Pod Security Admission levels and the graph pods' securityContexts."""

from __future__ import annotations

import copy

import pytest

from gpt_oss_infra.core.dynamo_graph import components_by_name, graph_components
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render import pod_security
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries

PSA = "pod-security.kubernetes.io/"


def stack_of(name, catalog):
    raw = copy.deepcopy(namespace_config(example_entries(name)))
    return build_stack(raw, catalog, with_hf_token=False, api_key_clients=["ci"])


@pytest.mark.parametrize(("name", "workloads"), [("dev", "baseline"), ("b200-disagg", "privileged")])
def test_namespaces_enforce_what_their_pods_meet_and_warn_at_restricted(name, workloads, catalog):
    """b200-disagg's workers use EFA, which Dynamo's guide requires privileged: its namespace must allow it."""
    stack = stack_of(name, catalog)
    labels = stack.namespace["metadata"]["labels"]
    assert labels[f"{PSA}enforce"] == workloads
    # the policy version of the cluster's Kubernetes (dev steps through 1.34; the examples run 1.36)
    assert (labels[f"{PSA}warn"], labels[f"{PSA}audit"], labels[f"{PSA}enforce-version"]) == (
        "restricted",
        "restricted",
        f"v{stack.config.cluster.kubernetes_version}",
    )
    assert stack.config.cluster.kubernetes_version == {"dev": "1.34", "b200-disagg": "1.36"}[name]
    assert stack.platform.namespace["metadata"]["labels"][f"{PSA}enforce"] == "baseline"


def test_graph_pods_run_as_the_image_user_without_capabilities(catalog):
    components = components_by_name(stack_of("dev", catalog).serving[0].graph)
    frontend, worker = components["Frontend"], components["TrtllmWorker"]
    assert frontend.pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "fsGroup": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    # No seccomp profile on workers: the runtime default blocks pidfd_getfd (TensorRT-LLM's MoE all-to-all).
    assert worker.pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 1000}
    for container in (frontend.main, worker.main, *worker.pod["initContainers"]):
        assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_efa_workers_stay_privileged_with_the_images_own_user(catalog):
    graph = stack_of("b200-disagg", catalog).serving[0].graph
    efa_workers = [component for component in graph_components(graph) if component.pod.get("hostIPC")]
    assert efa_workers
    for worker in efa_workers:
        assert "securityContext" not in worker.pod  # runAsNonRoot would refuse a root EFA image
        assert worker.main["securityContext"]["privileged"] is True


def test_admission_labels_pin_every_mode_to_the_cluster_version():
    assert pod_security.admission_labels("baseline", "1.34") == {
        f"{PSA}enforce": "baseline",
        f"{PSA}enforce-version": "v1.34",
        f"{PSA}warn": "restricted",
        f"{PSA}warn-version": "v1.34",
        f"{PSA}audit": "restricted",
        f"{PSA}audit-version": "v1.34",
    }
