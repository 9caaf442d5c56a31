"""gpt-oss-infra: gpt-oss-120b on Kubernetes with NVIDIA Dynamo and TensorRT-LLM.

config -> functional core (validate, resolve recipes, render objects) -> the cluster target
(`cluster.kind`) -> the platform, the model cache and one graph per deployment on it.
"""

import pulumi

from gpt_oss_infra.components.destroy_wait import WaitAtDestroy
from gpt_oss_infra.components.gateway import GatewayController, GatewayControllerArgs
from gpt_oss_infra.components.gpu_software import GpuSoftware, GpuSoftwareArgs
from gpt_oss_infra.components.model_cache import ModelCache, ModelCacheArgs
from gpt_oss_infra.components.observability import Observability, ObservabilityArgs
from gpt_oss_infra.components.platform import DynamoPlatform, DynamoPlatformArgs
from gpt_oss_infra.components.serving import DynamoServing, DynamoServingArgs
from gpt_oss_infra.components.stack_config import (
    api_key_clients,
    raw_namespace_config,
    refuse_what_aws_would_refuse,
    refused,
    secret_config,
    secret_map_config,
)
from gpt_oss_infra.components.targets import KINDS
from gpt_oss_infra.components.workloads import Workloads, WorkloadsArgs
from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.core.render.report import stack_report
from gpt_oss_infra.core.stack import build_stack, defer_serving

catalog = load_catalog()
hf_token, ngc_api_key = secret_config("hfToken"), secret_config("ngcApiKey")
region = pulumi.Config("aws").get("region")  # prices are per region
api_keys = secret_map_config("apiKeys")
stack = refused(
    lambda: build_stack(
        raw_namespace_config(),
        catalog,
        with_hf_token=hf_token is not None,
        with_ngc_key=ngc_api_key is not None,
        api_key_clients=api_key_clients(),
        region=region,
    )
)

# The cluster: what its kind decides before anything exists, then its one component.
kind = KINDS[stack.config.cluster.kind]
cluster_plan = refused(lambda: kind.plan(stack, catalog))
refuse_what_aws_would_refuse()
stack = defer_serving(stack, cluster_plan.waiting_pools())  # graphs whose nodes do not exist yet
target = kind.build(stack, cluster_plan)
on_cluster = pulumi.ResourceOptions(providers=[target.provider], depends_on=target.system_ready)
# Destroy deletes the charts that make volume claims, then this wait (their volumes gone), then the nodes.
volumes_gone = WaitAtDestroy(stack.volumes_gone, target.access, on_cluster)
with_volumes = pulumi.ResourceOptions(providers=[target.provider], depends_on=[*target.system_ready, volumes_gone])

observability = (
    Observability("observability", ObservabilityArgs(stack.observability), opts=with_volumes)
    if stack.observability
    else None
)
GpuSoftware(
    "gpu-software",
    GpuSoftwareArgs(stack.gpu_software, [observability.release] if observability else []),
    opts=on_cluster,
)
dynamo = DynamoPlatform("dynamo-platform", DynamoPlatformArgs(stack.platform, ngc_api_key), opts=with_volumes)
workloads = Workloads(
    "workloads",
    WorkloadsArgs(stack.namespace, stack.workload_pull_secret, ngc_api_key, stack.network_policies),
    opts=on_cluster,
)
cache = ModelCache(
    "model-cache",
    ModelCacheArgs(
        objects=stack.model_cache,
        file_system=target.file_system,
        hf_token=hf_token,
        download_timeout=f"{catalog.model_download.active_deadline_seconds}s",
    ),
    opts=pulumi.ResourceOptions(
        providers=[target.provider], depends_on=[*target.system_ready, *target.storage_ready, workloads]
    ),
)
gateways = (
    GatewayController(
        "gateway",
        GatewayControllerArgs(stack.gateways, target.load_balancers_ready, stack.load_balancers_gone, target.access),
        opts=on_cluster,
    )
    if stack.gateways
    else None
)
servings = {
    serving.deployment.name: DynamoServing(
        serving.deployment.name,
        DynamoServingArgs(
            serving=serving,
            gpu_nodes=target.gpu_ready.get(serving.deployment.pool.name) if serving.deployment.pool else None,
            api_keys=api_keys,
            gateway_ready=gateways.ready if gateways else [],
        ),
        opts=pulumi.ResourceOptions(providers=[target.provider], depends_on=[cache, dynamo]),
    )
    for serving in stack.serving
}

for name, value in target.exports.items():
    pulumi.export(name, value)
pulumi.export("nodePools", sorted(stack.pools))
# What is live after this `up`: the next one may move at most one Dynamo minor release from it (make check-upgrade).
pulumi.export("dynamoRelease", stack.config.release.dynamo)
report = stack_report(stack, catalog, cluster_plan, region)
for warning in report["warnings"]:  # the stack's, the cluster plan's, and GPU pools no deployment uses
    pulumi.log.warn(warning)
pulumi.export("report", report)
pulumi.export("endpoints", {name: serving.endpoint for name, serving in servings.items()})
pulumi.export("servingChecks", {name: serving.check for name, serving in servings.items()})
exposed = {name: serving for name, serving in servings.items() if "url" in serving.outputs}
if exposed:  # how a client calls each internal or public endpoint
    pulumi.export("gateways", {name: {key: s.outputs[key] for key in ("url", "curl")} for name, s in exposed.items()})
