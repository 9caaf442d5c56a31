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
    LabelKey,
    LabelValue,
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
SECRET_MEANINGS = {
    "hfToken": "a Hugging Face token for the model download; none for a public model. It reaches pods only "
    "through a Secret; a plaintext value is refused",
    "ngcApiKey": "an NGC API key: an nvcr.io image pull secret for the operator and the workloads",
    "apiKeys": "the API keys of internal and public endpoints, by client name (the map's keys are plain, "
    "each value a secret)",
}


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

    dynamo: Annotated[
        str,
        Field(
            pattern=r"^\d+\.\d+\.\d+$",
            description="the Dynamo release, one of configs/dynamo/versions.yaml: its platform chart, graph "
            "apiVersion, images and who applies the CRDs (docs: Dynamo platform and releases)",
        ),
    ]
    runtime_image: Annotated[
        PinnedImage,
        Field(
            description="the runtime image of frontend and workers, of `release.dynamo`'s release (e.g. "
            "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1); another release's tag, `:latest` or none is refused"
        ),
    ]
    model: Annotated[
        str, Field(pattern=r"^[\w.-]+/[\w.-]+$", description="the Hugging Face model id, e.g. openai/gpt-oss-120b")
    ]
    model_revision: Annotated[
        CommitId, Field(description="the Hugging Face commit the workers load, exactly this snapshot, from the cache")
    ]


class SystemNodesConfig(StrictModel):
    """The CPU node group for the frontend, the Dynamo operator, NATS and jobs."""

    instance_type: Annotated[str, Field(description="the system nodes' EC2 instance type")] = "m7i.2xlarge"
    nodes: Annotated[int, Field(ge=1, description="the CPU nodes for the frontend, the operator, NATS and jobs")] = 2
    disk_size_gib: Annotated[
        int, Field(ge=20, alias="diskSizeGiB", description="each system node's root volume, in GiB")
    ] = 100


class NetworkConfig(StrictModel):
    """A new VPC (default), or existing private subnets keyed by availability zone."""

    vpc_cidr: Annotated[Cidr, Field(description="the CIDR of the VPC the program creates")] = "10.0.0.0/16"
    availability_zones: Annotated[
        int, Field(ge=2, le=6, description="the availability zones the VPC spans (EKS needs subnets in two)")
    ] = 3
    existing_private_subnets: Annotated[
        dict[str, SubnetId] | None,
        Field(
            description="private subnets by availability zone ({<az>: subnet-id}, two zones or more) "
            "to use instead of a new VPC"
        ),
    ] = None


class _ClusterConfig(StrictModel):
    """What every cluster kind has."""

    name: Annotated[DnsLabel, Field(description="the cluster's name")]
    # Objects are validated against it: core/inputs/rules.py checks it is one kubernetes-validate has
    # schemas for (and, for eks, one with add-on builds pinned).
    kubernetes_version: Annotated[
        KubernetesVersion,
        Field(
            description="eks: the version created, one with add-on builds pinned in configs/eks-addons.yaml "
            "(GB200 needs 1.33 or later). existing: the cluster's own minor version (kubectl version), one "
            "kubernetes-validate has schemas for. Every object is validated against it"
        ),
    ] = "1.36"
    # Never two of them: each makes GPUs schedulable.
    gpu_software: Annotated[
        GpuSoftware | None,
        Field(
            description="what makes GPUs schedulable: NVIDIA's device plugin (the default on eks), the GPU "
            "Operator, or none (the default on existing: the cluster has one already)"
        ),
    ] = None
    dcgm_exporter: Annotated[
        bool, Field(description="install NVIDIA's DCGM exporter (on anyway with observability.enabled)")
    ] = False


class EksClusterConfig(_ClusterConfig):
    """An EKS cluster the program creates, with its network, node groups and add-ons."""

    kind: Annotated[
        Literal["eks"], Field(description="eks: the program creates the EKS cluster, its network and node groups")
    ]
    endpoint_public_access: Annotated[
        bool, Field(description="the public API endpoint (the private one is always on)")
    ] = True
    public_access_cidrs: Annotated[
        list[Cidr],
        Field(description="who reaches the public API endpoint: required while it is on; 0.0.0.0/0 is refused"),
    ] = []
    # HTTPS into the cluster security group, which admits only its own members by default.
    private_access_cidrs: Annotated[
        list[Cidr] | None,
        Field(
            description="networks admitted to the private API endpoint (in-VPC deploy runners, VPN); default: "
            "the VPC created; required with a private-only endpoint in existing subnets"
        ),
    ] = None
    admin_role_arns: Annotated[list[RoleArn], Field(description="IAM roles given cluster-admin access entries")] = []
    log_retention_days: Annotated[int, Field(ge=1, description="how many days control-plane logs are kept")] = 30
    system_nodes: Annotated[SystemNodesConfig, Field(description="the CPU node group")] = SystemNodesConfig()
    network: Annotated[NetworkConfig, Field(description="the cluster's network")] = NetworkConfig()

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

    kind: Annotated[
        Literal["existing"],
        Field(description="existing: deploy into the cluster the `kubernetes:` provider config reaches"),
    ]
    block_storage_class_name: Annotated[
        DnsLabel | None,
        Field(
            description="the ReadWriteOnce StorageClass of the platform's volumes (NATS JetStream): required "
            "while the bundled NATS is on (a created cluster gets gpt-oss-gp3)"
        ),
    ] = None
    load_balancer_controller: Annotated[
        bool,
        Field(
            description="the cluster runs the AWS Load Balancer Controller, so an internal or public endpoint "
            "gets an NLB; without it an endpoint is internal only, through the gateway's in-cluster Service"
        ),
    ] = False
    # Imported instead of created, left in place by `pulumi destroy` (core/render/ownership.py).
    adopt: Annotated[
        list[str],
        Field(
            description="Namespaces and CustomResourceDefinitions the stack would make that exist already, "
            "as <Kind>/<name> (each must exist): a Namespace is only annotated, a CRD is applied over with the "
            "release's; destroy leaves both. Anything else of the stack's found without its owner annotation "
            "is refused"
        ),
    ] = []

    @property
    def resolved_gpu_software(self) -> GpuSoftware:
        return self.gpu_software or "none"

    @property
    def block_storage_class(self) -> str | None:
        return self.block_storage_class_name


ClusterConfig = Annotated[EksClusterConfig | ExistingClusterConfig, Field(discriminator="kind")]


class NodeScalingConfig(StrictModel):
    """Nodes that follow the load: Karpenter starts a node when a worker the Planner adds has none, and
    removes it once its workers are gone (docs/autoscaling.md: Elastic GPU pools)."""

    min_nodes: Annotated[
        int,
        Field(
            ge=0,
            description="the fewest nodes: at most what the pool's graphs hold at their minimum workers (Karpenter "
            "keeps no idle node); 0 lets a pool without graphs cost nothing",
        ),
    ] = 0
    max_nodes: Annotated[
        PositiveInt,
        Field(description="the most nodes: the NodePool's limit, the pool's GPU budget and the cost's worst case"),
    ]


class NodePoolConfig(StrictModel):
    """A pool of GPU nodes of one hardware type: a fixed number (`nodes`), or, on a created cluster, nodes
    that follow the load (`scaling`)."""

    hardware: Annotated[
        str,
        Field(
            description="a hardware type of configs/hardware.yaml: b200, gb200, h200 or h100; or cpu: an elastic "
            "pool of CPU nodes (instanceType and scaling required) for recipes without GPUs"
        ),
    ]
    nodes: Annotated[
        int | None,
        Field(ge=0, description="the GPU nodes in the pool, a fixed number: required unless scaling is given"),
    ] = None
    scaling: Annotated[
        NodeScalingConfig | None,
        Field(
            description="eks: {minNodes, maxNodes} in place of nodes: Karpenter provisions the pool's nodes as its "
            "workers need them, within maxNodes (not with a Capacity Block)"
        ),
    ] = None
    capacity_type: Annotated[
        CapacityType,
        Field(
            description="eks: how the nodes are bought, one the instance type is sold as; refused on an "
            "existing cluster, as are capacityReservationId and availabilityZone"
        ),
    ] = "ON_DEMAND"
    capacity_reservation_id: Annotated[
        ReservationId | None,
        Field(
            description="the Capacity Block or reservation the nodes run in: required with CAPACITY_BLOCK, "
            "read from EC2 at `pulumi up` (type, zone, size and window must match)"
        ),
    ] = None
    instance_type: Annotated[
        str | None,
        Field(description="another instance type of the same hardware (default: the hardware's first)"),
    ] = None
    availability_zone: Annotated[
        AvailabilityZone | None,
        Field(description="the pool's only zone: required with CAPACITY_BLOCK (the reservation's zone)"),
    ] = None
    efa: Annotated[
        bool | None,
        Field(description="EFA interfaces (default: on when a deployment's KV cache crosses the pool's nodes)"),
    ] = None
    disk_size_gib: Annotated[
        int,
        Field(ge=100, alias="diskSizeGiB", description="each GPU node's root volume, in GiB: runtime images are large"),
    ] = 500
    node_selector: Annotated[
        dict[LabelKey, LabelValue] | None,
        Field(
            description="labels that select the pool's nodes; eks: {gpt-oss-infra/pool: <pool>}, the node "
            "groups' label. existing: required, labels its GPU nodes carry (e.g. nvidia.com/gpu.product)"
        ),
    ] = None
    # Where the list price does not apply (Spot, a Capacity Block's price / its hours): the plan's cost
    # uses it instead of "unknown"; it also replaces an ON_DEMAND pool's list price.
    price_per_node_hour: Annotated[
        PositiveFloat | None, Field(allow_inf_nan=False, description="what one node costs per hour, in USD")
    ] = None

    @property
    def most_nodes(self) -> int:
        """The nodes the pool may have at once: its fixed count, or its scaling's maximum (0 while neither
        is given: refused by core.inputs.rules)."""
        if self.scaling is not None:
            return self.scaling.max_nodes
        return self.nodes or 0


class ModelCacheConfig(StrictModel):
    """The shared volume the weights are downloaded into once and every worker loads from."""

    storage: Annotated[
        Literal["efs", "fsx-lustre", "existing"],
        Field(description="what holds the cache: a file system made here, or an existing ReadWriteMany StorageClass"),
    ] = "efs"
    size: Annotated[Size, Field(description="the claim's size (a Kubernetes quantity)")] = "400Gi"
    storage_class_name: Annotated[
        DnsLabel | None,
        Field(
            description="the ReadWriteMany StorageClass: required with existing (an existing cluster needs existing)"
        ),
    ] = None
    fsx_throughput_per_tib: Literal[125, 250, 500, 1000] = Field(
        250, alias="fsxThroughputPerTiB", description="FSx for Lustre PERSISTENT_2 throughput per TiB, in MB/s"
    )
    # false deletes the file system with the rest. For FSx for Lustre, true means a final backup: its
    # network interfaces would hold the VPC.
    keep_on_destroy: Annotated[
        bool,
        Field(
            description="efs, fsx-lustre: keep the weights at `pulumi destroy` (EFS: the file system stays; FSx: "
            "a final backup, then deleted); refused with existing"
        ),
    ] = False


class PlatformConfig(StrictModel):
    """The Dynamo platform Helm release (chart version: release.dynamo)."""

    namespace: Annotated[DnsLabel, Field(description="the platform's namespace")] = "dynamo-system"
    nats: Annotated[
        bool | None,
        Field(description="the chart's bundled NATS (default: the release's, configs/dynamo/versions.yaml)"),
    ] = None
    grove: Annotated[
        bool, Field(description="Grove multinode orchestration (needs Grove); with kaiScheduler refused from 1.5")
    ] = False
    kai_scheduler: Annotated[bool, Field(description="the chart's KAI scheduler")] = False


class BenchmarkConfig(StrictModel):
    """Opt-in aiperf Job against the deployment's frontend; the recipe's traffic shape by default
    ([dynamo-gptoss-trtllm]'s long-context run: inputTokens 32000, outputTokens 256)."""

    enabled: Annotated[bool, Field(description="run the aiperf Job once the graph is Ready")] = False
    input_tokens: Annotated[PositiveInt | None, Field(description="the benchmark's input tokens per request")] = None
    output_tokens: Annotated[PositiveInt | None, Field(description="the benchmark's output tokens per request")] = None
    # x the deployment's real GPU count; refused for a cpu recipe
    concurrency_per_gpu: Annotated[
        PositiveInt | None, Field(description="the benchmark's concurrent requests per GPU")
    ] = None


class RateLimit(StrictModel):
    """Requests per unit of time."""

    requests: Annotated[PositiveInt, Field(description="the requests a client may make per unit")]
    unit: Annotated[Literal["Second", "Minute", "Hour"], Field(description="the unit of time")] = "Minute"


class EndpointConfig(StrictModel):
    """How clients reach a deployment. `cluster`: its ClusterIP Service only. `internal` / `public`:
    an Envoy Gateway with API-key auth and per-client rate limits behind an internal /
    internet-facing NLB, with TLS on the NLB when a certificate is given (required for public)."""

    exposure: Annotated[
        Literal["cluster", "internal", "public"],
        Field(
            description="cluster: the ClusterIP Service only; internal, public: a gateway with API keys (apiKeys), "
            "behind an NLB where the cluster has the AWS Load Balancer Controller (public needs one)"
        ),
    ] = "cluster"
    hostname: Annotated[
        Hostname | None,
        Field(description="the DNS name clients use, on the certificate: required with public or a certificate"),
    ] = None
    certificate_arn: Annotated[
        AcmCertificateArn | None, Field(description="the ACM certificate the NLB ends TLS with: required with public")
    ] = None
    # Envoy's local rate limit: per API key and per gateway replica.
    rate_limit: Annotated[RateLimit, Field(description="requests per API key and gateway replica; 429 beyond it")] = (
        RateLimit(requests=60)
    )
    # At most 15: the gateway takes 16 rules, one is everyone else's.
    client_rate_limits: Annotated[
        dict[ClientName, RateLimit], Field(max_length=15, description="a client's own limit instead, by client name")
    ] = {}
    allowed_cidrs: Annotated[
        Annotated[list[Cidr], Field(min_length=1)] | None,
        Field(
            description="who may reach the NLB (its security group); default: the VPC created for internal, "
            "anywhere for public; set it on an existing VPC, where internal otherwise admits 0.0.0.0/0"
        ),
    ] = None


class AlertsConfig(StrictModel):
    """Alert thresholds of a deployment (observability.enabled)."""

    # Default: configs/observability.yaml, by the recipe's mode.
    ttft_p95_seconds: Annotated[PositiveFloat | None, Field(description="the TTFT p95 alert, in seconds")] = None


class ReplicaRange(StrictModel):
    """How many workers of one role Dynamo's Planner may run."""

    # The Planner's min_endpoint (prefill_min_endpoint, decode_min_endpoint for a role): at least one, so that
    # the graph always answers (a worker started from nothing would keep a request waiting minutes).
    min_replicas: Annotated[PositiveInt, Field(description="the fewest workers: the Planner's min_endpoint")] = 1
    max_replicas: Annotated[
        PositiveInt, Field(description="the most workers: with their GPUs, the Planner's max_gpu_budget")
    ]


class AutoscalingConfig(StrictModel):
    """Dynamo's SLA Planner scales the workers between their bounds to meet the latency targets (keys
    named after the Planner's own fields). An aggregated recipe's workers take minReplicas and maxReplicas;
    a disaggregated one's, prefill and decode. The deployment's `replicas` is then refused: the Planner
    sets them, starting from one worker per role."""

    ttft_ms: Annotated[PositiveFloat, Field(description="the time-to-first-token target, in ms: the Planner's ttft_ms")]
    itl_ms: Annotated[PositiveFloat, Field(description="the inter-token latency target, in ms: the Planner's itl_ms")]
    min_replicas: Annotated[
        PositiveInt | None, Field(description="aggregated recipes: the fewest workers (the Planner's min_endpoint)")
    ] = None
    max_replicas: Annotated[
        PositiveInt | None, Field(description="aggregated recipes: the most workers (with their GPUs, max_gpu_budget)")
    ] = None
    prefill: Annotated[ReplicaRange | None, Field(description="disaggregated recipes: the prefill workers' bounds")] = (
        None
    )
    decode: Annotated[ReplicaRange | None, Field(description="disaggregated recipes: the decode workers' bounds")] = (
        None
    )


class DeploymentConfig(StrictModel):
    """One serving graph: a recipe on a node pool."""

    recipe: Annotated[str, Field(description="a recipe of configs/recipes/, for the pool's hardware")]
    node_pool: Annotated[
        str | None,
        Field(description="the pool the workers run on: required by a GPU recipe; a cpu recipe takes none"),
    ] = None
    # Where the recipe allows several sizes
    gpus: Annotated[PositiveInt | None, Field(description="the GPUs each worker gets")] = None
    # Refused beside autoscaling, which gives the replicas to the Planner (core/resolve/autoscaling.py).
    replicas: Annotated[PositiveInt, Field(description="the worker replicas")] = 1
    router_mode: Annotated[
        Literal["round-robin", "kv"] | None,
        Field(
            description="the Dynamo frontend's router (default: kv where a role can have more than one worker, "
            "through replicas or autoscaling; else round-robin)"
        ),
    ] = None
    autoscaling: Annotated[
        AutoscalingConfig | None,
        Field(description="Dynamo's SLA Planner scales the workers to latency targets (default: a fixed size)"),
    ] = None
    overrides: Annotated[
        dict[str, Any],
        Field(
            description="engine-config keys deep-merged into the recipe's ({prefill: ..., decode: ...} for a "
            "disaggregated recipe), each checked against TensorRT-LLM's fields"
        ),
    ] = {}
    benchmark: Annotated[BenchmarkConfig, Field(description="the opt-in aiperf Job")] = BenchmarkConfig()
    # How long `pulumi up` waits for the graph to be Ready: pulling the runtime image and loading
    # the model, which [dynamo-recipe-gptoss] puts at 15-30 minutes. Twice that by default.
    ready_timeout_minutes: Annotated[
        PositiveInt, Field(description="how long `pulumi up` waits for the graph to be Ready, in minutes")
    ] = 60
    endpoint: Annotated[EndpointConfig, Field(description="how clients reach the deployment")] = EndpointConfig()
    alerts: Annotated[AlertsConfig, Field(description="alert thresholds (observability.enabled)")] = AlertsConfig()


class NetworkPoliciesConfig(StrictModel):
    """NetworkPolicies for the workloads (and, on a created cluster, the VPC CNI enforcing them).
    Default: on when an endpoint is internal or public (secure by default); `false` opts out, with a warning."""

    enabled: Annotated[
        bool | None,
        Field(description="NetworkPolicies (default: on when an endpoint is internal or public; false warns)"),
    ] = None


class ObservabilityConfig(StrictModel):
    """kube-prometheus-stack (Prometheus, Alertmanager, Grafana), DCGM exporter, Dynamo's and our
    dashboards and alert rules."""

    enabled: Annotated[bool, Field(description="install the observability stack")] = False
    namespace: Annotated[DnsLabel, Field(description="its namespace")] = "monitoring"
    retention: Annotated[Retention, Field(description="how long Prometheus keeps metrics (12h, 15d, 2w)")] = "15d"
    storage_size: Annotated[Size, Field(description="Prometheus' volume, on the stack's block StorageClass")] = "50Gi"


def stack_config_keys() -> list[str]:
    """The stack config's top-level keys, as a stack file spells them (secrets are read apart)."""
    return [field.alias or name for name, field in StackConfig.model_fields.items()]


class StackConfig(StrictModel):
    """Every `gpt-oss-infra:` key of a stack file."""

    environment: Annotated[DnsLabel, Field(description="dev, staging, prod, ...: tagged for cost reports and policies")]
    release: Annotated[Release, Field(description="everything promotion moves between stacks")]
    cluster: Annotated[ClusterConfig, Field(description="the cluster, by kind: eks or existing")]
    node_pools: Annotated[
        dict[DnsLabel, NodePoolConfig],
        Field(description="the GPU node pools by name (none for a stack of cpu recipes only)"),
    ] = {}
    model_cache: Annotated[ModelCacheConfig, Field(description="the weights' shared volume")] = ModelCacheConfig()
    deployments: Annotated[
        dict[DeploymentName, DeploymentConfig],
        Field(
            description="the serving graphs by name (a DNS label of at most 40 characters: objects are named after it)"
        ),
    ] = {}
    namespace: Annotated[DnsLabel, Field(description="the serving workloads' namespace")] = "gpt-oss"
    platform: Annotated[PlatformConfig, Field(description="the Dynamo platform")] = PlatformConfig()
    network_policies: Annotated[NetworkPoliciesConfig, Field(description="NetworkPolicies")] = NetworkPoliciesConfig()
    observability: Annotated[ObservabilityConfig, Field(description="metrics, dashboards, alerts")] = (
        ObservabilityConfig()
    )

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
