"""Every component of the multi-language schema (gpt_oss_infra.COMPONENTS), constructed the way another
Pulumi language's engine constructs it (the SDK's own ComponentProvider, inputs serialized as the engine
sends them), registers only resources whose provider is a plugin every language's engine can load: no
Pulumi dynamic resource, which a non-Python program cannot load (pulumi/pulumi#5455)."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi.dynamic
import pytest
from pulumi.provider.experimental.component import ComponentProvider

import gpt_oss_infra
from gpt_oss_infra.components.destroy_wait import WaitAtDestroyProvider
from gpt_oss_infra.components.provider_host import KeyedRefusalProvider
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.tools.pulumi_engine import as_a_provider_receives, wait_for
from tests.components.conftest import on_stand_in_cluster
from tests.support import example_entries

# The packages whose provider is a plugin of its own, which the engine of any language loads.
PLUGIN_PACKAGES = ("aws", "kubernetes")


def loadable_only_from_python(types: list[str]) -> list[str]:
    """The registered types no other language's engine can load: a type's package (before the first
    colon; `pulumi:providers:<package>` for a provider) must have a plugin of its own, or be a component."""
    loadable = []
    for type_ in types:
        package = type_.split(":")[2] if type_.startswith("pulumi:providers:") else type_.split(":")[0]
        loadable.append(package in PLUGIN_PACKAGES or type_.startswith(f"{gpt_oss_infra.PACKAGE}:"))
    return [type_ for type_, ok in zip(types, loadable, strict=True) if not ok]


def staging_config() -> dict[str, Any]:
    """Pulumi.staging.yaml's config: gateways with NLBs, observability, NATS: every teardown guard."""
    return namespace_config({key: value for key, value in example_entries("staging").items()})


# Each public component with inputs that make it register all it can (an endpoint's gateway, the guards).
CONSTRUCTED = {
    "GptOssStack": (
        {"config": staging_config(), "apiKeys": {"ci": pulumi.Output.secret("k")}, "apiClients": ["ci"]},
        False,
    ),
    "GpuNodePool": ({"clusterName": "lab", "subnetIds": ["subnet-a"], "hardware": "h200", "nodes": 1}, False),
    "DynamoPlatform": (
        {"dynamoRelease": "1.2.1", "blockStorageClass": "gp3", "gateway": True, "loadBalancerController": True},
        True,
    ),
    "ModelCache": ({"namespace": "gpt-oss", "storageClassName": "shared-rwx"}, True),
    "GptOssDeployment": (
        {
            "recipe": "h200-agg-low-latency",
            "gpus": 4,
            "namespace": "gpt-oss",
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200"},
            "endpoint": {"exposure": "internal"},
            "apiKeys": {"ci": pulumi.Output.secret("k")},
            "apiClients": ["ci"],
        },
        True,
    ),
}


def test_every_schema_component_is_constructed_here():
    assert sorted(CONSTRUCTED) == sorted(component.__name__ for component in gpt_oss_infra.COMPONENTS)


@pytest.mark.parametrize("component", sorted(CONSTRUCTED))
def test_a_component_constructed_from_another_language_registers_nothing_only_python_loads(engine, component):
    inputs, on_cluster = CONSTRUCTED[component]
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}
    provider = ComponentProvider(gpt_oss_infra.COMPONENTS, gpt_oss_infra.PACKAGE)

    def program():
        received = wait_for(
            as_a_provider_receives(json.loads(json.dumps(inputs, default=lambda _: None)) | _secrets(inputs))
        )
        provider.construct(
            "it", f"{gpt_oss_infra.PACKAGE}:index:{component}", received, on_stand_in_cluster() if on_cluster else None
        )

    engine.run(program)
    # All but the stand-in cluster's own (tests/components/conftest.on_stand_in_cluster: test:index:Ready).
    types = [resource.typ for resource in engine.mocks.resources if not resource.typ.startswith("test:")]
    assert types.count(f"{gpt_oss_infra.PACKAGE}:index:{component}") == 1
    assert loadable_only_from_python(types) == []
    if component in ("GptOssStack", "DynamoPlatform"):  # what destroy waits on is there, as Kubernetes objects
        assert "kubernetes:apps/v1:Deployment" in types


def _secrets(inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs json cannot carry (Outputs), as given."""
    return {
        key: value
        for key, value in inputs.items()
        if isinstance(value, dict) and any(isinstance(v, pulumi.Output) for v in value.values())
    }


def test_the_check_catches_a_dynamic_resource(engine):
    """What 0.2.0's GptOssStack registered for its destroy waits: a Pulumi dynamic resource."""

    class Wait(pulumi.dynamic.Resource):
        pass

    def program():
        Wait(WaitAtDestroyProvider(), "volumes-gone", {"wait": {"name": "volumes-gone"}})

    engine.run(program)
    types = [resource.typ for resource in engine.mocks.resources]
    assert loadable_only_from_python(types) == ["pulumi-python:dynamic:Resource"]


@pytest.mark.parametrize(
    ("component", "inputs", "path", "reason"),
    [
        (
            "GpuNodePool",
            {"clusterName": "lab", "subnetIds": ["subnet-a"], "hardware": "h300", "nodes": 1},
            "hardware",
            "did you mean 'h200'?",
        ),
        (
            "GptOssDeployment",
            {
                "namespace": "gpt-oss",
                "recipe": "h200-agg-low-latency",
                "nodeSelector": {"gpu": "h200"},
                "readyTimeoutMinutes": 0,
            },
            "readyTimeoutMinutes",
            "must be at least 1",
        ),
        (  # a reason names another argument as the schema spells it too
            "GpuNodePool",
            {
                "clusterName": "lab",
                "subnetIds": ["subnet-a"],
                "hardware": "h200",
                "nodes": 1,
                "capacityType": "CAPACITY_BLOCK",
                "availabilityZone": "us-east-2a",
            },
            "capacityReservationId",
            "required with capacityType CAPACITY_BLOCK",
        ),
        (
            "GptOssStack",
            {"config": namespace_config(example_entries("dev")) | {"namespace": "Not_A_Label"}},
            "config.namespace",
            "must be a DNS label",
        ),
        (  # advice any language can follow: its generated SDK types the secret as a plain string
            "DynamoPlatform",
            {"ngcApiKey": "nvapi-plain"},
            "ngcApiKey",
            "a plain string: pass a secret, e.g. a config value set with `pulumi config set --secret`",
        ),
    ],
)
def test_another_languages_program_sees_each_refusal_under_its_argument(
    engine, monkeypatch, component, inputs, path, reason
):
    """In the component provider, a refusal is the SDK's InputPropertiesError, which the engine shows
    under the property path as the caller's language spells it (camelCase), not one RunError text."""
    from gpt_oss_infra.components import arguments

    # As provider_host.host() sets them:
    monkeypatch.setattr(arguments, "_FOR_OTHER_LANGUAGES", True)
    monkeypatch.setattr(arguments, "_SCHEMA_SPELLING", arguments.schema_spelling(gpt_oss_infra.COMPONENTS))
    [error] = refusal_through_the_provider(engine, component, inputs).errors
    assert error["property_path"] == path
    assert reason in error["reason"]
    assert [r.typ for r in engine.mocks.resources if r.typ.startswith(gpt_oss_infra.PACKAGE)] == []


@pytest.mark.parametrize(
    ("component", "inputs", "path", "reason"),
    [
        ("GpuNodePool", {"clusterName": "lab", "subnetIds": ["s"], "hardware": "h200", "nodes": 1, "instanceTyp": "x"},
         "instanceTyp", "not an argument: did you mean 'instanceType'?"),
        ("GptOssDeployment", {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss", "replica": 3,
                              "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200"}},
         "replica", "not an argument: did you mean 'replicas'?"),
        ("GptOssDeployment", {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss", "apiClients": ["a"],
                              "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200"},
                              "endpoint": {"exposure": "internal", "requestsPerMinut": 5}},
         "endpoint.requestsPerMinut", "not an argument: did you mean 'requestsPerMinute'?"),
    ],
)  # fmt: skip
def test_an_input_the_schema_does_not_define_is_refused_not_dropped(engine, component, inputs, path, reason):
    """The SDK's ComponentProvider maps the schema's inputs onto the Args and drops any other: a misspelt optional
    one left its default silently (a reviewer's instanceTyp, replica and endpoint.requestsPerMinut)."""
    assert refusal_through_the_provider(engine, component, inputs).errors == [{"property_path": path, "reason": reason}]
    assert engine.mocks.resources == []


def test_a_run_error_reaches_another_language_as_its_message_alone(engine):
    """GptOssStack refuses an AWS provider of the caller's with a RunError, which the SDK's gRPC server sends as
    its message; the SDK's wrapper around it it would send as one text with a Python stack."""
    import pulumi_aws as aws

    provider = KeyedRefusalProvider(gpt_oss_infra.COMPONENTS, gpt_oss_infra.PACKAGE)
    inputs = {"config": namespace_config(example_entries("dev"))}
    caught = {}

    def program():
        other = aws.Provider("elsewhere", region="us-west-2")
        received = wait_for(as_a_provider_receives(json.loads(json.dumps(inputs))))
        try:
            options = pulumi.ResourceOptions(providers=[other])
            provider.construct("it", f"{gpt_oss_infra.PACKAGE}:index:GptOssStack", received, options)
        except Exception as error:  # what the SDK's server gets
            caught["error"] = error

    engine.run(program)
    assert type(caught["error"]) is pulumi.RunError
    assert str(caught["error"]).startswith("GptOssStack: opts (or its parent) gives an AWS provider")


def refusal_through_the_provider(engine, component: str, inputs: dict) -> pulumi.InputPropertiesError:
    """The InputPropertiesError the component provider raises for `inputs`, as the engine sends and its host
    receives them."""
    provider = KeyedRefusalProvider(gpt_oss_infra.COMPONENTS, gpt_oss_infra.PACKAGE)
    caught = {}

    def program():
        received = wait_for(as_a_provider_receives(json.loads(json.dumps(inputs))))
        try:
            provider.construct("it", f"{gpt_oss_infra.PACKAGE}:index:{component}", received, None)
        except pulumi.InputPropertiesError as error:
            caught["error"] = error

    engine.run(program)
    return caught["error"]
