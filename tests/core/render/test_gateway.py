"""The gateway in front of internal and public endpoints: what it renders, and what is refused."""

from __future__ import annotations

import copy
import json

import pytest

from gpt_oss_infra.core.checks.validation import object_problems
from gpt_oss_infra.core.inputs.config import EndpointConfig, namespace_config
from gpt_oss_infra.core.render import gateway
from gpt_oss_infra.core.render.cluster_plan import existing_cluster_plan
from gpt_oss_infra.core.report.stack_report import render_summary, stack_report
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, problem_keys, refused

CERTIFICATE = "arn:aws:acm:us-east-2:123456789012:certificate/00000000-0000-4000-8000-000000000000"
MODEL = "openai/gpt-oss-120b"
PSA = "pod-security.kubernetes.io/"


def endpoint(**fields) -> EndpointConfig:
    return EndpointConfig.model_validate(fields)


def by_kind(rendered: gateway.Gateway) -> dict:
    return {obj["kind"]: obj for obj in rendered.objects}


CREATED = gateway.GatewayTarget(namespace="envoy-gateway-system", with_nlb=True, pod_cidr="10.0.0.0/16")
NO_NLB = gateway.GatewayTarget(namespace="envoy-gateway-system", with_nlb=False, pod_cidr=None)


def render(exposure="internal", target=CREATED, clients=("alice", "bob"), **fields) -> gateway.Gateway:
    return gateway.gateway("chat", "gpt-oss", endpoint(exposure=exposure, **fields), MODEL, target, list(clients))


def public(**fields) -> gateway.Gateway:
    return render("public", hostname="chat.example.com", certificateArn=CERTIFICATE, **fields)


def test_a_public_endpoint_is_an_internet_facing_nlb_with_tls_and_api_keys():
    rendered = public()
    objects = by_kind(rendered)
    service = objects["EnvoyProxy"]["spec"]["provider"]["kubernetes"]["envoyService"]
    assert service["loadBalancerClass"] == "service.k8s.aws/nlb"
    envoy = objects["EnvoyProxy"]["spec"]["provider"]["kubernetes"]["envoyDeployment"]
    terms = envoy["pod"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert terms[0]["podAffinityTerm"]["labelSelector"]["matchLabels"] == {
        "gateway.envoyproxy.io/owning-gateway-name": "chat-gateway"
    }
    assert service["annotations"] == {
        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
        "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
        "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": CERTIFICATE,
        "service.beta.kubernetes.io/aws-load-balancer-ssl-ports": "443",
        "service.beta.kubernetes.io/aws-load-balancer-ssl-negotiation-policy": "ELBSecurityPolicy-TLS13-1-2-2021-06",
    }
    assert objects["Gateway"]["spec"]["listeners"][0] | {"allowedRoutes": None} == {
        "name": "http",
        "protocol": "HTTP",
        "port": 443,  # TLS ends on the NLB, which forwards the decrypted stream here
        "allowedRoutes": None,
    }
    route = objects["HTTPRoute"]["spec"]
    assert route["hostnames"] == ["chat.example.com"]
    assert route["rules"] == [{"backendRefs": [{"name": "chat-frontend", "port": 8000}], "timeouts": {"request": "0s"}}]
    auth = objects["SecurityPolicy"]["spec"]["apiKeyAuth"]
    assert auth["credentialRefs"] == [{"group": "", "kind": "Secret", "name": "chat-api-keys"}]
    assert auth["extractFrom"] == [{"headers": ["authorization", "x-api-key"]}]
    assert auth["sanitize"] is True and auth["forwardClientIDHeader"] == "x-client-id"
    # A valid Secret in the plan: one masked value per client, whose keys the shell sets.
    assert rendered.api_key_secret["metadata"]["name"] == "chat-api-keys" and "data" not in rendered.api_key_secret
    assert rendered.api_key_secret["stringData"] == {"alice": "[secret]", "bob": "[secret]"}
    assert service["name"] == "envoy-gpt-oss-chat" and "loadBalancerSourceRanges" not in service
    assert rendered.url == "https://chat.example.com"
    assert '-H "Authorization: Bearer $GPT_OSS_API_KEY"' in rendered.curl
    assert json.loads(rendered.curl.split("-d '")[1].rstrip("'"))["model"] == MODEL


def test_an_internal_endpoint_without_a_certificate_is_plain_http_on_port_80():
    objects = by_kind(render())
    annotations = objects["EnvoyProxy"]["spec"]["provider"]["kubernetes"]["envoyService"]["annotations"]
    assert annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internal"
    assert not any("ssl" in key for key in annotations)
    assert objects["Gateway"]["spec"]["listeners"][0]["port"] == 80
    assert "hostnames" not in objects["HTTPRoute"]["spec"]


def test_each_client_with_its_own_limit_is_left_out_of_everyone_elses_bucket():
    rules = gateway.rate_limit_rules(
        endpoint(
            exposure="internal",
            rateLimit={"requests": 60},
            clientRateLimits={"batch": {"requests": 10, "unit": "Second"}},
        )
    )
    assert rules == [
        {
            "clientSelectors": [{"headers": [{"name": "x-client-id", "type": "Exact", "value": "batch"}]}],
            "limit": {"requests": 10, "unit": "Second"},
        },
        {
            "clientSelectors": [
                {
                    "headers": [
                        {"name": "x-client-id", "type": "Distinct"},
                        {"name": "x-client-id", "type": "Exact", "value": "batch", "invert": True},
                    ]
                }
            ],
            "limit": {"requests": 60, "unit": "Minute"},
        },
    ]


def test_every_gateway_object_validates_against_its_vendored_crd(catalog):
    rendered = public(allowedCidrs=["203.0.113.0/24"])
    dynamo = catalog.dynamo_versions["1.2.1"]
    for obj in [*rendered.objects, gateway.gateway_class(), rendered.api_key_secret]:
        assert object_problems(obj, "1.33", dynamo) == [], obj["kind"]


def test_a_misplaced_gateway_field_is_refused_by_the_crd_schema(catalog):
    """The API server would prune it silently: the CRD's schema, closed, names it."""
    policy = copy.deepcopy(by_kind(render()))
    policy = policy["SecurityPolicy"]
    policy["spec"]["apiKeyAuth"]["forwardClientIdHeader"] = policy["spec"]["apiKeyAuth"].pop("forwardClientIDHeader")
    (line,) = object_problems(policy, "1.33", catalog.dynamo_versions["1.2.1"])
    assert line.startswith("spec.apiKeyAuth: Additional properties are not allowed ('forwardClientIdHeader'")
    assert line.endswith("(envoy-gateway v1.9.0 CRD SecurityPolicy)")


def test_a_kind_no_vendored_crd_defines_is_refused(catalog):
    unknown = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    assert object_problems(unknown, "1.33", catalog.dynamo_versions["1.2.1"]) == [
        "(object): no schema for example.com/v1 Widget (no vendored CRD defines it)"
    ]


# --- what is refused, each naming the key


def staging() -> dict:
    return copy.deepcopy(namespace_config(example_entries("staging")))


def test_a_public_endpoint_without_tls_is_refused(catalog):
    raw = staging()
    raw["deployments"]["gpt-oss"]["endpoint"] = {"exposure": "public"}
    error = refused(raw, catalog)
    assert [str(problem) for problem in error.problems] == [
        "gpt-oss-infra:deployments.gpt-oss.endpoint.certificateArn: required with exposure public: an ACM "
        "certificate ARN; TLS ends on the NLB",
        "gpt-oss-infra:deployments.gpt-oss.endpoint.hostname: required with exposure public: the DNS name "
        "clients use, which the certificate covers",
    ]


def test_a_gateway_without_api_keys_is_refused(catalog):
    (problem,) = refused(staging(), catalog, api_key_clients=[]).problems
    assert problem.key == "gpt-oss-infra:apiKeys"
    assert "pulumi config set --secret --path 'gpt-oss-infra:apiKeys.<client>' <key>" in problem.message


def test_gateway_settings_on_a_cluster_endpoint_are_refused(catalog):
    raw = staging()
    raw["deployments"]["gpt-oss"]["endpoint"] = {"hostname": "chat.example.com", "allowedCidrs": ["10.0.0.0/8"]}
    assert problem_keys(raw, catalog) == [
        "gpt-oss-infra:deployments.gpt-oss.endpoint.hostname",
        "gpt-oss-infra:deployments.gpt-oss.endpoint.allowedCidrs",
    ]


def test_api_key_clients_are_secret_key_names_and_own_the_rate_limits_given_to_them(catalog):
    raw = staging()
    raw["deployments"]["gpt-oss"]["endpoint"]["clientRateLimits"] = {"batch": {"requests": 5}}
    error = refused(raw, catalog, api_key_clients=("Batch_Jobs", "ci"))
    assert [str(problem) for problem in error.problems] == [
        "gpt-oss-infra:apiKeys.Batch_Jobs: not a client name: lower-case letters, digits and '-', at most 63 (it "
        "names the key in the API-key Secret and reaches the frontend as x-client-id)",
        "gpt-oss-infra:deployments.gpt-oss.endpoint.clientRateLimits.batch: no such client in apiKeys (clients: "
        "Batch_Jobs, ci): the limit would never apply",
    ]


def test_a_public_gateway_on_an_existing_cluster_without_the_load_balancer_controller_is_refused(catalog):
    raw = copy.deepcopy(namespace_config(example_entries("existing-cluster")))
    raw["deployments"]["gpt-oss"]["endpoint"] = {
        "exposure": "public",
        "hostname": "chat.example.com",
        "certificateArn": CERTIFICATE,
        "allowedCidrs": ["203.0.113.0/24"],
    }
    error = refused(raw, catalog)
    assert [problem.key for problem in error.problems] == [
        "gpt-oss-infra:deployments.gpt-oss.endpoint.exposure",
        "gpt-oss-infra:deployments.gpt-oss.endpoint.certificateArn",
        "gpt-oss-infra:deployments.gpt-oss.endpoint.allowedCidrs",
    ]
    assert "public needs an NLB: this existing cluster has no AWS Load Balancer Controller" in str(error)
    raw["cluster"]["loadBalancerController"] = True  # the user's controller makes the NLB
    gateway_ = build_stack(raw, catalog, with_hf_token=False, api_key_clients=["ci"]).serving[0].gateway
    assert gateway_.front_door.via_nlb is False  # the NAT address need not be in 203.0.113.0/24


def test_an_internal_gateway_on_an_existing_cluster_without_an_nlb_is_its_cluster_service(catalog):
    raw = copy.deepcopy(namespace_config(example_entries("existing-cluster")))
    raw["deployments"]["gpt-oss"]["endpoint"] = {"exposure": "internal"}
    stack = build_stack(raw, catalog, with_hf_token=False, api_key_clients=["ci"])
    assert stack.gateways.load_balancers is None  # the program installs no NLB controller there
    rendered = stack.serving[0].gateway
    service = by_kind(rendered)["EnvoyProxy"]["spec"]["provider"]["kubernetes"]["envoyService"]
    assert service == {"name": "envoy-gpt-oss-gpt-oss", "type": "ClusterIP"}
    assert rendered.url == "http://envoy-gpt-oss-gpt-oss.envoy-gateway-system.svc.cluster.local:80"
    assert "elbv2.k8s.aws/pod-readiness-gate-inject" not in stack.gateways.namespace["metadata"]["labels"]


@pytest.mark.parametrize("controller", [False, True])
def test_the_plan_summary_names_the_way_in_actually_planned(catalog, controller):
    """An existing cluster without the AWS Load Balancer Controller gets no NLB: the summary, the report
    and the smoke test's path say so, never "internal NLB"."""
    raw = copy.deepcopy(namespace_config(example_entries("existing-cluster")))
    raw["cluster"]["loadBalancerController"] = controller
    raw["deployments"]["gpt-oss"]["endpoint"] = {"exposure": "internal"}
    if controller:
        raw["deployments"]["gpt-oss"]["endpoint"]["allowedCidrs"] = ["10.20.0.0/16"]
    stack = build_stack(raw, catalog, with_hf_token=False, api_key_clients=["ci"])
    report = stack_report(stack, catalog, existing_cluster_plan(), None)
    reported = report["deployments"]["gpt-oss"]["gateway"]
    summary = " ".join(render_summary("gpt-oss-infra", "lab", report, [], []).split())
    if controller:
        assert reported["reachedThrough"] == "internal NLB"
        assert "- gateway (internal NLB, API keys, 401 without one): the NLB's DNS name" in summary
        return
    assert reported["reachedThrough"] == gateway.IN_CLUSTER_SERVICE
    assert "NLB," not in summary and "internal NLB" not in summary
    assert (
        "- gateway (internal, API keys, 401 without one), reached through the gateway's in-cluster Service "
        "(ClusterIP, no NLB: cluster.loadBalancerController is off): "
        "http://envoy-gpt-oss-gpt-oss.envoy-gateway-system.svc.cluster.local:80;" in summary
    )
    assert stack.serving[0].gateway.front_door.path == gateway.IN_CLUSTER_SERVICE


@pytest.mark.parametrize(
    ("rendered", "via_nlb", "path"),
    [
        (render(), True, "its internal NLB, from inside the VPC"),
        (render(allowedCidrs=["10.0.0.0/8"]), True, "its internal NLB, from inside the VPC"),  # holds the VPC
        (
            render(allowedCidrs=["192.168.0.0/16"]),
            False,
            "its Envoy Service inside the cluster, not the NLB (the internal NLB admits only 192.168.0.0/16, "
            "which need not hold the pods' addresses)",
        ),
        (public(), True, "its internet-facing NLB, from the cluster through its NAT address"),
        (public(allowedCidrs=["0.0.0.0/0"]), True, "its internet-facing NLB, from the cluster through its NAT address"),
        (
            public(allowedCidrs=["203.0.113.0/24"]),
            False,
            "its Envoy Service inside the cluster, not the NLB (the public NLB admits only 203.0.113.0/24, "
            "which need not hold the cluster's NAT address)",
        ),
        (
            render(target=NO_NLB),
            False,
            "the gateway's in-cluster Service (ClusterIP, no NLB: cluster.loadBalancerController is off)",
        ),
    ],
)
def test_the_smoke_test_goes_through_the_nlb_where_the_nlb_admits_it(rendered, via_nlb, path):
    door = rendered.front_door
    assert (door.via_nlb, door.path) == (via_nlb, path)
    assert (door.service, door.namespace, door.client) == ("envoy-gpt-oss-chat", "envoy-gateway-system", "alice")


def test_an_ipv6_allowed_range_admits_no_pod_of_an_ipv4_vpc():
    """Before: ipaddress's TypeError ("not of the same version") ended the plan with a traceback."""
    door = render(allowedCidrs=["2001:db8::/32"]).front_door
    assert not door.via_nlb
    assert "the internal NLB admits only 2001:db8::/32, which need not hold the pods' addresses" in door.path


def test_allowed_cidrs_become_the_nlb_source_ranges():
    service = by_kind(public(allowedCidrs=["203.0.113.0/24"]))["EnvoyProxy"]["spec"]["provider"]["kubernetes"]
    assert service["envoyService"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]


def test_a_long_envoy_service_name_stays_a_dns_label():
    name = gateway.envoy_service_name("n" * 63, "chat")
    assert len(name) == 63 and name.startswith("envoy-" + "n" * 50 + "-")
    assert gateway.envoy_service_name("gpt-oss", "chat") == "envoy-gpt-oss-chat"
    assert gateway.envoy_service_name("1team", "chat") == "envoy-1team-chat"  # a Service name starts with a letter


def ranges(rendered: gateway.Gateway) -> list[str] | None:
    service = by_kind(rendered)["EnvoyProxy"]["spec"]["provider"]["kubernetes"]["envoyService"]
    return service.get("loadBalancerSourceRanges")


def test_an_internal_nlb_admits_the_vpc_we_create_not_the_controllers_anywhere():
    assert ranges(render()) == ["10.0.0.0/16"]
    assert ranges(render(allowedCidrs=["192.168.0.0/16"])) == ["192.168.0.0/16"]
    existing_with_controller = gateway.GatewayTarget("envoy-gateway-system", with_nlb=True, pod_cidr=None)
    assert ranges(render(target=existing_with_controller)) is None  # a VPC we do not know: README says so
    assert ranges(public()) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("certificateArn", "arn:aws:iam::123456789012:server-certificate/chat"),  # not ACM
        ("hostname", "Chat.Example.com"),
        ("exposure", "external"),
        ("clientRateLimits", {f"client-{n}": {"requests": 1} for n in range(16)}),  # 16 + everyone else > 16 rules
        ("allowedCidrs", []),
    ],
)
def test_a_malformed_endpoint_value_is_refused(catalog, field, value):
    raw = staging()
    raw["deployments"]["gpt-oss"]["endpoint"] |= {field: value}
    assert problem_keys(raw, catalog) == [f"gpt-oss-infra:deployments.gpt-oss.endpoint.{field}"]


def test_a_certificate_needs_the_hostname_it_covers(catalog):
    """Clients check the certificate against the name they call: never the NLB's own name."""
    raw = staging()
    raw["deployments"]["gpt-oss"]["endpoint"] = {"exposure": "internal", "certificateArn": CERTIFICATE}
    (problem,) = refused(raw, catalog).problems
    assert str(problem) == (
        "gpt-oss-infra:deployments.gpt-oss.endpoint.hostname: required with certificateArn: the DNS name clients "
        "use, which the certificate covers"
    )


def test_a_malformed_allowed_cidr_is_refused_by_its_index(catalog):
    raw = staging()
    raw["deployments"]["gpt-oss"]["endpoint"] |= {"allowedCidrs": ["10.0.0.0/8", "10.0.0.0/33"]}
    assert problem_keys(raw, catalog) == ["gpt-oss-infra:deployments.gpt-oss.endpoint.allowedCidrs.1"]


def test_the_load_balancer_controller_comes_only_with_a_gateway_on_a_created_cluster(catalog):
    software = build_stack(staging(), catalog, with_hf_token=False, api_key_clients=["ci"]).gateways
    assert software.load_balancers.chart.chart == "aws-load-balancer-controller"
    assert software.load_balancers.values["clusterName"] == "gptoss-staging"
    assert software.load_balancers.values["serviceAccount"] == {"create": True, "name": "aws-load-balancer-controller"}
    # Its Service webhook would refuse every Service of the cluster while the controller is not Ready.
    assert software.load_balancers.values["enableServiceMutatorWebhook"] is False
    spread = software.load_balancers.values["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert spread[0]["podAffinityTerm"]["labelSelector"] == {
        "matchLabels": {"app.kubernetes.io/name": "aws-load-balancer-controller"}
    }
    dev = copy.deepcopy(namespace_config(example_entries("dev")))
    assert build_stack(dev, catalog, with_hf_token=False).gateways is None


# What would replace a securityContext Envoy Gateway sets on the pods it runs (its chart's values, an
# EnvoyProxy's pod and container, or a patch of the Deployment it makes), or add a container or a volume
# (a hostPath one breaks `restricted`) it does not: the chart's and EnvoyProxy's fields of v1.9.0.
OVERRIDES_ENVOY_GATEWAYS_POD_SECURITY = {
    "securityContext",
    "initContainers",
    "patch",
    "volumes",
    "extraVolumes",
    "wasmCacheVolume",
}


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(item) for item in value))
    return set()


def test_envoy_gateways_namespace_enforces_restricted_which_its_pods_meet_as_shipped(catalog):
    """Envoy Gateway v1.9.0's controller, certgen Job and Envoy proxies meet `restricted` with its own
    securityContexts (core/render/gateway.py [eg-pod-security]): the namespace may enforce it only while
    we override none of them."""
    stack = build_stack(staging(), catalog, with_hf_token=False, api_key_clients=["ci"])
    labels = stack.gateways.namespace["metadata"]["labels"]
    assert labels[f"{PSA}enforce"] == labels[f"{PSA}warn"] == labels[f"{PSA}audit"] == "restricted"
    assert labels[f"{PSA}enforce-version"] == f"v{stack.config.cluster.kubernetes_version}" == "v1.34"
    proxies = [obj for serving in stack.serving for obj in serving.gateway.objects if obj["kind"] == "EnvoyProxy"]
    assert len(proxies) == 1
    shaping_envoy_gateways_pods = [stack.gateways.controller.values, *(proxy["spec"] for proxy in proxies)]
    assert "pod" in proxies[0]["spec"]["provider"]["kubernetes"]["envoyDeployment"]  # what _keys walks into
    for settings in shaping_envoy_gateways_pods:
        assert not _keys(settings) & OVERRIDES_ENVOY_GATEWAYS_POD_SECURITY, settings


def test_an_envoy_proxy_overriding_its_security_context_or_adding_a_volume_is_caught():
    proxy = {"provider": {"kubernetes": {"envoyDeployment": {"container": {"securityContext": {"runAsUser": 0}}}}}}
    assert _keys(proxy) & OVERRIDES_ENVOY_GATEWAYS_POD_SECURITY == {"securityContext"}
    host_path = [{"name": "host", "hostPath": {"path": "/"}}]
    proxy = {"provider": {"kubernetes": {"envoyDeployment": {"pod": {"volumes": host_path}}}}}
    assert _keys(proxy) & OVERRIDES_ENVOY_GATEWAYS_POD_SECURITY == {"volumes"}
    values = {"deployment": {"pod": {"extraVolumes": host_path}}}
    assert _keys(values) & OVERRIDES_ENVOY_GATEWAYS_POD_SECURITY == {"extraVolumes"}
    assert _keys({"deployment": {"pod": {"affinity": {}}}}) & OVERRIDES_ENVOY_GATEWAYS_POD_SECURITY == set()
