"""The stack config's models: the product's public interface (Pulumi config namespace
`gpt-oss-infra`). Checked across fields in core.inputs.rules.

The cluster is a tagged union: `kind: eks` (a cluster the program creates, with its network and
node groups) or `kind: existing` (a cluster reached through a kubeconfig), each with only its own
keys. Config models carry a `Config` suffix; the components that build from them do not.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, PositiveFloat, PositiveInt

from gpt_oss_infra.core.inputs.catalog import CapacityType
from gpt_oss_infra.core.inputs.types import (
    AcmCertificateArn,
    AvailabilityZone,
    Cidr,
    ClientName,
    CommitId,
    DeploymentName,
    DnsLabel,
    Hostname,
    KubernetesVersion,
    PinnedImage,
    ReservationId,
    Retention,
    RoleArn,
    Size,
    SubnetId,
)
from gpt_oss_infra.core.schema import StrictModel

NAMESPACE = "gpt-oss-infra"
KEY_PREFIX = f"{NAMESPACE}:"
# Read by the shell as Pulumi secrets, never parsed here; each with the command that stores it
# encrypted (apiKeys: client name -> API key).
SECRET_COMMANDS = {
    "hfToken": f"pulumi config set --secret {KEY_PREFIX}hfToken <value>",
    "ngcApiKey": f"pulumi config set --secret {KEY_PREFIX}ngcApiKey <value>",
    "apiKeys": f"pulumi config set --secret --path '{KEY_PREFIX}apiKeys.<client>' <key>",
}
SECRET_KEYS = tuple(SECRET_COMMANDS)


def namespace_config(entries: dict[str, Any]) -> dict[str, Any]:
    """Stack-file entries' `gpt-oss-infra:` keys without their prefix, secrets left out: what the
    core's parser receives (the shell reads secrets apart)."""
    return {
        key.removeprefix(KEY_PREFIX): value
        for key, value in entries.items()
        if key.startswith(KEY_PREFIX) and key.removeprefix(KEY_PREFIX) not in SECRET_KEYS
    }


# The encrypted gp3 StorageClass an EKS cluster of ours gets (EBS CSI driver add-on): EKS 1.30 and
# later mark no StorageClass as the default, so every PVC we render names one.
CREATED_BLOCK_STORAGE_CLASS = "gpt-oss-gp3"

GpuSoftware = Literal["device-plugin", "gpu-operator", "none"]


class Release(StrictModel):
    """Everything promotion moves between stacks, and nothing else."""

    dynamo: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]  # one of configs/dynamo/versions.yaml
    runtime_image: PinnedImage
    model: Annotated[str, Field(pattern=r"^[\w.-]+/[\w.-]+$")]
    model_revision: CommitId


class SystemNodesConfig(StrictModel):
    """The CPU node group for the frontend, the Dynamo operator, NATS and jobs."""

    instance_type: str = "m7i.2xlarge"
    nodes: Annotated[int, Field(ge=1, description="the CPU nodes for the frontend, the operator, NATS and jobs")] = 2
    disk_size_gib: Annotated[
        int, Field(ge=20, alias="diskSizeGiB", description="each system node's root volume, in GiB")
    ] = 100


class NetworkConfig(StrictModel):
    """A new VPC (default), or existing private subnets keyed by availability zone."""

    vpc_cidr: Cidr = "10.0.0.0/16"
    availability_zones: Annotated[
        int, Field(ge=2, le=6, description="the availability zones the VPC spans (EKS needs subnets in two)")
    ] = 3
    existing_private_subnets: dict[str, SubnetId] | None = None


class _ClusterConfig(StrictModel):
    """What every cluster kind has."""

    name: DnsLabel
    # Objects are validated against it, so it is one kubernetes-validate has schemas for (and, for eks, one
    # with add-on builds pinned): core/inputs/rules.py. An existing cluster's: its own (kubectl version).
    kubernetes_version: KubernetesVersion = "1.36"
    # What makes GPUs schedulable: NVIDIA's device plugin (default on clusters we create), the GPU
    # Operator, or nothing (an existing cluster that has one already). Never two of them.
    gpu_software: GpuSoftware | None = None
    dcgm_exporter: bool = False


class EksClusterConfig(_ClusterConfig):
    """An EKS cluster the program creates, with its network, node groups and add-ons."""

    kind: Literal["eks"]
    endpoint_public_access: bool = True  # the private endpoint is always on
    public_access_cidrs: list[Cidr] = []
    # Networks that reach the private endpoint (in-VPC deploy runners, VPN): HTTPS into the
    # cluster security group, which admits only its own members by default. Default: the VPC we create.
    private_access_cidrs: list[Cidr] | None = None
    admin_role_arns: list[RoleArn] = []
    log_retention_days: Annotated[int, Field(ge=1, description="how many days control-plane logs are kept")] = 30
    system_nodes: SystemNodesConfig = SystemNodesConfig()
    network: NetworkConfig = NetworkConfig()

    @property
    def resolved_gpu_software(self) -> GpuSoftware:
        return self.gpu_software or "device-plugin"

    @property
    def resolved_private_access_cidrs(self) -> list[str]:
        if self.private_access_cidrs is not None:
            return self.private_access_cidrs
        return [] if self.network.existing_private_subnets else [self.network.vpc_cidr]

    @property
    def block_storage_class(self) -> str:
        """The StorageClass every platform PVC names: the gp3 class the cluster gets."""
        return CREATED_BLOCK_STORAGE_CLASS


class ExistingClusterConfig(_ClusterConfig):
    """A cluster that exists, reached through `kubernetes:kubeconfig` / `kubernetes:context`."""

    kind: Literal["existing"]
    # The ReadWriteOnce StorageClass for the platform's volumes (NATS JetStream).
    block_storage_class_name: DnsLabel | None = None
    # The AWS Load Balancer Controller runs in the cluster: an internal or public endpoint gets an
    # NLB. Without it, a gateway is reached through its in-cluster Service (internal only).
    load_balancer_controller: bool = False
    # Namespaces and CRDs the stack would make that exist already and that it may use as they are
    # ("<Kind>/<name>", e.g. CustomResourceDefinition/dynamographdeployments.nvidia.com): imported instead
    # of created, and left in place by `pulumi destroy` (core/render/ownership.py).
    adopt: list[str] = []

    @property
    def resolved_gpu_software(self) -> GpuSoftware:
        return self.gpu_software or "none"

    @property
    def block_storage_class(self) -> str | None:
        return self.block_storage_class_name


ClusterConfig = Annotated[EksClusterConfig | ExistingClusterConfig, Field(discriminator="kind")]


class NodePoolConfig(StrictModel):
    hardware: str
    nodes: Annotated[int, Field(ge=0, description="the GPU nodes in the pool")]
    capacity_type: CapacityType = "ON_DEMAND"
    capacity_reservation_id: ReservationId | None = None
    instance_type: str | None = None  # default: the hardware's first instance type
    # Required with CAPACITY_BLOCK: the reservation's AZ, whose private subnet alone the pool uses.
    availability_zone: AvailabilityZone | None = None
    efa: bool | None = None  # default: on when a deployment's KV cache crosses the pool's nodes
    disk_size_gib: Annotated[
        int,
        Field(ge=100, alias="diskSizeGiB", description="each GPU node's root volume, in GiB: runtime images are large"),
    ] = 500
    # Labels that select this pool's nodes; default {gpt-oss-infra/pool: <pool name>}, the label
    # our node groups carry. Set it to target GPU nodes of an existing cluster.
    node_selector: dict[str, str] | None = None
    # What one node costs per hour where the list price does not apply (Spot, a Capacity Block's
    # price / its hours): the plan's cost uses it instead of "unknown".
    price_per_node_hour: Annotated[
        PositiveFloat | None, Field(allow_inf_nan=False, description="what one node costs per hour, in USD")
    ] = None


class ModelCacheConfig(StrictModel):
    storage: Literal["efs", "fsx-lustre", "existing"] = "efs"
    size: Size = "400Gi"
    storage_class_name: DnsLabel | None = None
    # FSx for Lustre PERSISTENT_2 throughput per TiB: 125 | 250 | 500 | 1000 MB/s
    fsx_throughput_per_tib: Literal[125, 250, 500, 1000] = Field(250, alias="fsxThroughputPerTiB")
    # What `pulumi destroy` does with the weights' file system (efs, fsx-lustre): false deletes it with the
    # rest; true keeps the EFS file system (its mount targets go, so the network can) or, for FSx for
    # Lustre, deletes the file system after a final backup (its network interfaces would hold the VPC).
    keep_on_destroy: bool = False


class PlatformConfig(StrictModel):
    """The Dynamo platform Helm release (chart version: release.dynamo)."""

    namespace: DnsLabel = "dynamo-system"
    nats: bool | None = None  # the bundled NATS; None: the release chart's default (configs/dynamo/versions.yaml)
    grove: bool = False  # multinode orchestration; needs Grove installed
    kai_scheduler: bool = False


class BenchmarkConfig(StrictModel):
    """Opt-in aiperf Job against the deployment's frontend; the recipe's traffic shape by default
    ([dynamo-gptoss-trtllm]'s long-context run: inputTokens 32000, outputTokens 256)."""

    enabled: bool = False
    input_tokens: Annotated[PositiveInt | None, Field(description="the benchmark's input tokens per request")] = None
    output_tokens: Annotated[PositiveInt | None, Field(description="the benchmark's output tokens per request")] = None
    # x the deployment's real GPU count (GPU recipes)
    concurrency_per_gpu: Annotated[
        PositiveInt | None, Field(description="the benchmark's concurrent requests per GPU")
    ] = None


class RateLimit(StrictModel):
    requests: Annotated[PositiveInt, Field(description="the requests a client may make per unit")]
    unit: Literal["Second", "Minute", "Hour"] = "Minute"


class EndpointConfig(StrictModel):
    """How clients reach a deployment. `cluster`: its ClusterIP Service only. `internal` / `public`:
    an Envoy Gateway with API-key auth and per-client rate limits behind an internal /
    internet-facing NLB, with TLS on the NLB when a certificate is given (required for public)."""

    exposure: Literal["cluster", "internal", "public"] = "cluster"
    hostname: Hostname | None = None  # the name clients use, on the certificate
    certificate_arn: AcmCertificateArn | None = None
    # Per API key and per gateway replica (Envoy's local rate limit): 429 beyond it.
    rate_limit: RateLimit = RateLimit(requests=60)
    # A client's own limit instead; at most 15 (the gateway takes 16 rules, one is everyone else's).
    client_rate_limits: Annotated[dict[ClientName, RateLimit], Field(max_length=15)] = {}
    # Who may reach the NLB (its security group); default: for internal, the VPC we create; else anywhere.
    allowed_cidrs: Annotated[list[Cidr], Field(min_length=1)] | None = None


class AlertsConfig(StrictModel):
    """Alert thresholds of a deployment (observability.enabled)."""

    # Default: configs/observability.yaml, by the recipe's mode.
    ttft_p95_seconds: Annotated[PositiveFloat | None, Field(description="the TTFT p95 alert, in seconds")] = None


class DeploymentConfig(StrictModel):
    recipe: str
    node_pool: str | None = None  # required by a GPU recipe; a cpu recipe runs on CPU nodes and takes none
    # Where the recipe allows several sizes
    gpus: Annotated[PositiveInt | None, Field(description="the GPUs each worker gets")] = None
    replicas: Annotated[PositiveInt, Field(description="the worker replicas")] = 1
    router_mode: Literal["round-robin", "kv"] = "round-robin"
    overrides: dict[str, Any] = {}  # engine-config keys deep-merged into the recipe's
    benchmark: BenchmarkConfig = BenchmarkConfig()
    # How long `pulumi up` waits for the graph to be Ready: pulling the runtime image and loading
    # the model, which [dynamo-recipe-gptoss] puts at 15-30 minutes. Twice that by default.
    ready_timeout_minutes: Annotated[
        PositiveInt, Field(description="how long `pulumi up` waits for the graph to be Ready, in minutes")
    ] = 60
    endpoint: EndpointConfig = EndpointConfig()
    alerts: AlertsConfig = AlertsConfig()


class NetworkPoliciesConfig(StrictModel):
    """NetworkPolicies for the workloads (and, on a created cluster, the VPC CNI enforcing them).
    Default: on when an endpoint is internal or public (secure by default); `false` opts out, with a warning."""

    enabled: bool | None = None


class ObservabilityConfig(StrictModel):
    """kube-prometheus-stack (Prometheus, Alertmanager, Grafana), DCGM exporter, Dynamo's and our
    dashboards and alert rules."""

    enabled: bool = False
    namespace: DnsLabel = "monitoring"
    retention: Retention = "15d"  # Prometheus' own format
    storage_size: Size = "50Gi"  # Prometheus' volume (the stack's block StorageClass)


def stack_config_keys() -> list[str]:
    """The stack config's top-level keys, as a stack file spells them (secrets are read apart)."""
    return [field.alias or name for name, field in StackConfig.model_fields.items()]


class StackConfig(StrictModel):
    environment: DnsLabel
    release: Release
    cluster: ClusterConfig
    node_pools: dict[DnsLabel, NodePoolConfig] = {}  # GPU node pools; none for a stack of cpu recipes only
    model_cache: ModelCacheConfig = ModelCacheConfig()
    deployments: dict[DeploymentName, DeploymentConfig] = {}
    namespace: DnsLabel = "gpt-oss"  # Kubernetes namespace of the serving workloads
    platform: PlatformConfig = PlatformConfig()
    network_policies: NetworkPoliciesConfig = NetworkPoliciesConfig()
    observability: ObservabilityConfig = ObservabilityConfig()

    @property
    def exposed(self) -> list[str]:
        """The deployments reached from outside the cluster (endpoint internal or public)."""
        return [name for name, deployment in self.deployments.items() if deployment.endpoint.exposure != "cluster"]

    @property
    def network_policies_enabled(self) -> bool:
        enabled = self.network_policies.enabled
        return bool(self.exposed) if enabled is None else enabled

    @property
    def pinned_zones(self) -> list[str]:
        """The AZs node pools pin (their reservations live there), once each, in config order."""
        return list(dict.fromkeys(p.availability_zone for p in self.node_pools.values() if p.availability_zone))
