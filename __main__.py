"""gpt-oss-infra: gpt-oss-120b on Kubernetes with NVIDIA Dynamo and TensorRT-LLM.

config -> functional core (validate, resolve recipes, render objects) -> components -> resources.
"""

import pulumi
import pulumi_kubernetes as k8s

from components.kube import resource_args
from components.kubernetes import existing_cluster_provider
from components.model_cache import ModelCache, ModelCacheArgs
from components.serving import DynamoServing
from components.stack_config import hf_token, raw_namespace_config
from core.catalog import load_catalog
from core.errors import ConfigError
from core.report import stack_report
from core.stack import build_stack

token = hf_token()
try:
    stack = build_stack(raw_namespace_config(), load_catalog(), with_hf_token=token is not None)
except ConfigError as error:  # refused before any resource is registered
    raise pulumi.RunError(f"invalid stack config:\n{error}") from None

provider = existing_cluster_provider("kubernetes")
workloads = k8s.core.v1.Namespace(
    "workloads", **resource_args(stack.namespace), opts=pulumi.ResourceOptions(provider=provider)
)
cache = ModelCache(
    "model-cache",
    ModelCacheArgs(pvc=stack.model_cache_pvc, hf_token_secret=stack.hf_token_secret, hf_token=token),
    opts=pulumi.ResourceOptions(providers=[provider], depends_on=[workloads]),
)
endpoints = {
    serving.deployment.name: DynamoServing(
        serving.deployment.name,
        serving,
        opts=pulumi.ResourceOptions(providers=[provider], depends_on=[cache]),
    ).endpoint
    for serving in stack.serving
}

pulumi.export("report", stack_report(stack))
pulumi.export("endpoints", endpoints)
