"""The policy pack (policy/): each policy with a passing and a failing resource, and every stack passing."""

from __future__ import annotations

import pytest
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)

from policy.gpt_oss_policies import POLICIES
from tests.support import example_entries, run_entries, stack_entries

BY_NAME = {policy.name: policy for policy in POLICIES}


def options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def resource_violations(policy_name: str, type_: str, props: dict, protect: bool = False) -> list[str]:
    found: list[str] = []
    args = ResourceValidationArgs(type_, props, f"urn:{type_}::x", "x", options(protect), None)
    BY_NAME[policy_name].validate(args, lambda message, urn=None: found.append(message))
    return found


GPU_GROUP = {"amiType": "AL2023_x86_64_NVIDIA", "labels": {"nvidia.com/gpu.present": "true"}}
TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
CASES = [
    # policy, type, passing props, failing props, protect (passing), protect (failing)
    (
        "gpu-node-groups-tainted",
        "aws:eks/nodeGroup:NodeGroup",
        GPU_GROUP | {"taints": [TAINT]},
        GPU_GROUP,
        False,
        False,
    ),
    (
        "images-pinned",
        "kubernetes:batch/v1:Job",
        {"spec": {"template": {"spec": {"containers": [{"image": "python:3.12.11-slim-bookworm"}]}}}},
        {"spec": {"template": {"spec": {"containers": [{"image": "python:latest"}]}}}},
        False,
        False,
    ),
    (
        "hf-token-through-secret",
        "kubernetes:batch/v1:Job",
        {"spec": {"containers": [{"envFrom": [{"secretRef": {"name": "hf-token"}}]}]}},
        {"spec": {"containers": [{"env": [{"name": "HF_TOKEN", "value": "hf_abc"}]}]}},
        False,
        False,
    ),
    (
        "model-cache-rwx-protected",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"metadata": {"name": "model-cache"}, "spec": {"accessModes": ["ReadWriteMany"]}},
        {"metadata": {"name": "model-cache"}, "spec": {"accessModes": ["ReadWriteMany"]}},
        True,
        False,
    ),
    (
        "no-unapproved-load-balancer",
        "kubernetes:core/v1:Service",
        {"metadata": {"annotations": {"gpt-oss-infra/allow-load-balancer": "true"}}, "spec": {"type": "LoadBalancer"}},
        {"metadata": {}, "spec": {"type": "LoadBalancer"}},
        False,
        False,
    ),
    (
        "eks-public-endpoint-restricted",
        "aws:eks/cluster:Cluster",
        {"vpcConfig": {"endpointPublicAccess": True, "publicAccessCidrs": ["203.0.113.0/24"]}},
        {"vpcConfig": {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]}},
        False,
        False,
    ),
]


@pytest.mark.parametrize("policy, type_, passing, failing, protect_ok, protect_bad", CASES, ids=[c[0] for c in CASES])
def test_resource_policy_passes_and_fails(policy, type_, passing, failing, protect_ok, protect_bad):
    assert resource_violations(policy, type_, passing, protect_ok) == []
    assert len(resource_violations(policy, type_, failing, protect_bad)) == 1


def test_model_cache_must_be_rwx():
    props = {"metadata": {"name": "model-cache"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    (message,) = resource_violations(
        "model-cache-rwx-protected", "kubernetes:core/v1:PersistentVolumeClaim", props, True
    )
    assert "ReadWriteMany" in message


def stack_violations(policy_name: str, resources: list[tuple[str, dict]]) -> list[str]:
    found: list[str] = []
    policy_resources = [
        PolicyResource(type_, props, f"urn:{i}", f"r{i}", options(), None, None, [], {})
        for i, (type_, props) in enumerate(resources)
    ]
    BY_NAME[policy_name].validate(StackValidationArgs(policy_resources), lambda m, urn=None: found.append(m))
    return found


def test_prod_without_reservation_is_advised_against():
    prod_group = GPU_GROUP | {"capacityType": "ON_DEMAND", "tags": {"gpt-oss-infra/environment": "prod"}}
    reserved = prod_group | {"capacityType": "CAPACITY_BLOCK"}
    dev_group = prod_group | {"tags": {"gpt-oss-infra/environment": "dev"}}
    node_group = "aws:eks/nodeGroup:NodeGroup"
    assert stack_violations("prod-gpus-reserved", [(node_group, reserved), (node_group, dev_group)]) == []
    assert len(stack_violations("prod-gpus-reserved", [(node_group, prod_group)])) == 1


def test_every_policy_has_a_case():
    assert {case[0] for case in CASES} | {"prod-gpus-reserved"} == set(BY_NAME)


@pytest.mark.parametrize("stack", ["dev", "staging", "prod", "b200", "gb200", "h200", "existing-cluster"])
def test_our_stacks_pass_every_policy(stack):
    entries = stack_entries(stack) if stack in ("dev", "staging", "prod") else example_entries(stack)
    run = run_entries(entries | {"gpt-oss-infra:hfToken": "hf_x"}, stack=stack)
    assert run.error is None, run.error
    violations = []
    for registration in run.resources:
        for policy in POLICIES:
            if isinstance(policy, ResourceValidationPolicy):
                protect = registration.options.get("protect", False)
                args = ResourceValidationArgs(
                    registration.type, registration.inputs, "urn", registration.name, options(protect), None
                )
                policy.validate(args, lambda message, urn=None, r=registration: violations.append((r.name, message)))
    assert violations == []
    groups = [(r.type, r.inputs) for r in run.resources]
    assert stack_violations("prod-gpus-reserved", groups) == []
