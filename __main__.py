"""gpt-oss-infra: gpt-oss-120b on Kubernetes with NVIDIA Dynamo and TensorRT-LLM.

config -> functional core (validate, resolve recipes) -> components -> resources.
"""

import pulumi
import pulumi_kubernetes as k8s

from components.kube import resource_args
from components.kubernetes import existing_cluster_provider
from components.model_cache import ModelCache, ModelCacheArgs
from components.serving import DynamoServing, ServingArgs
from components.stack_config import hf_token, raw_namespace_config
from core import manifests
from core.catalog import load_catalog
from core.errors import ConfigError
from core.report import stack_report
from core.stack import build_stack

try:
    stack = build_stack(raw_namespace_config(), load_catalog())
except ConfigError as error:  # refuse bad input before any resource is registered
    raise pulumi.RunError(f"invalid stack config:\n{error}") from None
config = stack.config
token = hf_token()

provider = existing_cluster_provider("kubernetes")
k8s_opts = pulumi.ResourceOptions(provider=provider)

workloads = k8s.core.v1.Namespace(
    "workloads", **resource_args(manifests.namespace(config.namespace)), opts=k8s_opts
)
cache = ModelCache(
    "model-cache",
    ModelCacheArgs(
        namespace=config.namespace,
        size=config.model_cache.size,
        storage_class=manifests.storage_class_name(config.model_cache),
        hf_token=token,
    ),
    opts=pulumi.ResourceOptions(providers=[provider], depends_on=[workloads]),
)
endpoints = {}
for deployment in stack.deployments:
    serving = DynamoServing(
        deployment.name,
        ServingArgs(
            deployment=deployment,
            release=config.release,
            namespace=config.namespace,
            node_selector=stack.node_selector(deployment.config.node_pool),
            with_hf_token=token is not None,
        ),
        opts=pulumi.ResourceOptions(providers=[provider], depends_on=[cache]),
    )
    endpoints[deployment.name] = serving.endpoint

pulumi.export("report", stack_report(stack))
pulumi.export("endpoints", endpoints)
