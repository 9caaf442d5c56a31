"""The public building blocks: a GPU node pool, the Dynamo platform, the model cache and one gpt-oss
deployment, each with user-level arguments, to add to a cluster a program already has.

Each block writes its arguments as the stack config they amount to (core.inputs.block_args),
renders it with the stack's own pipeline, and refuses bad arguments by name before registering
anything; its resources are the ones GptOssStack makes for the same settings (the same add_* functions).
This module is analyzed for the component schema: no postponed annotations here.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, TypeVar

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.api_keys import api_keys
from gpt_oss_infra.components.arguments import refusal, refuse_plaintext, refuse_unknown
from gpt_oss_infra.components.aws.build import register
from gpt_oss_infra.components.aws.lookups import account_facts, aws_provider_of
from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.gateway_resources import GatewayController, GatewayControllerArgs
from gpt_oss_infra.components.kubernetes import resource_args
from gpt_oss_infra.components.model_cache_resources import StackModelCacheArgs, add_model_cache
from gpt_oss_infra.components.platform_resources import add_dynamo_platform
from gpt_oss_infra.components.serving import DynamoServingArgs, add_serving
from gpt_oss_infra.components.targets.target import FileSystemRef
from gpt_oss_infra.components.teardown_resources import TeardownArgs, TeardownGuards
from gpt_oss_infra.core.checks.aws_contract import aws_refusals
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs import block_args
from gpt_oss_infra.core.inputs.catalog import Catalog, load_catalog
from gpt_oss_infra.core.render import gateway
from gpt_oss_infra.core.render.aws.resources import gpu_node_pool
from gpt_oss_infra.core.render.cluster_plan import eks_plan
from gpt_oss_infra.core.render.labels import POOL_LABEL
from gpt_oss_infra.core.render.ownership import owner_of
from gpt_oss_infra.core.render.stack_objects import Stack, model_cache_guards, on_callers_file_system, teardown_guards
from gpt_oss_infra.core.stack import build_stack

T = TypeVar("T")


class GpuNodePoolArgs(TypedDict):
    cluster_name: pulumi.Input[str]
    """The name of the EKS cluster the nodes join (`cluster.name`); where EFA needs them, its VPC and
    cluster security group are read from EKS."""
    subnet_ids: pulumi.Input[list[pulumi.Input[str]]]
    """The cluster's private subnets the nodes may use. The node group gets those in zones where EC2
    offers the instance type (in `availability_zone` alone where the pool pins one), and an EFA pool
    without a reservation the first of them (its cluster placement group lives in one zone)."""
    hardware: str
    """A hardware type of the catalog (configs/hardware.yaml): h100, h200, b200 or gb200."""
    nodes: int
    """How many nodes (0 keeps an empty group ready to scale)."""
    capacity_type: NotRequired[str | None]
    """ON_DEMAND (the default), SPOT or CAPACITY_BLOCK (with capacity_reservation_id)."""
    capacity_reservation_id: NotRequired[str | None]
    """The Capacity Block or On-Demand Capacity Reservation the nodes run in (cr-...)."""
    instance_type: NotRequired[str | None]
    """One of the hardware's instance types; default: its first."""
    availability_zone: NotRequired[str | None]
    """The zone the nodes must be in (a reservation's); default: any of the subnets' where EC2 offers
    the instance type."""
    efa: NotRequired[bool | None]
    """EFA network interfaces on every node, for KV-cache transfers across nodes (default: off)."""
    disk_size_gib: NotRequired[int | None]
    """The root volume in GiB (default 500: runtime images are large)."""
    node_role_arn: NotRequired[pulumi.Input[str] | None]
    """The IAM role the nodes join with (your other node groups' role); default: one made here with the
    AWS-managed worker, ECR and VPC CNI policies (the CNI uses the node's role unless it has its own
    identity through IRSA or Pod Identity)."""
    environment: NotRequired[str | None]
    """Tagged on the node group for cost reports and policies (default: dev)."""
    region: NotRequired[str | None]
    """The region of the AWS provider the pool is made with (default: aws:region): the offline checks
    are for it. Pass that provider in `opts.providers`, and EC2 is asked through it too."""


class GpuNodePool(Component):
    """An EKS managed node group of one catalog hardware type, on a cluster of the program's: the
    hardware's AMI and instance type, the GPU taint and the labels a GptOssDeployment selects by
    (`node_pool` = this pool's name), an IMDSv2-only launch template with an encrypted root volume, and
    where asked EFA interfaces, a cluster placement group and a Capacity Block's scaling schedule.
    The instance type, its offering in the region, EFA interfaces and a reservation are checked
    against EC2 before anything is registered."""

    node_group_name: pulumi.Output[str]
    """The managed node group's name in EKS."""
    node_labels: pulumi.Output[dict[str, str]]
    """The labels every node of the pool carries."""

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_unknown("GpuNodePool", name, args, GpuNodePoolArgs)
        catalog = load_catalog()
        region = args.get("region") or pulumi.Config("aws").get("region")
        fragment = block_args.node_pool(name, dict(args))
        if not region:  # EC2 is asked about the instance type in the region the nodes are made in
            raise refusal("GpuNodePool", name, ConfigError([Problem("region", _NO_REGION)]))
        stack = _rendered("GpuNodePool", name, fragment, catalog, region=region)
        config = stack.config
        # Before this component exists, EC2 is asked through the provider its children will use.
        facts = _refused(
            "GpuNodePool",
            name,
            fragment,
            lambda: account_facts(stack, pulumi.InvokeOptions(provider=aws_provider_of(opts))),
        )
        plan = _refused(
            "GpuNodePool",
            name,
            fragment,
            lambda: eks_plan(
                config, stack.pools, stack.efa_pools, catalog.addon_versions[config.cluster.kubernetes_version], facts
            ),
        )
        assert plan.eks is not None, "eks_plan decides the node groups"
        spec = plan.eks.groups[1]  # the system group is the cluster's, not this pool's
        resources = gpu_node_pool(name, spec, config.environment, with_role=args.get("node_role_arn") is None)
        # What AWS would refuse of them, under the argument that holds the value.
        given: dict[str, Any] = {"cluster_name": args["cluster_name"], "node_role_arn": args.get("node_role_arn")}
        if refused := aws_refusals(resources, dict(args), given=given):
            raise refusal("GpuNodePool", name, ConfigError(refused))
        for warning in plan.warnings:
            pulumi.log.warn(fragment.warning(warning))
        super().__init__("gpt-oss-infra:index:GpuNodePool", name, None, opts)
        # What a GptOssDeployment of this program that names this pool (node_pool) is checked against.
        pool_config = config.node_pools[name]
        _pools_of_this_program()[name] = block_args.PoolFacts(
            pool_config.hardware, pool_config.nodes, {POOL_LABEL: name}
        )
        on_this = pulumi.InvokeOutputOptions(parent=self)
        zones = [spec.availability_zone] if spec.availability_zone else sorted(facts.offered_zones[spec.instance_type])
        given["subnet_ids"] = usable_subnets(args["subnet_ids"], zones, spec.instance_type, on_this)
        if spec.network_interfaces:  # EFA: the cluster's network, as EKS has it
            network = aws.eks.get_cluster_output(name=args["cluster_name"], opts=on_this).vpc_config
            given |= {"vpc_id": network.vpc_id, "cluster_security_group_id": network.cluster_security_group_id}
        built = register(self, resources, {}, given)
        group = built[f"{name}-nodes"]
        assert isinstance(group, aws.eks.NodeGroup)
        # The node group's name is known only once the provider is known to build where it was checked.
        self.node_group_name = pulumi.Output.all(
            group.node_group_name, _same_region(aws_provider_of(opts), region)
        ).apply(lambda both: both[0])
        self.node_labels = group.labels.apply(lambda labels: dict(labels or {}))
        self.register_outputs({"nodeGroupName": self.node_group_name, "nodeLabels": self.node_labels})


def _same_region(provider: pulumi.ProviderResource | None, region: str) -> pulumi.Output[str]:
    """`region`, once the AWS provider the pool is made with is known to build there: one pool is never
    checked for one region and made in another (an error of preview and up otherwise)."""
    if not isinstance(provider, aws.Provider):
        return pulumi.Output.from_input(region)

    def same(provider_region: str | None) -> str:
        if provider_region and provider_region != region:
            raise ValueError(
                f"GpuNodePool: region is {region!r} but the AWS provider in opts makes the pool in "
                f"{provider_region!r}: give region={provider_region!r} (or a provider of {region!r})"
            )
        return region

    return provider.region.apply(same)


def usable_subnets(
    subnet_ids: pulumi.Input[list[pulumi.Input[str]]],
    zones: list[str],
    instance_type: str,
    opts: pulumi.InvokeOutputOptions,
) -> pulumi.Output[list[str]]:
    """The given subnets in `zones`, in the order given (EC2 knows each subnet's zone); none is an error
    of `up`, since the subnets may be known only then."""
    given = pulumi.Output.from_input(subnet_ids)
    filters: list[Any] = [{"name": "subnet-id", "values": given}, {"name": "availability-zone", "values": zones}]
    found = aws.ec2.get_subnets_output(filters=filters, opts=opts).ids

    def in_zones(both: list[list[str]]) -> list[str]:
        wanted, in_zone = both
        usable = [subnet for subnet in wanted if subnet in in_zone]
        if not usable:
            raise ValueError(
                f"none of the subnets {', '.join(wanted)} is in a zone where the pool can run {instance_type} "
                f"({', '.join(zones)}): give subnet_ids in those zones"
            )
        return usable

    return pulumi.Output.all(given, found).apply(in_zones)


class DynamoPlatformArgs(TypedDict):
    dynamo_release: NotRequired[str | None]
    """A Dynamo release of configs/dynamo/versions.yaml (default: configs/components.yaml's, 1.6.1)."""
    namespace: NotRequired[str | None]
    """The platform's namespace, created here (default: dynamo-system)."""
    block_storage_class: NotRequired[str | None]
    """The ReadWriteOnce StorageClass of the bundled NATS' volume, where the release bundles NATS."""
    kubernetes_version: NotRequired[str | None]
    """The cluster's Kubernetes version the objects are checked against (default 1.36)."""
    ngc_api_key: NotRequired[pulumi.Input[str] | None]
    """An NGC API key (a secret): the pull secret for nvcr.io; none where images pull anonymously."""
    gateway: NotRequired[bool | None]
    """Also install Envoy Gateway and its GatewayClass, once per cluster, which a GptOssDeployment's
    `endpoint` needs (default: off)."""
    load_balancer_controller: NotRequired[bool | None]
    """The cluster runs the AWS Load Balancer Controller, so gateways get NLBs: Envoy Gateway's
    namespace is labelled for the controller's pod readiness gate, and `destroy` waits for the NLBs to
    be gone; make this component depend on the controller (default: off)."""


class DynamoPlatform(Component):
    """The Dynamo platform at a supported release: its namespace and the pinned dynamo-platform Helm
    release, with the release's CRDs applied as that release requires (by this component up to 1.2.1,
    by the operator's own crd-apply init container from 1.3), and with `gateway`, Envoy Gateway for the
    deployments' endpoints. Ready once the operator (and the gateway controller) is: make each
    GptOssDeployment depend on it. Kubernetes resources go through the program's provider (pass it in
    `opts.providers`). On destroy it waits for its NLBs and volumes to be gone, which needs the cluster's
    nodes, CSI drivers and load balancer controller until then: make it depend on them (`depends_on`)."""

    namespace: pulumi.Output[str]
    """The platform's namespace."""
    version: pulumi.Output[str]
    """The Dynamo release installed."""

    def __init__(self, name: str, args: DynamoPlatformArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_unknown("DynamoPlatform", name, args, DynamoPlatformArgs)
        refuse_plaintext("DynamoPlatform", name, args, ["ngc_api_key"])
        ngc_api_key = args.get("ngc_api_key")
        catalog = load_catalog()
        fragment = block_args.platform(name, dict(args))
        stack = _rendered("DynamoPlatform", name, fragment, catalog, with_ngc_key=ngc_api_key is not None)
        software = gateway.cluster_gateway_software(stack.config, catalog.charts) if args.get("gateway") else None
        guarded = teardown_guards(stack.config, software, None, catalog)
        super().__init__("gpt-oss-infra:index:DynamoPlatform", name, None, opts)
        _platforms_of_this_program()[name] = PlatformFacts(
            gateway=software is not None, load_balancer_controller=bool(args.get("load_balancer_controller"))
        )
        # What `pulumi destroy` waits on (core/render/teardown.py): the platform's volumes and, with the
        # cluster's load balancer controller, the gateways' NLBs, before the program's cluster goes.
        guards = TeardownGuards(f"{name}-teardown", TeardownArgs(guarded), opts=self.child_opts()) if guarded else None
        objects = stack.platform
        release = add_dynamo_platform(
            self,
            name,
            objects,
            pulumi.Output.secret(ngc_api_key) if ngc_api_key else None,
            after=[guards.volumes_gone] if guards and guards.volumes_gone else [],
        )
        if software is not None:
            # The cluster's load balancer controller is the program's: make this component depend on it.
            GatewayController(
                f"{name}-gateway",
                GatewayControllerArgs(
                    software, [], guarded.load_balancers_gone if guarded else None, guards.access if guards else []
                ),
                opts=self.child_opts(),
            )
        # Read from the release: whatever uses them waits for the platform.
        self.namespace = release.namespace.apply(str)
        self.version = release.version.apply(str)
        self.register_outputs({"namespace": self.namespace, "version": self.version})


class ModelCacheArgs(TypedDict):
    namespace: str
    """The namespace of the deployments that load the model (it must exist)."""
    storage: NotRequired[str | None]
    """existing (the default: a ReadWriteMany StorageClass of the cluster), efs or fsx-lustre."""
    storage_class_name: NotRequired[str | None]
    """The ReadWriteMany StorageClass: with storage existing, the cluster's; with efs or fsx-lustre, the
    one made here (default gpt-oss-efs or gpt-oss-fsx-lustre: a cluster-wide name, so give each cache of
    a cluster its own)."""
    size: NotRequired[str | None]
    """The volume's size (default 400Gi)."""
    file_system_id: NotRequired[pulumi.Input[str] | None]
    """The EFS (fs-...) or FSx for Lustre file system, with storage efs or fsx-lustre."""
    fsx_dns_name: NotRequired[pulumi.Input[str] | None]
    """The FSx for Lustre file system's DNS name, with storage fsx-lustre."""
    fsx_mount_name: NotRequired[pulumi.Input[str] | None]
    """The FSx for Lustre file system's mount name, with storage fsx-lustre."""
    fsx_throughput_per_tib: NotRequired[int | None]
    """The FSx for Lustre file system's throughput per TiB (125, 250, 500 or 1000), for its check."""
    hf_token: NotRequired[pulumi.Input[str] | None]
    """A Hugging Face token for the download (a secret); none for a public model."""
    dynamo_release: NotRequired[str | None]
    """The Dynamo release of the deployments (their runtime image waits for the cache)."""
    model_revision: NotRequired[str | None]
    """The Hugging Face commit of openai/gpt-oss-120b to download (default: the one the stacks pin)."""
    kubernetes_version: NotRequired[str | None]
    """The cluster's Kubernetes version the objects are checked against (default 1.36)."""


class ModelCache(Component):
    """The shared volume of a namespace's deployments and the pinned download of one model revision
    into it: its claim (never replaced), on a StorageClass made here for EFS (or a static volume for FSx
    for Lustre) or an existing one, and the download Job, which `up` waits for: make each
    GptOssDeployment depend on this component. Kubernetes resources go through the program's provider.
    On EFS, `destroy` waits (a teardown guard in `<namespace>-teardown`) for the EFS CSI driver to delete
    the claim's access point: make this component depend on the cluster's nodes and that driver."""

    claim_name: pulumi.Output[str]
    """The PersistentVolumeClaim the deployments mount."""
    download_job: pulumi.Output[str]
    """The download Job's name."""

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_unknown("ModelCache", name, args, ModelCacheArgs)
        refuse_plaintext("ModelCache", name, args, ["hf_token"])
        catalog = load_catalog()
        hf_token = args.get("hf_token")
        fragment = block_args.model_cache(name, dict(args))
        file_system = _file_system("ModelCache", name, args)
        stack = _rendered("ModelCache", name, fragment, catalog, with_hf_token=hf_token is not None)
        objects = on_callers_file_system(stack.model_cache)
        guarded = model_cache_guards(stack.config, objects, catalog)
        super().__init__("gpt-oss-infra:index:ModelCache", name, None, opts)
        # What `pulumi destroy` waits on: the EFS CSI driver deleting the claim's access point.
        guards = TeardownGuards(f"{name}-teardown", TeardownArgs(guarded), opts=self.child_opts()) if guarded else None
        cache = add_model_cache(
            self,
            name,
            StackModelCacheArgs(
                objects=objects,
                file_system=file_system,
                hf_token=pulumi.Output.secret(hf_token) if hf_token else None,
                download_timeout=f"{catalog.model_download.active_deadline_seconds}s",
            ),
            after=[guards.volumes_gone] if guards and guards.volumes_gone else [],
        )
        # Read from the claim and the Job: whatever uses them waits for the cache.
        self.claim_name = cache.claim.metadata["name"]
        self.download_job = cache.download.metadata["name"]
        self.register_outputs({"claimName": self.claim_name, "downloadJob": self.download_job})


class Endpoint(TypedDict):
    exposure: str
    """internal (an internal NLB, or the in-cluster gateway) or public (an internet-facing NLB with TLS)."""
    hostname: NotRequired[str | None]
    """The name clients use, on the certificate."""
    certificate_arn: NotRequired[str | None]
    """The ACM certificate the NLB ends TLS with (required for public)."""
    allowed_cidrs: NotRequired[list[str] | None]
    """Who may reach the NLB (its security group); default: anywhere for public, the controller's
    default for internal (set it to your VPC's CIDR)."""
    requests_per_minute: NotRequired[int | None]
    """Requests per minute per API key and gateway replica (default 60); 429 beyond it."""
    client_requests_per_minute: NotRequired[dict[str, int] | None]
    """A client's own limit instead, by client name (at most 15)."""


class GptOssDeploymentArgs(TypedDict):
    namespace: str
    """The namespace of the ModelCache the workers load from (it must exist)."""
    recipe: NotRequired[str | None]
    """A recipe by name (configs/recipes/), e.g. h200-agg-low-latency; or give recipe_definition."""
    recipe_definition: NotRequired[dict[str, Any] | None]
    """A recipe as an object: the fields of a configs/recipes/ file, checked like one."""
    gpus: NotRequired[int | None]
    """GPUs per worker, where the recipe allows several sizes."""
    replicas: NotRequired[int | None]
    """Copies of the recipe's workers (default 1)."""
    node_pool: NotRequired[str | None]
    """The GpuNodePool (its name) whose nodes run the workers; default: this deployment's name."""
    node_selector: NotRequired[dict[str, str] | None]
    """The GPU nodes' labels, for nodes no GpuNodePool made (instead of the pool's label)."""
    pool_nodes: NotRequired[int | None]
    """How many nodes that pool has, for the placement check (default 1)."""
    router_mode: NotRequired[str | None]
    """The frontend's router: round-robin (the default) or kv."""
    overrides: NotRequired[dict[str, Any] | None]
    """Engine-config keys deep-merged into the recipe's, checked against TensorRT-LLM's fields."""
    ready_timeout_minutes: NotRequired[int | None]
    """How long `up` waits for the graph to be Ready (default 60)."""
    uses_hf_token: NotRequired[bool | None]
    """Whether the namespace's ModelCache was given an hf_token (the workers read it too)."""
    dynamo_release: NotRequired[str | None]
    """The DynamoPlatform's release (default: configs/components.yaml's, 1.6.1)."""
    runtime_image: NotRequired[str | None]
    """The workers' image; default: the release's runtime for the recipe's backend."""
    model_revision: NotRequired[str | None]
    """The ModelCache's model revision."""
    kubernetes_version: NotRequired[str | None]
    """The cluster's Kubernetes version the objects are checked against (default 1.36)."""
    endpoint: NotRequired[Endpoint | None]
    """Reach the deployment from outside the cluster through an authenticating gateway (API keys, rate
    limits); needs a DynamoPlatform with `gateway`. Default: its in-cluster Service only."""
    api_keys: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]] | None]
    """With `endpoint`: the gateway's API keys by client name (each value a secret)."""
    api_clients: NotRequired[list[str] | None]
    """The client names of api_keys, where api_keys is an output (another resource's, or from another
    Pulumi language): they name the gateway's keys and rate limits before anything is registered."""
    load_balancer_controller: NotRequired[bool | None]
    """With `endpoint`: the cluster runs the AWS Load Balancer Controller, so the gateway gets an NLB;
    without it, an internal endpoint is the gateway's in-cluster Service (default: off)."""
    network_policies: NotRequired[bool | None]
    """NetworkPolicies that admit to the frontend only the gateway and the smoke test, and to the
    workers only their own graph (default: on with an endpoint, so nothing goes around its API keys)."""


class GptOssDeployment(Component):
    """gpt-oss-120b served by one DynamoGraphDeployment: the recipe resolved (GPUs per worker,
    overrides), its engine config checked against TensorRT-LLM's fields, its workers fitted to the
    GPUs and placed on the pool's nodes, then the engine ConfigMap, the graph and its smoke test,
    which `up` waits for; with `endpoint`, its gateway, which the smoke test goes through with an API
    key. Depend on the DynamoPlatform and the ModelCache (`opts.depends_on`)."""

    endpoint: pulumi.Output[str]
    """The OpenAI-compatible URL inside the cluster."""
    serving_check: pulumi.Output[str]
    """The smoke test's proof of service once `up` ends."""
    url: pulumi.Output[str]
    """How clients call it: the gateway's URL with `endpoint`, else the in-cluster endpoint."""

    def __init__(self, name: str, args: GptOssDeploymentArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_unknown("GptOssDeployment", name, args, GptOssDeploymentArgs)
        refuse_unknown("GptOssDeployment", name, args.get("endpoint") or {}, Endpoint, within="endpoint.")
        refuse_plaintext("GptOssDeployment", name, args, ["api_keys"])
        if unguarded := _unguarded_load_balancer(args):
            raise refusal("GptOssDeployment", name, ConfigError([unguarded]))
        uses_hf_token = bool(args.get("uses_hf_token"))
        keys = _refused("GptOssDeployment", name, None, lambda: api_keys(args.get("api_keys"), args.get("api_clients")))
        fragment, catalog = _refused(
            "GptOssDeployment",
            name,
            None,
            lambda: block_args.deployment(name, dict(args), load_catalog(), _pools_of_this_program()),
        )
        stack = _rendered(
            "GptOssDeployment",
            name,
            fragment,
            catalog,
            with_hf_token=uses_hf_token,
            api_key_clients=keys.clients,
        )
        for warning in stack.warnings:
            pulumi.log.warn(fragment.warning(warning))
        super().__init__("gpt-oss-infra:index:GptOssDeployment", name, None, opts)
        for policy in stack.deployment_network_policies(name):
            k8s.networking.v1.NetworkPolicy(
                f"{name}-{policy['metadata']['name'].removeprefix(f'{name}-')}",
                **resource_args(policy),
                opts=self.child_opts(),
            )
        served = add_serving(
            self,
            name,
            DynamoServingArgs(
                serving=stack.serving[0],
                gpu_nodes=None,
                # The gateway controller is the DynamoPlatform's, which this component depends on.
                api_keys=keys.values,
            ),
        )
        self.endpoint = served.endpoint
        self.serving_check = served.check
        self.url = served.outputs.get("url", served.endpoint)
        self.register_outputs({"endpoint": self.endpoint, "servingCheck": self.serving_check, "url": self.url})


_NO_REGION = "required: the region EC2 is asked in (give region, or pulumi config set aws:region <region>)"

# The GpuNodePools and DynamoPlatforms made so far, per program run (its root resource: a new one each
# run, None in a component provider, which serves one program): a GptOssDeployment's node_pool must
# name one, and its endpoint's NLB must be one its platform's teardown guard waits for.
_POOLS: dict[int, dict[str, block_args.PoolFacts]] = {}
_PLATFORMS: dict[int, dict[str, "PlatformFacts"]] = {}


@dataclass(frozen=True)
class PlatformFacts:
    """What a DynamoPlatform of this program tells a GptOssDeployment with an endpoint."""

    gateway: bool
    load_balancer_controller: bool  # its guard waits for the gateways' NLBs


def _pools_of_this_program() -> dict[str, block_args.PoolFacts]:
    return _POOLS.setdefault(id(pulumi.runtime.get_root_resource()), {})


def _platforms_of_this_program() -> dict[str, PlatformFacts]:
    return _PLATFORMS.setdefault(id(pulumi.runtime.get_root_resource()), {})


def _unguarded_load_balancer(args: GptOssDeploymentArgs) -> Problem | None:
    """An endpoint that gets an NLB while the program's gateway platform waits for none at destroy."""
    endpoint: Mapping[str, Any] = args.get("endpoint") or {}
    if not args.get("load_balancer_controller") or endpoint.get("exposure") not in ("internal", "public"):
        return None
    gateways = {name: facts for name, facts in _platforms_of_this_program().items() if facts.gateway}
    if not gateways or any(facts.load_balancer_controller for facts in gateways.values()):
        return None  # its platform is another program's, or waits for the NLBs
    names = ", ".join(repr(name) for name in gateways)
    return Problem(
        "load_balancer_controller",
        f"true here, but DynamoPlatform {names} (the gateway) was made without it: its teardown guard would not "
        "wait for this endpoint's NLB, which `pulumi destroy` would then leave behind, billing; set "
        "load_balancer_controller on the platform too",
    )


def _rendered(block: str, name: str, fragment: block_args.Fragment, catalog: Catalog, **options: Any) -> Stack:
    """The block's settings rendered by the stack's pipeline, or the run stopped naming its arguments."""
    options = {
        "with_hf_token": False,
        "owner": owner_of(pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack()),
        **options,
    }
    return _refused(block, name, fragment, lambda: build_stack(fragment.config, catalog, **options))


def _refused(block: str, name: str, fragment: block_args.Fragment | None, decide: Callable[[], T]) -> T:
    """`decide()`, or the run stopped with every problem, keyed by argument, before anything is registered."""
    try:
        return decide()
    except ConfigError as error:
        raise refusal(block, name, fragment.refusal(error) if fragment else error) from None


def _file_system(block: str, name: str, args: ModelCacheArgs) -> FileSystemRef | None:
    """The file system an EFS or FSx for Lustre cache provisions on, or the run stopped naming what is missing."""
    storage = args.get("storage") or "existing"
    needed = {"efs": ["file_system_id"], "fsx-lustre": ["file_system_id", "fsx_dns_name", "fsx_mount_name"]}
    missing = [argument for argument in needed.get(storage, []) if args.get(argument) is None]
    if missing:
        raise refusal(block, name, ConfigError([Problem(m, f"required with storage {storage}") for m in missing]))
    if storage == "existing":
        return None
    file_system_id = args.get("file_system_id")
    assert file_system_id is not None, "checked with `missing` above"
    return FileSystemRef(file_system_id, args.get("fsx_dns_name"), args.get("fsx_mount_name"))
