"""The policy pack (policy/): each policy with a passing and a failing resource, and every stack passing.

Every policy is given its properties as pulumi-policy's analyzer gives them (policy.py: Analyze, AnalyzeStack):
read-only views that raise on an unknown value (proxy.unknown_checking_proxy), whose nested maps and lists are
Mappings and Sequences, not dicts and lists."""

from __future__ import annotations

import dataclasses

import pytest
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from gpt_oss_infra.core.dynamo_graph import API_VERSIONS, GraphComponent, pulumi_type, render_graph
from policy.gpt_oss_policies import POLICIES
from tests.support import example_entries, run_entries, stack_names

BY_NAME = {policy.name: policy for policy in POLICIES}


def options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def resource_violations(policy_name: str, type_: str, props: dict, protect: bool = False) -> list[str]:
    found: list[str] = []
    args = ResourceValidationArgs(type_, unknown_checking_proxy(props), f"urn:{type_}::x", "x", options(protect), None)
    BY_NAME[policy_name].validate(args, lambda message, urn=None: found.append(message))
    return found


def frontend(main: dict) -> GraphComponent:
    return GraphComponent(name="Frontend", type="frontend", replicas=1, pod={"containers": [main]})


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
    (  # Amazon Linux 2's GPU AMI type names no NVIDIA (botocore's eks AMITypes)
        "gpu-node-groups-tainted",
        "aws:eks/nodeGroup:NodeGroup",
        {"amiType": "AL2_x86_64_GPU", "taints": [TAINT]},
        {"amiType": "AL2_x86_64_GPU"},
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
        "model-cache-rwx",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"metadata": {"name": "model-cache"}, "spec": {"accessModes": ["ReadWriteMany"]}},
        {"metadata": {"name": "model-cache"}, "spec": {"accessModes": ["ReadWriteOnce"]}},
        False,
        False,
    ),
    (  # a protected resource stops `pulumi destroy` (pulumi/pulumi pkg/resource/deploy/step.go)
        "destroy-not-blocked",
        "aws:efs/fileSystem:FileSystem",
        {"encrypted": True},
        {"encrypted": True},
        False,
        True,
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
    (
        "pods-have-security-context",
        "kubernetes:batch/v1:Job",
        {"spec": {"template": {"spec": {"securityContext": {"runAsNonRoot": True}, "containers": [{"name": "a"}]}}}},
        {"spec": {"template": {"spec": {"containers": [{"name": "a", "securityContext": {}}, {"name": "b"}]}}}},
        False,
        False,
    ),
    *(
        (
            "pods-have-security-context",
            pulumi_type(api_version),
            render_graph(api_version, {}, "trtllm", [frontend({"securityContext": {"runAsUser": 1}})]),
            render_graph(api_version, {}, "trtllm", [frontend({"image": "x:1"})]),
            False,
            False,
        )
        for api_version in API_VERSIONS
    ),
]


@pytest.mark.parametrize(
    "policy, type_, passing, failing, protect_ok, protect_bad", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES]
)
def test_resource_policy_passes_and_fails(policy, type_, passing, failing, protect_ok, protect_bad):
    assert resource_violations(policy, type_, passing, protect_ok) == []
    assert len(resource_violations(policy, type_, failing, protect_bad)) == 1


@pytest.mark.parametrize(
    "policy, container",
    [
        ("images-pinned", {"image": "python:latest"}),
        (
            "hf-token-through-secret",
            {"image": "python:3.12", "env": [{"name": "HF_TOKEN", "value": UNKNOWN_STRING_VALUE}]},
        ),
        (  # another variable's name unknown
            "hf-token-through-secret",
            {"image": "python:3.12", "env": [{"name": UNKNOWN_STRING_VALUE}, {"name": "HF_TOKEN", "value": "hf_x"}]},
        ),
    ],
)
def test_a_value_unknown_at_preview_leaves_the_rest_checked(policy, container):
    """At a first preview, values from resources not made yet are unknown; the rest is still checked (the
    analyzer's view raises on reading an unknown one, and the whole resource's check would be skipped)."""
    unknown_elsewhere = {"name": "cache", "persistentVolumeClaim": {"claimName": UNKNOWN_STRING_VALUE}}
    pod = {"volumes": [unknown_elsewhere], "containers": [container]}
    props = {"metadata": {"annotations": {"role": UNKNOWN_STRING_VALUE}}, "spec": {"template": {"spec": pod}}}
    assert len(resource_violations(policy, "kubernetes:batch/v1:Job", props)) == 1


def test_model_cache_must_be_rwx():
    props = {"metadata": {"name": "model-cache"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    (message,) = resource_violations("model-cache-rwx", "kubernetes:core/v1:PersistentVolumeClaim", props)
    assert "ReadWriteMany" in message


def stack_violations(policy_name: str, resources: list[tuple[str, dict]]) -> list[str]:
    found: list[str] = []
    policy_resources = [
        PolicyResource(type_, unknown_checking_proxy(props), f"urn:{i}", f"r{i}", options(), None, None, [], {})
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


# --- the stack policies of issue 12, on a stack's gateway objects


def gateway_resources(scheme="internet-facing", certificate=True, authenticated=True, default_deny=True):
    annotations = {"service.beta.kubernetes.io/aws-load-balancer-scheme": scheme}
    if certificate:
        annotations["service.beta.kubernetes.io/aws-load-balancer-ssl-cert"] = "arn:aws:acm:us-east-2:1:certificate/x"
    meta = {"namespace": "gpt-oss"}
    proxy = {"spec": {"provider": {"kubernetes": {"envoyService": {"annotations": annotations}}}}}
    gateway = {"spec": {"infrastructure": {"parametersRef": {"kind": "EnvoyProxy", "name": "p"}}}}
    route = {"spec": {"parentRefs": [{"name": "g"}]}}
    auth = {"apiKeyAuth": {"credentialRefs": [{"name": "keys"}]}} if authenticated else {}
    security = {"spec": {"targetRefs": [{"kind": "HTTPRoute", "name": "r"}], **auth}}
    deny = {"spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}
    resources = [
        ("kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyProxy", {"metadata": meta | {"name": "p"}} | proxy),
        ("kubernetes:gateway.networking.k8s.io/v1:Gateway", {"metadata": meta | {"name": "g"}} | gateway),
        ("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute", {"metadata": meta | {"name": "r"}} | route),
        ("kubernetes:gateway.envoyproxy.io/v1alpha1:SecurityPolicy", {"metadata": meta | {"name": "s"}} | security),
        (pulumi_type(API_VERSIONS[-1]), {"metadata": meta | {"name": "graph"}}),
    ]
    if default_deny:
        resources.append(("kubernetes:networking.k8s.io/v1:NetworkPolicy", {"metadata": meta | {"name": "d"}} | deny))
    return resources


def test_a_public_gateway_needs_tls_and_authentication():
    assert stack_violations("public-endpoint-auth-and-tls", gateway_resources()) == []
    assert stack_violations("public-endpoint-auth-and-tls", gateway_resources("internal", certificate=False)) == []
    assert stack_violations("public-endpoint-auth-and-tls", gateway_resources(certificate=False)) == [
        "gateway gpt-oss/g is internet-facing without TLS: set an ACM certificate"
    ]
    assert stack_violations("public-endpoint-auth-and-tls", gateway_resources(authenticated=False)) == [
        "route gpt-oss/r of internet-facing gateway g has no authentication"
    ]


def test_graphs_behind_a_gateway_need_a_default_deny_namespace():
    assert stack_violations("workloads-default-deny", gateway_resources()) == []
    assert stack_violations("workloads-default-deny", gateway_resources(default_deny=False)) == [
        "namespace gpt-oss runs graphs behind a gateway without a default-deny ingress NetworkPolicy"
    ]
    allow_all = {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{}]}
    opened = [
        *gateway_resources(default_deny=False),
        ("kubernetes:networking.k8s.io/v1:NetworkPolicy", {"metadata": {"namespace": "gpt-oss"}, "spec": allow_all}),
    ]
    assert len(stack_violations("workloads-default-deny", opened)) == 1  # allows everything: not a deny
    without_gateway = [r for r in gateway_resources(default_deny=False) if not r[0].endswith(":Gateway")]
    assert stack_violations("workloads-default-deny", without_gateway) == []  # dev: nothing comes in


def platform_and_graph(platform: str, image: str, runtime_version: str | None = None) -> list[tuple[str, dict]]:
    chart = f"https://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform-{platform}.tgz"  # as rendered
    release = {"chart": chart, "version": platform}
    worker = dataclasses.replace(frontend({"image": image}), name="TrtllmWorker", runtime_version=runtime_version)
    graph = render_graph(API_VERSIONS[-1], {"name": "g"}, "trtllm", [worker])
    return [("kubernetes:helm.sh/v3:Release", release), (pulumi_type(API_VERSIONS[-1]), graph)]


def test_a_graph_runs_the_platforms_dynamo_release():
    runtime = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime"
    assert stack_violations("runtime-matches-platform", platform_and_graph("1.6.1", f"{runtime}:1.6.1-efa")) == []
    digest = f"{runtime}@sha256:{'0' * 64}"
    assert stack_violations("runtime-matches-platform", platform_and_graph("1.6.1", digest, "1.6.1")) == []
    assert stack_violations("runtime-matches-platform", platform_and_graph("1.6.1", f"{runtime}:1.2.1")) == [
        "graph r1 component TrtllmWorker runs Dynamo 1.2.1; the platform is 1.6.1"
    ]
    assert len(stack_violations("runtime-matches-platform", platform_and_graph("1.6.1", digest, "1.5.1"))) == 1


STACK_POLICIES = {
    "prod-gpus-reserved",
    "public-endpoint-auth-and-tls",
    "workloads-default-deny",
    "runtime-matches-platform",
}


def test_every_policy_has_a_case():
    assert {case[0] for case in CASES} | STACK_POLICIES == set(BY_NAME)


@pytest.mark.parametrize("stack", stack_names())
def test_our_stacks_pass_every_policy(stack):
    run = run_entries(example_entries(stack), stack=stack)  # the run of the stack file the other tests read
    assert run.error is None, run.error
    violations = []
    for registration in run.resources:
        for policy in POLICIES:
            if isinstance(policy, ResourceValidationPolicy):
                protect = registration.options.get("protect", False)
                props = unknown_checking_proxy(registration.inputs)
                args = ResourceValidationArgs(
                    registration.type, props, "urn", registration.name, options(protect), None
                )
                policy.validate(args, lambda message, urn=None, r=registration: violations.append((r.name, message)))
    assert violations == []
    resources = [(r.type, r.inputs) for r in run.resources]
    for policy in STACK_POLICIES:
        assert stack_violations(policy, resources) == [], policy
