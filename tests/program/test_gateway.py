"""The gateway as `pulumi up` would build it: keys never in plaintext, the order of waits, the
controller's IAM policy, and how a client finds the endpoint."""

from __future__ import annotations

import json

from gpt_oss_infra.core.render.aws.resources import controller_policy
from gpt_oss_infra.tools.dependencies import transitive_waits
from tests.support import by_name, example_entries, run_entries

SENTINEL = "sk-SENTINEL-api-key-0123456789abcdef"


def staging_with_key():
    entries = example_entries("staging") | {"gpt-oss-infra:apiKeys": {"ci": SENTINEL}}
    run = run_entries(entries, stack="staging")
    assert run.error is None, run.error
    return run


def test_api_keys_reach_the_gateway_only_as_a_secret():
    run = staging_with_key()
    secret = by_name(run)["gpt-oss-gateway-api-keys"]
    # Each key a Pulumi secret (encrypted in the state), under its client's name: a valid Secret in the plan.
    assert secret.inputs["stringData"] == {"ci": "[secret]"}
    assert SENTINEL not in json.dumps([r.as_json() for r in run.resources])
    assert SENTINEL not in json.dumps(run.outputs)
    assert SENTINEL not in "\n".join(run.log)


def test_every_gateway_object_waits_for_the_controller_and_the_nlb_controller():
    run = staging_with_key()
    waits = transitive_waits(run.resources)
    gateway_objects = [r.name for r in run.resources if r.parent == "gpt-oss-gateway" and r.name != "gpt-oss-gateway"]
    assert sorted(gateway_objects) == [
        "gpt-oss-gateway-api-keys",
        "gpt-oss-gateway-backendtrafficpolicy",
        "gpt-oss-gateway-envoyproxy",
        "gpt-oss-gateway-gateway",
        "gpt-oss-gateway-httproute",
        "gpt-oss-gateway-securitypolicy",
    ]
    for name in [n for n in gateway_objects if n != "gpt-oss-gateway-api-keys"]:
        assert {
            "dynamo-platform-gateway-class",
            "dynamo-platform-gateway-release",
            "gptoss-load-balancers-release",
        } <= waits[name], name
    # The NLB controller runs on the system nodes, after their add-ons; never on GPU nodes.
    assert "gptoss-node-addons-coredns" in waits["gptoss-load-balancers-release"]
    assert "gptoss-nodes-gpu" not in waits["gptoss-load-balancers-release"]


def test_the_nlb_controller_has_its_own_pod_identity_role_with_its_published_policy():
    run = staging_with_key()
    resources = by_name(run)
    identity = resources["gptoss-load-balancers-identity"].inputs
    assert (identity["namespace"], identity["serviceAccount"]) == ("kube-system", "aws-load-balancer-controller")
    policy = json.loads(resources["gptoss-load-balancers-policy"].inputs["policy"])
    assert policy == controller_policy("v3.5.0")
    release = resources["gptoss-load-balancers-release"].inputs
    assert release["values"]["region"] == "us-east-2" and release["values"]["clusterName"] == "gptoss-staging"


def test_outputs_tell_a_client_where_and_how_to_call():
    run = run_entries(example_entries("prod") | {"gpt-oss-infra:apiKeys": {"a": SENTINEL}}, stack="prod")
    assert run.error is None, run.error
    (gateway,) = run.outputs["gateways"].values()
    assert gateway["url"] == "https://gpt-oss.internal.example.com"
    assert gateway["curl"].startswith("curl https://gpt-oss.internal.example.com/v1/chat/completions ")
    assert "gateways" not in run_entries(example_entries("dev"), stack="dev").outputs


def test_the_dcgm_exporter_waits_for_the_chart_that_installs_its_servicemonitor_crd():
    run = staging_with_key()
    waits = transitive_waits(run.resources)
    assert "observability-release" in waits["gpu-software-dcgm-exporter"]
    assert "observability-release" not in waits["gpu-software-nvidia-device-plugin"]
    assert by_name(run)["gpu-software-dcgm-exporter"].inputs["values"]["serviceMonitor"] == {"enabled": True}


def test_the_envoy_namespace_gets_the_readiness_gate_label_before_the_chart_installs_into_it():
    """Envoy's pods are the NLB's IP targets: the AWS Load Balancer Controller injects its readiness
    gate only in a namespace labelled for it, and Helm cannot label a namespace it creates."""
    run = staging_with_key()
    (namespace,) = [r for r in run.resources if r.name == "dynamo-platform-gateway-namespace"]
    assert namespace.inputs["metadata"]["name"] == "envoy-gateway-system"
    assert namespace.inputs["metadata"]["labels"]["elbv2.k8s.aws/pod-readiness-gate-inject"] == "enabled"
    (release,) = [r for r in run.resources if r.name == "dynamo-platform-gateway-release"]
    assert release.inputs["namespace"] == "envoy-gateway-system" and release.inputs["createNamespace"] is False
    assert "dynamo-platform-gateway-namespace" in transitive_waits(run.resources)["dynamo-platform-gateway-release"]


def test_destroy_removes_the_gateways_then_waits_for_their_nlbs_then_removes_the_controllers():
    """Offline, the order only: Pulumi deletes in reverse of these waits. That the guard then waits for the
    Services to go is tests/jobs/test_teardown_guard.py's, against a stand-in Kubernetes API."""
    run = staging_with_key()
    waits = transitive_waits(run.resources)
    guard = by_name(run)["dynamo-platform-gateway-load-balancers-gone"]
    assert guard.type == "kubernetes:apps/v1:Deployment"
    (container,) = guard.inputs["spec"]["template"]["spec"]["containers"]
    env = {variable["name"]: variable["value"] for variable in container["env"]}
    assert env["LOAD_BALANCER_NAMESPACES"] == "envoy-gateway-system"  # where Envoy Gateway makes its Services
    assert {
        "dynamo-platform-gateway-release",
        "gptoss-load-balancers-release",
        "dynamo-platform-teardown-namespace",
    } <= waits["dynamo-platform-gateway-load-balancers-gone"]
    for kind in ("envoyproxy", "gateway", "httproute", "securitypolicy", "backendtrafficpolicy"):
        assert "dynamo-platform-gateway-load-balancers-gone" in waits[f"gpt-oss-gateway-{kind}"], kind
    envoy = by_name(run)["gpt-oss-gateway-envoyproxy"].inputs["spec"]["provider"]["kubernetes"]["envoyService"]
    # the Service Envoy Gateway makes, in the namespace the guard watches, is the NLB's
    assert (envoy["name"], envoy["type"]) == ("envoy-gpt-oss-gpt-oss", "LoadBalancer")


def test_the_graph_waits_for_the_platforms_operator_not_its_gateway():
    """The platform makes Envoy Gateway (0.6.2), but the graph needs only the operator: depending on the
    whole DynamoPlatform would put the NLB controller and Envoy Gateway's chart before every graph."""
    waits = transitive_waits(staging_with_key().resources)
    assert "dynamo-platform-release" in waits["gpt-oss-graph"]
    assert not {"dynamo-platform-gateway-release", "gptoss-load-balancers-release"} & waits["gpt-oss-graph"]
    assert "dynamo-platform-gateway-release" in waits["gpt-oss-smoke-test"]  # it goes through the gateway


def test_the_graph_waits_for_its_network_policies():
    """Beside the namespace's default deny, a graph pod started before its policy could not be reached: the
    deployment makes its policies first (0.6.2: with its GptOssDeployment, as the block does)."""
    resources = by_name(staging_with_key())
    policies = {"gpt-oss-frontend-ingress", "gpt-oss-workers-ingress"}
    assert all(resources[name].parent == "gpt-oss" for name in policies)
    assert policies <= set(resources["gpt-oss-graph"].options["dependsOn"])
