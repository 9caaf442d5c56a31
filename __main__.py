"""gpt-oss-infra: gpt-oss-120b on Kubernetes with NVIDIA Dynamo and TensorRT-LLM.

config -> functional core (validate, resolve recipes, render objects) -> components -> resources.
"""

import pulumi
import pulumi_kubernetes as k8s

from components.aws_cluster import AwsCluster, AwsClusterArgs
from components.aws_lookups import account_facts
from components.gpu_software import GpuSoftware, GpuSoftwareArgs
from components.kube import resource_args
from components.kubernetes import existing_cluster_provider
from components.model_cache import FileSystemRef, ModelCache, ModelCacheArgs
from components.model_storage import ModelStorage, ModelStorageArgs
from components.platform import DynamoPlatform, DynamoPlatformArgs, docker_config_json
from components.serving import DynamoServing, DynamoServingArgs
from components.stack_config import raw_namespace_config, secret_config
from core import infra
from core.catalog import load_catalog
from core.errors import ConfigError
from core.manifests import HARDWARE_LABEL, POOL_LABEL
from core.report import stack_report
from core.stack import build_stack, defer_serving

catalog = load_catalog()
hf_token, ngc_api_key = secret_config("hfToken"), secret_config("ngcApiKey")
try:
    stack = build_stack(
        raw_namespace_config(),
        catalog,
        with_hf_token=hf_token is not None,
        with_ngc_key=ngc_api_key is not None,
    )
except ConfigError as error:  # refused before any resource is registered
    raise pulumi.RunError(f"invalid stack config:\n{error}") from None
config = stack.config

# The cluster: created on AWS (with the model cache's file system), or an existing one.
# Everything but GPU workloads waits for `system_ready` only; GPU workloads also for their pool's nodes.
file_system, system_ready, gpu_node_groups, storage_ready, eks_plan = None, [], {}, [], None
if config.cluster.create:
    region = pulumi.Config("aws").require("region")
    try:  # node groups are decided from what EC2 reports: refused before any resource too
        eks_plan = infra.eks_plan(
            config,
            stack.pools,
            stack.efa_pools,
            catalog.addon_versions[config.cluster.kubernetes_version],
            account_facts(stack),
        )
    except ConfigError as error:
        raise pulumi.RunError(f"invalid stack config:\n{error}") from None
    for warning in eks_plan.warnings:
        pulumi.log.warn(warning)
    stack = defer_serving(stack, eks_plan.waiting_pools())
    cluster = AwsCluster(
        "gptoss",
        AwsClusterArgs(
            config=config,
            plan=eks_plan,
            region=region,
            block_storage_class=stack.block_storage_class,
        ),
    )
    provider = cluster.provider
    system_ready, gpu_node_groups = cluster.system_ready, cluster.gpu_node_groups
    if config.model_cache.storage != "existing":
        storage = ModelStorage(
            "model-storage",
            ModelStorageArgs(
                config=config.model_cache,
                name=config.cluster.name,
                vpc_id=cluster.vpc_id,
                subnet_ids=cluster.private_subnet_ids,
                node_security_group_id=cluster.node_security_group_id,
            ),
        )
        file_system = FileSystemRef(storage.file_system_id, storage.dns_name, storage.mount_name)
        storage_ready = storage.ready
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("network", {"vpcId": cluster.vpc_id, "privateSubnetIds": cluster.private_subnet_ids})
    pulumi.export(
        "kubectlHint",
        f"aws eks update-kubeconfig --name {config.cluster.name} --region {region} "
        f"&& kubectl get nodes -L {POOL_LABEL} -L {HARDWARE_LABEL}",
    )
else:
    provider = existing_cluster_provider("kubernetes")
k8s_opts = pulumi.ResourceOptions(providers=[provider], depends_on=system_ready)

GpuSoftware("gpu-software", GpuSoftwareArgs(releases=stack.gpu_software), opts=k8s_opts)
dynamo = DynamoPlatform(
    "dynamo-platform",
    DynamoPlatformArgs(objects=stack.platform, ngc_api_key=ngc_api_key),
    opts=k8s_opts,
)

# Serving: namespace, model cache (filled before any worker starts), one graph per deployment.
workloads = [k8s.core.v1.Namespace("workloads", **resource_args(stack.namespace), opts=k8s_opts)]
if stack.workload_pull_secret is not None:
    workloads.append(
        k8s.core.v1.Secret(
            "workloads-ngc-pull",
            **resource_args(stack.workload_pull_secret),
            string_data={".dockerconfigjson": docker_config_json(ngc_api_key)},
            opts=pulumi.ResourceOptions(providers=[provider], depends_on=[*system_ready, *workloads]),
        )
    )
cache = ModelCache(
    "model-cache",
    ModelCacheArgs(
        objects=stack.model_cache,
        file_system=file_system,
        hf_token=hf_token,
        download_timeout=f"{catalog.model_download.active_deadline_seconds}s",
    ),
    opts=pulumi.ResourceOptions(providers=[provider], depends_on=[*system_ready, *storage_ready, *workloads]),
)
servings = {
    serving.deployment.name: DynamoServing(
        serving.deployment.name,
        DynamoServingArgs(serving=serving, gpu_nodes=gpu_node_groups.get(serving.deployment.pool.name)),
        opts=pulumi.ResourceOptions(providers=[provider], depends_on=[cache, dynamo]),
    )
    for serving in stack.serving
}

pulumi.export("nodePools", sorted(stack.pools))
for warning in stack.warnings:
    pulumi.log.warn(warning)
pulumi.export("report", stack_report(stack, catalog.performance, eks_plan))
pulumi.export("endpoints", {name: serving.endpoint for name, serving in servings.items()})
pulumi.export("servingChecks", {name: serving.check for name, serving in servings.items()})
