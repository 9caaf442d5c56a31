"""gpt-oss-infra: gpt-oss-120b on Kubernetes with NVIDIA Dynamo and TensorRT-LLM.

config -> functional core (validate, resolve recipes, render objects) -> components -> resources.
"""

import pulumi
import pulumi_kubernetes as k8s

from components.aws_cluster import AwsCluster, AwsClusterArgs
from components.gpu_software import GpuSoftware, GpuSoftwareArgs
from components.kube import resource_args
from components.kubernetes import existing_cluster_provider
from components.model_cache import ModelCache, ModelCacheArgs
from components.serving import DynamoServing
from components.stack_config import hf_token, raw_namespace_config
from core import infra
from core.catalog import load_catalog
from core.errors import ConfigError
from core.manifests import HARDWARE_LABEL, POOL_LABEL
from core.report import stack_report
from core.stack import build_stack

catalog = load_catalog()
token = hf_token()
try:
    stack = build_stack(raw_namespace_config(), catalog, with_hf_token=token is not None)
except ConfigError as error:  # refused before any resource is registered
    raise pulumi.RunError(f"invalid stack config:\n{error}") from None
config = stack.config

# The cluster: created on AWS, or an existing one reached through kubeconfig.
if config.cluster.create:
    region = pulumi.Config("aws").require("region")
    cluster = AwsCluster("gptoss", AwsClusterArgs(config=config, pools=stack.pools, region=region))
    provider = cluster.provider
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export(
        "kubectlHint",
        f"aws eks update-kubeconfig --name {config.cluster.name} --region {region} "
        f"&& kubectl get nodes -L {POOL_LABEL} -L {HARDWARE_LABEL}",
    )
else:
    provider = existing_cluster_provider("kubernetes")
k8s_opts = pulumi.ResourceOptions(providers=[provider])

GpuSoftware(
    "gpu-software",
    GpuSoftwareArgs(
        charts=catalog.charts,
        gpu_software=config.cluster.resolved_gpu_software,
        dcgm_exporter=config.cluster.dcgm_exporter,
        efa=any(infra.gpu_node_group(pool).efa_interfaces for pool in stack.pools.values()),
    ),
    opts=k8s_opts,
)

# Serving: namespace, model cache, one DynamoGraphDeployment per deployment.
workloads = k8s.core.v1.Namespace("workloads", **resource_args(stack.namespace), opts=k8s_opts)
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

pulumi.export("nodePools", sorted(stack.pools))
pulumi.export("report", stack_report(stack))
pulumi.export("endpoints", endpoints)
