"""The public blocks (components/gpu_node_pool.py, dynamo_platform.py, model_cache.py, gpt_oss_deployment.py):
GpuNodePool, DynamoPlatform, ModelCache and GptOssDeployment
on Pulumi's mock engine: bad arguments refused by name with nothing registered, and the resources
GptOssStack makes for the same settings."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import json
import re
import types
import typing
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s
import pydantic
import pytest
import yaml
from pulumi.provider.experimental.component import ComponentProvider
from pydantic_core import PydanticUndefined

import gpt_oss_infra
from gpt_oss_infra import DynamoPlatform, GptOssDeployment, GptOssStack, GpuNodePool, ModelCache
from gpt_oss_infra.components import gpu_node_pool
from gpt_oss_infra.components.dynamo_platform import DynamoPlatformArgs
from gpt_oss_infra.components.gpt_oss_deployment import Endpoint, GptOssDeploymentArgs
from gpt_oss_infra.components.model_cache import ModelCacheArgs
from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.dynamo_graph import components_by_name
from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs import aws_values
from gpt_oss_infra.core.inputs.config import (
    DeploymentConfig,
    EndpointConfig,
    ModelCacheConfig,
    NodePoolConfig,
    PlatformConfig,
)
from gpt_oss_infra.core.render import gateway
from gpt_oss_infra.tools.plan import ROOT
from gpt_oss_infra.tools.pulumi_engine import INSTANCE_TYPE_TOKEN, SUBNETS_TOKEN, as_a_provider_receives, wait_for
from tests.components.conftest import (
    ZONES,
    assert_on_the_cluster,
    on_stand_in_cluster,
    string_data_is_secret,
    unwrap_secret,
)

# The existing-cluster example stack (configs/examples/Pulumi.existing-cluster.yaml) as block arguments.
EXISTING_CLUSTER_BLOCKS = {
    "platform": {"dynamo_release": "1.6.1", "block_storage_class": "gp3"},
    "cache": {"namespace": "gpt-oss", "storage_class_name": "shared-rwx", "size": "400Gi"},
    "deployment": {
        "recipe": "h200-agg-low-latency",
        "gpus": 4,
        "namespace": "gpt-oss",
        "node_pool": "h200",
        "node_selector": {"nvidia.com/gpu.product": "NVIDIA-H200"},
    },
}


# GPU nodes another program made, by their labels (no GpuNodePool of this program names them).
ON_H200 = {"namespace": "gpt-oss", "node_selector": {"nvidia.com/gpu.product": "NVIDIA-H200"}}
SECRET_KEY = pulumi.Output.secret("k")


REFUSED = [
    (lambda: GpuNodePool("gpu", {"cluster_name": "lab", "subnet_ids": ["a"], "hardware": "h300", "nodes": 1}),
     "GpuNodePool 'gpu'", "hardware: unknown hardware"),
    (lambda: GpuNodePool("GPU", {"cluster_name": "lab", "subnet_ids": ["a"], "hardware": "h200", "nodes": -1}),
     "GpuNodePool 'GPU'", "nodes: must be at least 0 (got -1)"),
    (lambda: DynamoPlatform("dynamo", {"dynamo_release": "9.9.9"}), "DynamoPlatform 'dynamo'", "dynamo_release: "),
    (lambda: DynamoPlatform("dynamo", {"namespace": "Dynamo_System"}), "DynamoPlatform 'dynamo'", "namespace: "),
    # Namespaces it would create where one exists already, or create twice (each failed at `up`, half-made).
    (lambda: DynamoPlatform("dynamo", {"namespace": "kube-system"}),
     "DynamoPlatform 'dynamo'",
     "namespace: kube-system exists on every cluster: choose a namespace other than default, kube-system, kube-public "
     "and kube-node-lease"),
    (lambda: DynamoPlatform("dynamo", {"namespace": "envoy-gateway-system", "gateway": True}),
     "DynamoPlatform 'dynamo'", "namespace: envoy-gateway-system is Envoy Gateway's namespace, which gateway creates"),
    (lambda: ModelCache("cache", {"namespace": "gpt-oss", "storage": "efs"}),
     "ModelCache 'cache'", "file_system_id: required with storage efs"),
    (lambda: ModelCache("cache", {"namespace": "gpt-oss"}),
     "ModelCache 'cache'", "storage_class_name: required with storage: existing"),
    # The part model checks storage before the file system's arguments are read (it was an AssertionError).
    (lambda: ModelCache("cache", {"namespace": "gpt-oss", "storage": "nfs"}),
     "ModelCache 'cache'", "storage: Input should be 'efs', 'fsx-lustre' or 'existing' (got 'nfs'; did you mean"),
    # An argument the Args type requires, missing (each was a KeyError, or for namespace a silent default).
    (lambda: GpuNodePool("gpu", {"subnet_ids": ["a"], "hardware": "h200", "nodes": 1}),
     "GpuNodePool 'gpu'", "cluster_name: required by GpuNodePool"),
    (lambda: GpuNodePool("gpu", {"cluster_name": "lab", "subnet_ids": None, "hardware": "h200", "nodes": 1}),
     "GpuNodePool 'gpu'", "subnet_ids: required by GpuNodePool"),
    (lambda: ModelCache("cache", {"storage_class_name": "efs-sc"}),
     "ModelCache 'cache'", "namespace: required by ModelCache"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", "node_selector": {"a": "b"}}),
     "GptOssDeployment 'gpt-oss'", "namespace: required by GptOssDeployment"),
    (lambda: GptOssStack("stack", {}), "GptOssStack 'stack'", "config: required by GptOssStack"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-fastest", "namespace": "gpt-oss"}),
     "GptOssDeployment 'gpt-oss'", "recipe: unknown recipe 'h200-agg-fastest'"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", "gpus": 3, **ON_H200}),
     "GptOssDeployment 'gpt-oss'", "gpus: recipe h200-agg-low-latency allows [1, 4, 8] GPUs per worker, not 3"),
    (lambda: GptOssDeployment(
        "gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, "overrides": {"no_such_field": 1}}
     ), "GptOssDeployment 'gpt-oss'", "overrides.no_such_field: not a TensorRT-LLM engine field"),
    (lambda: GptOssDeployment(
        "gpt-oss", {"recipe": "b200-disagg-4p4d", **ON_H200, "pool_nodes": 0}
     ), "GptOssDeployment 'gpt-oss'", "node_pool: pool gpt-oss (0 x p6-b200.48xlarge, 8 GPUs each, 0 in all)"),
    # A value of another type than the argument's: each was taken (a string's letters as subnets, "false" as
    # true, which made Envoy Gateway, or turned off the NLB guard) or failed with a traceback.
    (lambda: GpuNodePool("gpu", {"cluster_name": "lab", "subnet_ids": "subnet-a", "hardware": "h200", "nodes": 1}),
     "GpuNodePool 'gpu'", "subnet_ids: a list of strings (Outputs allowed), not the string 'subnet-a'"),
    (lambda: GpuNodePool("gpu", {"cluster_name": "lab", "subnet_ids": [], "hardware": "h200", "nodes": 1}),
     "GpuNodePool 'gpu'", "subnet_ids: empty: give a list of strings (Outputs allowed)"),
    (lambda: GpuNodePool("gpu", {"cluster_name": "", "subnet_ids": ["a"], "hardware": "h200", "nodes": 1}),
     "GpuNodePool 'gpu'", "cluster_name: empty: give a string (Outputs allowed)"),
    (lambda: GpuNodePool("gpu", {"cluster_name": "lab", "subnet_ids": ["a"], "nodes": 1,
                                 "hardware": pulumi.Output.from_input("h200")}),
     "GpuNodePool 'gpu'", "hardware: a string, not an Output (this argument decides what is made before anything"),
    (lambda: GpuNodePool("gpu", None),
     "GpuNodePool 'gpu'", "args: a mapping of GpuNodePoolArgs's keys (cluster_name, "),
    (lambda: DynamoPlatform("dynamo", {"gateway": "false"}),
     "DynamoPlatform 'dynamo'", "gateway: true or false, not the string 'false'"),
    (lambda: DynamoPlatform("dynamo", {"gateway": True, "load_balancer_controller": "no"}),
     "DynamoPlatform 'dynamo'", "load_balancer_controller: true or false, not the string 'no'"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, "uses_hf_token": "no"}),
     "GptOssDeployment 'gpt-oss'", "uses_hf_token: true or false, not the string 'no'"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, "endpoint": "internal"}),
     "GptOssDeployment 'gpt-oss'", "endpoint: a mapping of Endpoint's keys (exposure, hostname, "),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200,
                                          "endpoint": {"exposure": "internal", "requests_per_minute": "60"}}),
     "GptOssDeployment 'gpt-oss'", "endpoint.requests_per_minute: a whole number, not the string '60'"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss",
                                          "node_selector": {"zone": 1}}),
     "GptOssDeployment 'gpt-oss'", "node_selector.zone: a string, not the number 1"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss",
                                          "node_selector": {"gpu type": "h200"}}),
     "GptOssDeployment 'gpt-oss'", "node_selector.gpu type: 'gpu type' is not a label key"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, "api_clients": "team-a",
                                          "endpoint": {"exposure": "internal"},
                                          "api_keys": pulumi.Output.secret({"team-a": "k"})}),
     "GptOssDeployment 'gpt-oss'", "api_clients: a list of strings, not the string 'team-a'"),
    (lambda: GptOssStack("stack", {"config": pulumi.Output.from_input({})}),
     "GptOssStack 'stack'", "config: a mapping of strings to values, not an Output"),
    # Arguments for another storage, or without an endpoint, were ignored; an id that is none reached the
    # StorageClass.
    (lambda: ModelCache("cache", {"namespace": "gpt-oss", "storage": "efs", "file_system_id": "not-an-fs"}),
     "ModelCache 'cache'", "file_system_id: 'not-an-fs' is not a file system id (fs-[0-9a-f]{8,40})"),
    (lambda: ModelCache("cache", {"namespace": "gpt-oss", "storage_class_name": "rwx",
                                  "file_system_id": "fs-0a1b2c3d"}),
     "ModelCache 'cache'", "file_system_id: only with storage efs or fsx-lustre (storage is existing): leave it out"),
    (lambda: ModelCache("cache", {"namespace": "gpt-oss", "storage": "efs", "file_system_id": "fs-0a1b2c3d",
                                  "fsx_mount_name": "abcdefgh"}),
     "ModelCache 'cache'", "fsx_mount_name: only with storage fsx-lustre (storage is efs): leave it out"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, "api_keys": {"ci": SECRET_KEY}}),
     "GptOssDeployment 'gpt-oss'", "api_keys: only with an endpoint (exposure internal or public)"),
]  # fmt: skip


@pytest.mark.parametrize(("build", "block", "expected"), REFUSED)
def test_a_block_refuses_bad_arguments_by_name_before_registering_anything(engine, build, block, expected):
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(lambda: build() and None)
    message = str(refused.value)
    assert message.startswith(f"invalid arguments of {block}:\n"), message
    assert expected in message, message
    assert engine.mocks.resources == []  # not the block, nor any of its resources


def test_gpu_node_pool_makes_the_node_group_of_its_hardware_as_the_stack_does(engine):
    # subnet-c is in a zone where EC2 does not offer the instance type (tests/components/conftest.ZONES)
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a", "subnet-b": "us-east-2b", "subnet-c": "us-east-2z"}

    def program():
        pool = GpuNodePool(
            "h200",
            {
                "cluster_name": "lab",
                "subnet_ids": ["subnet-a", "subnet-c", "subnet-b"],
                "hardware": "h200",
                "nodes": 2.0,
            },
        )
        return {"labels": pool.node_labels}

    outputs = engine.run(program)
    labels = {"gpt-oss-infra/hardware": "h200", "gpt-oss-infra/pool": "h200", "nvidia.com/gpu.present": "true"}
    assert outputs == {"labels": labels}
    group = engine.inputs("h200-nodes")
    assert group["instanceTypes"] == ["p5en.48xlarge"]  # the hardware's first instance type
    assert (group["amiType"], group["capacityType"], group["clusterName"]) == (
        "AL2023_x86_64_NVIDIA",
        "ON_DEMAND",
        "lab",
    )
    assert group["labels"] == labels
    assert group["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert group["scalingConfig"] == {"desiredSize": 2, "minSize": 2, "maxSize": 2}  # 2.0 from another language
    assert group["subnetIds"] == ["subnet-a", "subnet-b"]  # those in the zones EC2 offers p5en.48xlarge in
    [subnets] = engine.invoked(SUBNETS_TOKEN)
    assert subnets["filters"][1] == {"name": "availability-zone", "values": ZONES}
    template = engine.inputs("h200-nodes-template")
    assert template["metadataOptions"]["httpTokens"] == "required"
    assert template["blockDeviceMappings"][0]["ebs"] | {} == {
        "volumeSize": 500, "volumeType": "gp3", "encrypted": "true", "deleteOnTermination": "true"
    }  # fmt: skip
    # EC2 was asked about the instance type before anything was made (its EFA interfaces, its offering).
    assert [call["instanceType"] for call in engine.invoked(INSTANCE_TYPE_TOKEN)] == ["p5en.48xlarge"]
    assert engine.children("h200") == [
        "h200-node-role",
        "h200-node-role-AmazonEKSWorkerNodePolicy",
        "h200-node-role-AmazonEC2ContainerRegistryReadOnly",
        "h200-node-role-AmazonEKS_CNI_Policy",  # the VPC CNI may run as the node on a cluster of the program's
        "h200-nodes-template",
        "h200-nodes",
    ]
    # The role's policies are detached only once the group is gone (its instances and their interfaces).
    assert set(engine.children("h200")[1:4]) <= set(engine.waits_for("h200-nodes"))


def test_subnets_in_no_zone_the_instance_type_is_offered_in_fail_the_up_naming_them(engine):
    engine.mocks.subnet_zones = {"subnet-z": "us-east-2z"}
    with pytest.raises(Exception, match=r"none of the subnets subnet-z is in a zone where the pool can run p5en"):
        engine.run(lambda: GpuNodePool("h200", {"cluster_name": "lab", "subnet_ids": ["subnet-z"], "hardware": "h200",
                                                "nodes": 1}) and None)  # fmt: skip


def test_a_pool_joins_with_the_programs_node_role_where_given(engine):
    engine.run(
        lambda: GpuNodePool(
            "h200",
            {"cluster_name": "lab", "subnet_ids": ["subnet-a"], "hardware": "h200", "nodes": 1,
             "node_role_arn": "arn:aws:iam::123456789012:role/nodes"},
        ) and None
    )  # fmt: skip
    assert engine.inputs("h200-nodes")["nodeRoleArn"] == "arn:aws:iam::123456789012:role/nodes"
    assert not engine.names_of("aws:iam/role:Role")


def test_an_efa_pool_gets_its_security_group_and_one_placement_group_in_the_first_subnet(engine):
    def program():
        GpuNodePool(
            "b200",
            {
                "cluster_name": "lab",
                "subnet_ids": ["subnet-a", "subnet-b"],
                "hardware": "b200",
                "nodes": 2,
                "efa": True,
            },
        )

    engine.run(program)
    assert engine.inputs("b200-nodes")["subnetIds"] == ["subnet-a"]
    assert engine.inputs("b200-nodes-placement")["strategy"] == "cluster"
    interfaces = engine.inputs("b200-nodes-template")["networkInterfaces"]
    assert interfaces and all(i["securityGroups"] == ["lab-sg-id", "b200-efa-id"] for i in interfaces)


def test_platform_cache_and_deployment_render_what_the_stack_renders_for_the_same_settings(engine, example_stack):
    stack = example_stack("existing-cluster", with_secrets=False)

    def program():
        cluster = on_stand_in_cluster()
        platform = DynamoPlatform("dynamo", EXISTING_CLUSTER_BLOCKS["platform"], opts=cluster)
        cache = ModelCache("cache", EXISTING_CLUSTER_BLOCKS["cache"], opts=cluster)
        deployment = GptOssDeployment(
            "gpt-oss",
            EXISTING_CLUSTER_BLOCKS["deployment"],
            opts=pulumi.ResourceOptions.merge(cluster, pulumi.ResourceOptions(depends_on=[platform, cache])),
        )
        return {
            "version": platform.version,
            "namespace": platform.namespace,
            "claim": cache.claim_name,
            "endpoint": deployment.endpoint,
            "check": deployment.serving_check,
        }

    outputs = engine.run(program)
    assert outputs["version"] == "1.6.1" and outputs["namespace"] == "dynamo-system"
    assert outputs["claim"] == stack.model_cache.pvc["metadata"]["name"]
    assert outputs["endpoint"] == "http://gpt-oss-frontend.gpt-oss.svc.cluster.local:8000"
    assert outputs["check"].startswith("answered a chat completion through gpt-oss-frontend (Job ")
    assert engine.inputs("dynamo-release")["values"] == stack.platform.values
    assert engine.inputs("dynamo-namespace")["metadata"]["name"] == "dynamo-system"
    assert engine.inputs("cache-pvc") == stack.model_cache.pvc
    assert engine.inputs("gpt-oss-graph") == stack.serving[0].graph
    assert engine.inputs("gpt-oss-engine-config") == stack.serving[0].engine_config
    for block, token in [
        ("dynamo", "gpt-oss-infra:index:DynamoPlatform"),
        ("cache", "gpt-oss-infra:index:ModelCache"),
        ("gpt-oss", "gpt-oss-infra:index:GptOssDeployment"),
    ]:
        assert_on_the_cluster(engine, block, token)
    assert {"dynamo", "cache"} <= set(engine.waits_for("gpt-oss-graph"))


def test_a_recipe_given_as_an_object_is_checked_and_served_like_a_named_one(engine, catalog):
    recipe = catalog.recipes["h200-agg-low-latency"].model_dump(by_alias=True, exclude_defaults=True)

    def program():
        GptOssDeployment("own", {"recipe_definition": recipe, "gpus": 4, **ON_H200}, opts=on_stand_in_cluster())

    engine.run(program)
    assert engine.inputs("own-graph")["kind"] == "DynamoGraphDeployment"
    broken = recipe | {"hardware": "h999"}
    with pytest.raises(pulumi.RunError, match=r"recipe_definition\.hardware: unknown hardware"):
        engine.run(lambda: GptOssDeployment("own", {"recipe_definition": broken, **ON_H200}) and None)


def test_the_hf_token_and_ngc_key_stay_secret(engine):
    def program():
        cluster = on_stand_in_cluster()
        DynamoPlatform("dynamo", {"ngc_api_key": pulumi.Output.secret("nvapi-plain-in-a-program")}, opts=cluster)
        ModelCache(
            "cache",
            {
                "namespace": "gpt-oss",
                "storage_class_name": "shared-rwx",
                "hf_token": pulumi.Output.secret("hf_plain_in_a_program"),
            },
            opts=cluster,
        )
        return {
            "ngc": string_data_is_secret(engine, "dynamo-ngc-pull"),
            "hf": string_data_is_secret(engine, "cache-hf-token"),
        }

    assert engine.run(program) == {"ngc": True, "hf": True}
    assert not [s for s in engine.plain_strings() if "plain-in-a-program" in s or "plain_in_a_program" in s]


def test_an_endpoint_gets_the_platforms_gateway_api_keys_and_policies_and_its_smoke_test_goes_through_it(engine):
    def program():
        cluster = on_stand_in_cluster()
        platform = DynamoPlatform("dynamo", {"gateway": True}, opts=cluster)
        deployment = GptOssDeployment(
            "gpt-oss",
            {
                "recipe": "h200-agg-low-latency",
                "gpus": 4,
                **ON_H200,
                "endpoint": {"exposure": "internal", "requests_per_minute": 30.0},
                "api_keys": {"team-a": pulumi.Output.secret("key-plain-in-a-program")},
            },
            opts=pulumi.ResourceOptions.merge(cluster, pulumi.ResourceOptions(depends_on=[platform])),
        )
        return {"url": deployment.url, "keys": string_data_is_secret(engine, "gpt-oss-gateway-api-keys")}

    outputs = engine.run(program)
    # Without the AWS Load Balancer Controller, an internal gateway is Envoy's in-cluster Service.
    assert outputs == {"url": "http://envoy-gpt-oss-gpt-oss.envoy-gateway-system.svc.cluster.local:80", "keys": True}
    assert engine.children("dynamo-gateway") == ["dynamo-gateway-namespace", "dynamo-gateway-release",
                                                 "dynamo-gateway-class"]  # fmt: skip
    assert engine.inputs("dynamo-gateway-class")["spec"]["controllerName"] == gateway.GATEWAY_CONTROLLER
    traffic = engine.inputs("gpt-oss-gateway-backendtrafficpolicy")["spec"]["rateLimit"]["local"]["rules"]
    assert traffic[-1]["limit"] == {"requests": 30, "unit": "Minute"}
    assert set(unwrap_secret(engine.inputs("gpt-oss-gateway-api-keys")["stringData"])) == {"team-a"}
    # The frontend admits the gateway's namespace and the Jobs only; the workers their own graph.
    frontend = engine.inputs("gpt-oss-frontend-ingress")
    assert frontend["metadata"]["name"] == "gpt-oss-frontend-ingress"
    assert {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "envoy-gateway-system"}}} in (
        frontend["spec"]["ingress"][0]["from"]
    )
    assert engine.inputs("gpt-oss-workers-ingress")["spec"]["policyTypes"] == ["Ingress"]
    assert "gpt-oss-gateway-gateway" in engine.waits_for("gpt-oss-smoke-test")
    assert not [s for s in engine.plain_strings() if "key-plain-in-a-program" in s]


ENDPOINT_REFUSED = [
    ({"endpoint": {"exposure": "internal"}}, "api_keys: required: deployments gpt-oss have a gateway"),
    ({"endpoint": {"exposure": "everywhere"}, "api_keys": {"a": SECRET_KEY}}, "endpoint.exposure: Input should be"),
    ({"endpoint": {"exposure": "public"}, "api_keys": {"a": SECRET_KEY}}, "endpoint.certificate_arn: "),
    ({"endpoint": {"exposure": "internal", "client_requests_per_minute": {"b": 5}}, "api_keys": {"a": SECRET_KEY}},
     "endpoint.client_requests_per_minute.b: no such client in api_keys"),
]  # fmt: skip


@pytest.mark.parametrize(("endpoint", "expected"), ENDPOINT_REFUSED)
def test_a_bad_endpoint_is_refused_by_its_argument_names(engine, endpoint, expected):
    args = {"recipe": "h200-agg-low-latency", "gpus": 4, **ON_H200, **endpoint}
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(lambda: GptOssDeployment("gpt-oss", args) and None)
    assert expected in str(refused.value), str(refused.value)
    assert engine.mocks.resources == []


def test_another_languages_program_reaches_a_block_through_the_sdks_component_provider(engine):
    """What `pulumi package add` serves: the inputs serialized as the engine sends them and deserialized
    by the SDK's provider host (the API-key map, with a secret in it, arrives as one secret Output;
    numbers as floats, in the recipe's engine overrides too), then the SDK's own ComponentProvider maps
    the schema's camelCase names onto the Args and constructs the block."""
    provider = ComponentProvider(gpt_oss_infra.COMPONENTS, gpt_oss_infra.PACKAGE)

    def program():
        inputs = wait_for(
            as_a_provider_receives(
                {
                    "recipe": "h200-agg-low-latency",
                    "gpus": 4,
                    "namespace": "gpt-oss",
                    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200"},
                    "overrides": {"cuda_graph_config": {"max_batch_size": 16}},
                    "endpoint": {"exposure": "internal", "requestsPerMinute": 30, "clientRequestsPerMinute": {"ci": 5}},
                    "apiKeys": {"ci": pulumi.Output.secret("key-from-another-language")},
                    "apiClients": ["ci"],
                }
            )
        )
        assert isinstance(inputs["apiKeys"], pulumi.Output) and inputs["gpus"] == 4.0
        provider.construct("gpt-oss", "gpt-oss-infra:index:GptOssDeployment", inputs, on_stand_in_cluster())
        return {"keys": string_data_is_secret(engine, "gpt-oss-gateway-api-keys")}

    assert engine.run(program) == {"keys": True}
    assert components_by_name(engine.inputs("gpt-oss-graph"))["TrtllmWorker"].gpus == 4
    engine_config = yaml.safe_load(engine.inputs("gpt-oss-engine-config")["data"]["worker.yaml"])
    assert engine_config["cuda_graph_config"]["max_batch_size"] == 16
    rules = engine.inputs("gpt-oss-gateway-backendtrafficpolicy")["spec"]["rateLimit"]["local"]["rules"]
    assert [rule["limit"] for rule in rules] == [{"requests": 5, "unit": "Minute"}, {"requests": 30, "unit": "Minute"}]
    assert engine.parent_type("gpt-oss-graph") == "gpt-oss-infra:index:GptOssDeployment"
    assert not [s for s in engine.plain_strings() if "key-from-another-language" in s]


def test_api_keys_that_arrive_as_an_output_need_their_client_names(engine):
    def program():
        inputs = wait_for(as_a_provider_receives({"apiKeys": {"ci": pulumi.Output.secret("k")}}))
        GptOssDeployment(
            "gpt-oss",
            {"recipe": "h200-agg-low-latency", "gpus": 4, **ON_H200, "endpoint": {"exposure": "internal"},
             "api_keys": inputs["apiKeys"]},
        )  # fmt: skip

    with pytest.raises(pulumi.RunError, match=r"api_clients: required: api_keys is an output"):
        engine.run(program)
    assert engine.mocks.resources == []


# What the Python API refuses that it used to take (issue 32): each refused by argument name, before
# anything is registered.
API_REFUSED = [
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200, "node_pol": "gpu"}),
     "node_pol: not an argument of GptOssDeployment: did you mean 'node_pool'?"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200,
                                          "endpoint": {"exposure": "internal", "allowed_cidr": ["10.0.0.0/16"]}}),
     "endpoint.allowed_cidr: not an argument of GptOssDeployment: did you mean 'allowed_cidrs'?"),
    (lambda: GpuNodePool("gpu", {"cluster_name": "lab", "subnet_ids": ["a"], "hardware": "h200", "node": 1}),
     "node: not an argument of GpuNodePool: did you mean 'nodes'?"),
    # An environment variable's spelling: the same name but for case and '_', as the stack file's keys are matched.
    (lambda: ModelCache("cache", {"namespace": "gpt-oss", "storage_class_name": "rwx", "HF_TOKEN": "hf_plain"}),
     "HF_TOKEN: not an argument of ModelCache: did you mean 'hf_token'?"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss",
                                          "node_pool": "gpu"}),
     "node_pool: 'gpu' names no GpuNodePool of this program (it made none); make the GpuNodePool first, or give "
     "node_selector"),
    (lambda: ModelCache("cache", {"namespace": "gpt-oss", "storage_class_name": "rwx", "hf_token": "hf_plain"}),
     "hf_token: a plain string: pass a secret"),
    (lambda: DynamoPlatform("dynamo", {"ngc_api_key": "nvapi-plain"}), "ngc_api_key: a plain string: pass a secret"),
    (lambda: GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200,
                                          "endpoint": {"exposure": "internal"}, "api_keys": {"ci": "sk-plain"}}),
     "api_keys: a plain string (the value of 'ci'): pass a secret"),
]  # fmt: skip


@pytest.mark.parametrize(("build", "expected"), API_REFUSED)
def test_the_python_api_refuses_what_a_stack_file_would(engine, build, expected):
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(lambda: build() and None)
    assert expected in str(refused.value), str(refused.value)
    assert engine.mocks.resources == []


POOL_ARGS = {"cluster_name": "lab", "subnet_ids": ["subnet-a"], "nodes": 2}


def test_a_deployment_names_a_gpu_node_pool_the_program_made_and_selects_its_nodes(engine):
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}

    def program():
        GpuNodePool("h200", POOL_ARGS | {"hardware": "h200"})
        GptOssDeployment(
            "gpt-oss", {"recipe": "h200-agg-low-latency", "gpus": 4, "namespace": "gpt-oss", "node_pool": "h200"}
        )

    engine.run(program)
    worker = components_by_name(engine.inputs("gpt-oss-graph"))["TrtllmWorker"]
    assert worker.pod["nodeSelector"] == {"gpt-oss-infra/pool": "h200"}  # the label the pool's nodes carry


@pytest.mark.parametrize("efa", [False, True])
def test_a_deployment_asks_for_efa_only_where_its_gpu_node_pool_has_it(engine, efa):
    """b200-disagg-4p4d's KV cache crosses the nodes of a 2-node pool. The pool decides its EFA alone (it sees
    no deployment): the workers ask for EFA interfaces only where the pool's nodes have them, else a pod that
    asks for devices no node has stays Pending."""
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}

    def program():
        GpuNodePool("b200", POOL_ARGS | {"hardware": "b200", "efa": efa})
        GptOssDeployment("gpt-oss", {"recipe": "b200-disagg-4p4d", "namespace": "gpt-oss", "node_pool": "b200"})

    engine.run(program)
    assert bool(engine.inputs("b200-nodes-template").get("networkInterfaces")) is efa
    workers = [c for c in components_by_name(engine.inputs("gpt-oss-graph")).values() if c.type != "frontend"]
    assert len(workers) == 2
    for worker in workers:
        assert ("vpc.amazonaws.com/efa" in worker.devices) is efa, worker.name


@pytest.mark.parametrize(
    ("node_pool", "expected"),
    [
        ("b20", "node_pool: 'b20' names no GpuNodePool of this program: did you mean 'b200'?"),
        ("b200", "recipe: the recipe is for h200, but GpuNodePool 'b200' has b200 nodes"),
    ],
)
def test_a_node_pool_that_matches_nothing_or_other_hardware_is_refused(engine, node_pool, expected):
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}

    def program():
        GpuNodePool("b200", POOL_ARGS | {"hardware": "b200"})
        GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", "namespace": "gpt-oss", "node_pool": node_pool})

    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert expected in str(refused.value)
    assert "gpt-oss-infra:index:GptOssDeployment" not in [r.typ for r in engine.mocks.resources]


def test_an_efs_model_cache_guards_its_access_point_and_the_platform_only_its_own_volumes(engine):
    """On destroy, the EFS CSI driver deletes the claim's access point: the cache's own guard holds until
    it has (the claim is deleted first: it waits for the guard). The platform guards its namespace only."""

    def program():
        cluster = on_stand_in_cluster()
        DynamoPlatform("dynamo", {}, opts=cluster)
        ModelCache(
            "cache", {"namespace": "team-a", "storage": "efs", "file_system_id": "fs-0123456789abcdef0"}, opts=cluster
        )
        ModelCache("shared", {"namespace": "team-b", "storage_class_name": "shared-rwx"}, opts=cluster)

    engine.run(program)
    guard = engine.inputs("cache-teardown-volumes-gone")
    assert guard["metadata"]["namespace"] == "team-a-teardown"
    env = {
        variable["name"]: variable["value"] for variable in guard["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["CLAIM_NAMESPACES"] == "team-a"
    assert engine.inputs("cache-storage-class")["reclaimPolicy"] == "Delete"
    assert "cache-teardown-volumes-gone" in engine.waits_for("cache-pvc")
    # A cluster's own StorageClass: its volumes are not this program's to wait for.
    assert not [name for name in engine.urns if name.startswith("shared-teardown")]
    platform_guard = engine.inputs("dynamo-teardown-volumes-gone")
    env = {v["name"]: v["value"] for v in platform_guard["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["CLAIM_NAMESPACES"] == "dynamo-system"


def test_blocks_under_parents_with_two_clusters_providers_are_taken(engine):
    """A provider a parent passes down is the block's cluster, as the SDK finds it (Resource._get_providers): two
    platforms under two clusters' parents were refused as made twice, and a deployment on one cluster was
    refused for the other cluster's platform without a gateway."""

    def program():
        east, west = (
            pulumi.ComponentResource(
                "test:index:Cluster",
                name,
                opts=pulumi.ResourceOptions(providers=[k8s.Provider(f"{name}-k8s", kubeconfig="{}")]),
            )
            for name in ("east", "west")
        )
        DynamoPlatform("east-dynamo", {}, pulumi.ResourceOptions(parent=east))
        DynamoPlatform("west-dynamo", {"gateway": True}, pulumi.ResourceOptions(parent=west))
        args = {"recipe": "h200-agg-low-latency", **ON_H200, "endpoint": {"exposure": "internal"}}
        GptOssDeployment("gpt-oss", args | {"api_keys": {"a": SECRET_KEY}}, pulumi.ResourceOptions(parent=west))

    engine.run(program)
    assert engine.names_of("gpt-oss-infra:index:DynamoPlatform") == ["east-dynamo", "west-dynamo"]
    assert engine.names_of("gpt-oss-infra:index:GptOssDeployment") == ["gpt-oss"]


def test_another_languages_blocks_keep_the_nlb_guard_check_across_constructs(engine):
    """The component provider gets the program's provider as a reference at each construct, and the SDK makes a
    new provider object of it each time (construct_provider, by URN): blocks there share no provider object, so
    the checks made this round (by provider object) do not compare them, while the NLB guard's, program-wide as
    before, still holds. Told apart by provider name instead, two clusters' providers of one name under
    different parents were one cluster (a reviewer's), and valid programs were refused."""

    def rehydrated(urn):
        return pulumi.ResourceOptions(providers=[k8s.Provider("cluster", pulumi.ResourceOptions(urn=urn))])

    def constructs(urn):
        DynamoPlatform("dynamo", {"gateway": True, "load_balancer_controller": False}, rehydrated(urn))
        args = {"recipe": "h200-agg-low-latency", **ON_H200, "endpoint": {"exposure": "internal"}}
        args |= {"api_keys": {"a": SECRET_KEY}, "load_balancer_controller": True}
        GptOssDeployment("gpt-oss", args, rehydrated(urn))

    def program():
        registered = k8s.Provider("cluster", kubeconfig="{}")  # the other language's program's
        return {"constructed": registered.urn.apply(constructs)}  # each construct gets it by its URN

    with pytest.raises(pulumi.RunError, match="load_balancer_controller: true here, but DynamoPlatform 'dynamo'"):
        engine.run(program)


@pytest.mark.parametrize(
    ("deployment", "reported", "left_out"),
    [
        # Its own check, and the platform's release, which it must also be.
        ({"dynamo_release": "9.9.9"},
         ["dynamo_release: Dynamo 9.9.9 is not supported", "installs another ('dynamo' 1.6.1)"], None),
        # Its own problems, and what it must share with its namespace's cache.
        ({"gpus": 3}, ["gpus: recipe h200-agg-low-latency allows [1, 4, 8] GPUs per worker, not 3", "model_revision: "],
         None),
    ],
)  # fmt: skip
def test_a_deployments_own_problems_come_with_those_beside_its_blocks(engine, deployment, reported, left_out):
    """The checks against the program's blocks ran first and alone: the deployment's own problems were not
    reported at all (an unknown release only as another release than the platform's)."""

    def program():
        DynamoPlatform("dynamo", {})
        ModelCache("cache", CACHE | {"model_revision": "0" * 40})
        GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200} | deployment)

    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert all(problem in str(refused.value) for problem in reported), str(refused.value)
    assert left_out is None or left_out not in str(refused.value)


def test_an_empty_value_inside_a_mapping_argument_is_taken(engine, catalog):
    """A label's value may be empty, and so may a recipe's decisions; only an argument itself may not."""
    recipe = catalog.recipes["h200-agg-low-latency"].model_dump(mode="json", by_alias=True, exclude_none=True)
    node_selector = {"nvidia.com/gpu.product": "NVIDIA-H200", "node-role.kubernetes.io/gpu": ""}
    args = {"namespace": "gpt-oss", "node_selector": node_selector, "recipe_definition": recipe | {"decisions": []}}
    engine.run(lambda: GptOssDeployment("gpt-oss", args) and None)
    graph = engine.inputs("gpt-oss-graph")
    assert "node-role.kubernetes.io/gpu" in json.dumps(graph)


BESIDE = [
    (lambda: DynamoPlatform("dynamo", {"dynamo_release": "1.2.1", "block_storage_class": "gp3"}), {},
     "dynamo_release: 1.6.1, but the program's DynamoPlatform installs another ('dynamo' 1.2.1)"),
    (lambda: ModelCache("cache", CACHE | {"model_revision": "0" * 40}), {},
     f"model_revision: {blocks.DEFAULTS['modelRevision']}, which no ModelCache in gpt-oss downloads "
     f"('cache' {'0' * 40})"),
    (lambda: ModelCache("cache", CACHE), {"uses_hf_token": True},
     "uses_hf_token: true, but ModelCache 'cache' in gpt-oss was given no hf_token: the Secret its workers would "
     "read does not exist"),
]  # fmt: skip


@pytest.mark.parametrize(("made_before", "given", "expected"), BESIDE)
def test_a_deployment_unlike_the_programs_platform_or_cache_is_refused(engine, made_before, given, expected):
    """Each was accepted: a graph of another release than the platform's operator, workers loading a snapshot
    their namespace's cache never downloaded, or reading a token Secret it never made (pods that never start)."""

    def program():
        made_before()
        GptOssDeployment("gpt-oss", {"recipe": "h200-agg-low-latency", **ON_H200} | given)

    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert f"invalid arguments of GptOssDeployment 'gpt-oss':\n{expected}" in str(refused.value)
    assert not [name for name in engine.built if name.startswith("gpt-oss")]


def test_the_file_system_ids_taken_are_botocores_file_system_id_shapes():
    """blocks.FILE_SYSTEM_ID: the id form of each service's FileSystemId pattern in botocore's model."""
    for storage, service in (("efs", "efs"), ("fsx-lustre", "fsx")):
        pattern = aws_values.service_model(service).shape_for("FileSystemId").metadata["pattern"]
        assert blocks.FILE_SYSTEM_ID[storage] in pattern, (storage, pattern)


def test_an_endpoint_needs_a_platform_of_the_program_with_a_gateway(engine):
    """With a DynamoPlatform of this program and none that installs Envoy Gateway, the endpoint's Gateway would
    name a GatewayClass nothing makes: it was accepted and never became Ready."""
    args = {
        "recipe": "h200-agg-low-latency",
        **ON_H200,
        "endpoint": {"exposure": "internal"},
        "api_keys": {"a": SECRET_KEY},
    }

    def program():
        DynamoPlatform("dynamo", {})
        GptOssDeployment("gpt-oss", args)

    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert (
        "endpoint: needs Envoy Gateway, which no DynamoPlatform of this program installs ('dynamo'): give one "
        "gateway=True" in str(refused.value)
    )
    assert not [name for name in engine.built if name.startswith("gpt-oss")]


@pytest.mark.parametrize("platform_waits", [False, True])
def test_an_nlb_endpoint_needs_a_platform_whose_guard_waits_for_nlbs(engine, platform_waits):
    """The endpoint's NLB is the deployment's, its destroy wait the platform's guard: a platform made
    without load_balancer_controller would not wait, and destroy would leave the NLB behind."""
    args = {
        "recipe": "h200-agg-low-latency",
        "gpus": 4,
        **ON_H200,
        "endpoint": {"exposure": "internal", "allowed_cidrs": ["10.0.0.0/16"]},
        "api_keys": {"a": SECRET_KEY},
        "load_balancer_controller": True,
    }

    def program():
        cluster = on_stand_in_cluster()
        platform = DynamoPlatform("dynamo", {"gateway": True, "load_balancer_controller": platform_waits}, opts=cluster)
        GptOssDeployment(
            "gpt-oss", args, opts=pulumi.ResourceOptions.merge(cluster, pulumi.ResourceOptions(depends_on=[platform]))
        )

    if platform_waits:
        engine.run(program)
        guard = engine.inputs("dynamo-gateway-load-balancers-gone")
        assert {"name": "LOAD_BALANCER_NAMESPACES", "value": "envoy-gateway-system"} in (
            guard["spec"]["template"]["spec"]["containers"][0]["env"]
        )
        return
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert "load_balancer_controller: true here, but DynamoPlatform 'dynamo' (the gateway) was made without it" in (
        str(refused.value)
    )
    assert not [name for name in engine.urns if name.startswith("gpt-oss")]  # nothing of the deployment


CACHE = {"namespace": "gpt-oss", "storage_class_name": "shared-rwx"}
EFS_CACHE = {"storage": "efs", "file_system_id": "fs-0123456789abcdef0"}
# Two blocks of one program (the second made through `opts`), and the refusal of the second.
MADE_TWICE = [
    ("DynamoPlatform", lambda: DynamoPlatform("first", {}), lambda opts: DynamoPlatform("second", {}, opts),
     "namespace: DynamoPlatform 'first' of this program makes Namespace dynamo-system too, through the same "
     "Kubernetes provider: the second would fail to create after the first was made; give this block a namespace "
     "of its own"),
    ("DynamoPlatform", lambda: DynamoPlatform("first", {"gateway": True}),
     lambda opts: DynamoPlatform("second", {"namespace": "dynamo-two", "gateway": True}, opts),
     "gateway: DynamoPlatform 'first' of this program makes Namespace envoy-gateway-system too, through the same "
     "Kubernetes provider: the second would fail to create after the first was made; Envoy Gateway is installed "
     "once per cluster, by one DynamoPlatform: leave gateway off here"),
    ("ModelCache", lambda: ModelCache("first", CACHE), lambda opts: ModelCache("second", CACHE, opts),
     "namespace: ModelCache 'first' of this program makes PersistentVolumeClaim gpt-oss/model-cache too"),
    ("ModelCache", lambda: ModelCache("first", {"namespace": "team-a", **EFS_CACHE}),
     lambda opts: ModelCache("second", {"namespace": "team-b", **EFS_CACHE}, opts),
     "storage_class_name: ModelCache 'first' of this program makes StorageClass gpt-oss-efs too"),
]  # fmt: skip


@pytest.mark.parametrize(("block", "first", "second", "expected"), MADE_TWICE)
def test_a_block_that_would_make_another_blocks_kubernetes_object_again_is_refused(
    engine, block, first, second, expected
):
    """Each was accepted: `up` made the first block's objects, then failed to create the second's (AlreadyExists),
    half-made. Through another Kubernetes provider (another cluster), the same two blocks are taken."""

    def both():
        first()
        second(None)

    with pytest.raises(pulumi.RunError) as refused:
        engine.run(both)
    assert str(refused.value).startswith(f"invalid arguments of {block} 'second':\n{expected}"), str(refused.value)
    assert not [name for name in engine.built if name.startswith("second")]  # nothing of the second block


@pytest.mark.parametrize(("block", "first", "second", "expected"), MADE_TWICE)
def test_the_same_blocks_on_two_clusters_are_taken(engine, block, first, second, expected):
    def on_two_clusters():
        first()
        second(pulumi.ResourceOptions(providers=[k8s.Provider("another-cluster", kubeconfig="{}")]))

    engine.run(lambda: on_two_clusters() and None)
    assert engine.names_of(f"gpt-oss-infra:index:{block}") == ["first", "second"]


def test_a_pool_request_aws_would_refuse_is_refused_before_anything_is_registered(engine, monkeypatch):
    """GpuNodePool checks its own AWS requests (core/checks/aws_contract.py) before registering anything:
    shown on a node group description broken on purpose (an AMI type EKS does not list), since no argument
    that passes the block's own checks reaches AWS unchecked today."""
    described = gpu_node_pool.gpu_node_pool

    def broken(*args, **kwargs):
        resources = described(*args, **kwargs)
        return [
            dataclasses.replace(r, inputs=r.inputs | {"ami_type": "AL2023_BOGUS"}) if r.name == "h200-nodes" else r
            for r in resources
        ]

    monkeypatch.setattr(gpu_node_pool, "gpu_node_pool", broken)
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(lambda: GpuNodePool("h200", POOL_ARGS | {"hardware": "h200"}))
    message = str(refused.value)
    assert (
        "h200-nodes: AWS would refuse it: h200-nodes: amiType -> eks:CreateNodegroup amiType = 'AL2023_BOGUS'"
        in message
    )
    assert engine.mocks.resources == []


# Each block's arguments: the fields of its stack config part it offers, named as the config model names
# them (core/inputs/config.py; core/blocks.py checks each argument as its model's field and says which fields
# a block does not offer, NOT_OFFERED), and its own.
BLOCK_PARTS = [
    (
        gpu_node_pool.GpuNodePoolArgs,
        NodePoolConfig,
        {"cluster_name", "subnet_ids", "node_role_arn", "environment", "region"},
    ),
    (
        DynamoPlatformArgs,
        PlatformConfig,
        {
            "dynamo_release",
            "block_storage_class",
            "kubernetes_version",
            "ngc_api_key",
            "gateway",
            "load_balancer_controller",
        },
    ),
    (
        ModelCacheArgs,
        ModelCacheConfig,
        {
            "namespace",
            "file_system_id",
            "fsx_dns_name",
            "fsx_mount_name",
            "hf_token",
            "dynamo_release",
            "model_revision",
            "kubernetes_version",
        },
    ),
    (
        GptOssDeploymentArgs,
        DeploymentConfig,
        {
            "namespace",
            "recipe_definition",
            "node_selector",
            "pool_nodes",
            "uses_hf_token",
            "dynamo_release",
            "runtime_image",
            "model_revision",
            "kubernetes_version",
            "api_keys",
            "api_clients",
            "load_balancer_controller",
            "network_policies",
        },
    ),
    (Endpoint, EndpointConfig, {"requests_per_minute", "client_requests_per_minute"}),
]


@pytest.mark.parametrize(("args", "part", "own"), BLOCK_PARTS, ids=lambda v: getattr(v, "__name__", ""))
def test_a_blocks_arguments_are_its_config_parts_fields_and_its_own(args, part, own):
    """A field added to a stack config part fails this until its block offers it (named as the field) or
    says why not: a key is defined once, in the config model, for the stack file and the block."""
    not_offered = blocks.NOT_OFFERED[part]
    assert set(args.__annotations__) == (set(part.model_fields) - not_offered) | own
    assert not_offered <= set(part.model_fields) and not own & set(part.model_fields)
    # A refusal of a field of the part, named as the field (blocks.as_arguments), names an argument the block has.
    offered = set(part.model_fields) - not_offered
    problems = [Problem(f"part.{field.alias or name}", "x") for name, field in part.model_fields.items()]
    named = {problem.key for problem in blocks.as_arguments(problems, "part", part)}
    assert offered <= named <= set(part.model_fields)


def test_a_config_field_no_block_offers_is_caught():
    with_a_new_field = pydantic.create_model("WithANewField", __base__=NodePoolConfig, spot_handling=(bool, False))
    arguments, part, own = BLOCK_PARTS[0]
    not_offered = blocks.NOT_OFFERED[part]
    assert set(arguments.__annotations__) != (set(with_a_new_field.model_fields) - not_offered) | own


def value_kind(annotation: Any, typed_parts: dict[Any, str]) -> str:
    """What values an annotation takes, as a block's argument and its config field must agree on: without
    None, NotRequired and the validators of Annotated; a Literal as the type of its values (the model
    checks which); a block's TypedDict as the config part it stands for (typed_parts)."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.NotRequired, typing.Required, typing.Annotated):
        return value_kind(arguments[0], typed_parts)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(sorted({value_kind(a, typed_parts) for a in arguments if a is not type(None)}))
    if origin is typing.Literal:
        return " | ".join(sorted({type(value).__name__ for value in arguments}))
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(value_kind(a, typed_parts) for a in arguments)}]"
    if annotation in typed_parts:
        return typed_parts[annotation]
    return getattr(annotation, "__name__", str(annotation))


def kind_mismatches(args: Any, part: type[pydantic.BaseModel], typed_parts: dict[Any, str]) -> list[str]:
    """'argument: block kind != config kind' for each argument of `args` that is a field of `part`."""
    found = []
    for name, annotation in args.__annotations__.items():
        if name in part.model_fields:
            given, wanted = value_kind(annotation, typed_parts), value_kind(part.model_fields[name].annotation, {})
            if given != wanted:
                found.append(f"{name}: {given} != {wanted}")
    return found


TYPED_PARTS = {args: part.__name__ for args, part, _ in BLOCK_PARTS}


@pytest.mark.parametrize(("args", "part", "own"), BLOCK_PARTS, ids=lambda v: getattr(v, "__name__", ""))
def test_a_blocks_argument_takes_the_values_its_config_field_takes(args, part, own):
    """The TypedDict an editor and a type checker read for an argument, and the config field that checks it,
    agree on what kind of value it is."""
    shared = set(args.__annotations__) & set(part.model_fields)
    assert shared  # every block shares fields with its part
    assert kind_mismatches(args, part, TYPED_PARTS) == []


def test_an_argument_typed_otherwise_than_its_field_is_caught():
    # The functional form (noqa: UP013): in a class body, this module's annotations would stay strings
    # (from __future__ import annotations), unlike the blocks' own.
    fields = {"efa": NotRequired[str | None], "capacity_type": NotRequired[str | None], "nodes": int}
    pool_args = TypedDict("pool_args", fields)  # type: ignore[misc]
    assert kind_mismatches(pool_args, NodePoolConfig, {}) == ["efa: str != bool"]
    assert value_kind(NotRequired[list[int] | None], {}) == "list[int]"


def test_a_mocker_deployment_starts_on_the_full_snapshot_a_model_cache_block_downloads(engine):
    """A ModelCache block sees no deployment, so it downloads the full snapshot; a mocker deployment, which
    reads the tokenizer only, must take that marker too, or its workers would wait forever."""

    def program():
        cluster = on_stand_in_cluster()
        ModelCache("cache", {"namespace": "gpt-oss", "storage_class_name": "shared-rwx"}, opts=cluster)
        GptOssDeployment("trial", {"recipe": "trial-mocker-agg", "namespace": "gpt-oss"}, opts=cluster)

    engine.run(program)
    download = engine.inputs("cache-download")["spec"]["template"]["spec"]["containers"][0]
    (written,) = [variable["value"] for variable in download["env"] if variable["name"] == "MARKER"]
    graph = engine.inputs("trial-graph")
    waiting = [
        init["env"]
        for component in components_by_name(graph).values()
        for init in component.pod.get("initContainers", [])
    ]
    assert waiting and all(written in each[0]["value"].split() for each in waiting)


@pytest.mark.parametrize("nodes", [1, 2])
def test_deployments_on_one_gpu_node_pool_are_placed_together(engine, nodes):
    """Each 8-GPU deployment fits an 8-GPU node alone; two need two nodes, as the stack places them: on one
    node the second is refused, by its node_pool, before anything of it is registered."""
    engine.mocks.subnet_zones = {"subnet-a": "us-east-2a"}
    serving = {"recipe": "h200-agg-low-latency", "gpus": 8, "namespace": "gpt-oss", "node_pool": "h200"}

    def program():
        GpuNodePool("h200", POOL_ARGS | {"hardware": "h200", "nodes": nodes})
        GptOssDeployment("first", serving)
        GptOssDeployment("second", serving)

    if nodes == 2:
        engine.run(program)
        assert {"first-graph", "second-graph"} <= set(engine.urns)
        return
    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert (
        "invalid arguments of GptOssDeployment 'second':\nnode_pool: GpuNodePool 'h200' already runs "
        "GptOssDeployment 'first': pool h200 (1 x p5en.48xlarge, 8 GPUs each, 8 in all) cannot place a 8-GPU "
        "worker: the pool's deployments need 16 GPUs as [8, 8]"
    ) in str(refused.value)
    registered = [resource.name for resource in engine.mocks.resources]
    assert "first-graph" in registered and not [name for name in registered if name.startswith("second")]


def test_a_capacity_block_ec2_cannot_read_is_refused_by_the_pools_argument(engine):
    """EC2 knows no such block (the mock answers none): refused under capacity_reservation_id, the argument,
    not the stack-file key EC2's facts are read under."""
    block = {"capacity_type": "CAPACITY_BLOCK", "capacity_reservation_id": "cr-0123456789abcdef0"}

    def program():
        GpuNodePool("gb200", POOL_ARGS | {"hardware": "gb200", "availability_zone": "us-east-2b", **block})

    with pytest.raises(pulumi.RunError) as refused:
        engine.run(program)
    assert "\ncapacity_reservation_id: cannot read Capacity Block cr-0123456789abcdef0 from EC2" in str(refused.value)
    assert "gpt-oss-infra:" not in str(refused.value)


# Arguments whose default the blocks read from data (configs/components.yaml, the config models), and which
# their docstrings (the API page, an editor's hover) may state: that statement must be today's value.
STATED_DEFAULTS = {
    "dynamo_release": blocks.DEFAULTS["dynamoRelease"],
    "kubernetes_version": blocks.DEFAULT_KUBERNETES_VERSION,
    "environment": blocks.DEFAULTS["environment"],
}


def block_defaults() -> dict[str, Any]:
    """'Args.argument' -> the block's default, for every argument that is a config part's field with a
    default (the block's own where it has one: blocks.OWN_DEFAULTS) and for those of STATED_DEFAULTS."""
    defaults = {}
    for args, part, _ in BLOCK_PARTS:
        for name in args.__annotations__:
            if name in STATED_DEFAULTS:
                defaults[f"{args.__name__}.{name}"] = STATED_DEFAULTS[name]
            elif name in part.model_fields:
                default = blocks.OWN_DEFAULTS.get(part, {}).get(name, part.model_fields[name].default)
                if default not in (None, PydanticUndefined):
                    defaults[f"{args.__name__}.{name}"] = default
    return defaults


def argument_docstrings(source: str) -> dict[str, str]:
    """'Class.argument' -> the docstring under the argument's annotation, for each TypedDict of a module."""
    documented = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base) == "TypedDict" for base in node.bases):
            for annotation, following in itertools.pairwise(node.body):
                if (
                    isinstance(annotation, ast.AnnAssign)
                    and isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                ):
                    documented[f"{node.name}.{ast.unparse(annotation.target)}"] = following.value.value
    return documented


def stale_defaults(documented: dict[str, str], defaults: dict[str, Any]) -> list[str]:
    """The arguments whose docstring speaks of a default and does not state `defaults`' value for it: after
    "default" in the same clause ("(default 60)", "(default: configs/components.yaml's, 1.6.1)"), or just
    before "(the default"."""

    def stated(text: str, value: str) -> bool:
        value = re.escape(value)
        return bool(re.search(rf"default[^);]*(?<![\w.]){value}(?![\w.])|(?<![\w.]){value} \(the default", text))

    return sorted(
        key
        for key, text in documented.items()
        if key in defaults and "default" in text and not stated(text, str(defaults[key]))
    )


def test_a_default_an_arguments_docstring_states_is_todays():
    documented = {
        key: text
        for path in sorted((ROOT / "components").glob("*.py"))
        for key, text in argument_docstrings(path.read_text()).items()
    }
    defaults = block_defaults()
    stating = [key for key in documented if key in defaults and "default" in documented[key]]
    assert {"DynamoPlatformArgs.dynamo_release", "ModelCacheArgs.storage", "GptOssDeploymentArgs.replicas"} <= set(
        stating
    )
    assert stale_defaults(documented, defaults) == []


def test_a_docstring_with_yesterdays_default_is_caught():
    source = 'class Args(TypedDict):\n    kubernetes_version: str\n    """Checked against (default 1.35)."""\n'
    assert argument_docstrings(source) == {"Args.kubernetes_version": "Checked against (default 1.35)."}
    assert stale_defaults(argument_docstrings(source), {"Args.kubernetes_version": "1.36"}) == [
        "Args.kubernetes_version"
    ]
    # The block's default, not the stack config's: a ModelCache uses the cluster's StorageClass.
    storage = 'class ModelCacheArgs(TypedDict):\n    storage: str\n    """efs (the default) or existing."""\n'
    assert block_defaults()["ModelCacheArgs.storage"] == "existing"
    assert stale_defaults(argument_docstrings(storage), block_defaults()) == ["ModelCacheArgs.storage"]
