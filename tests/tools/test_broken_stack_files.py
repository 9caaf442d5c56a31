"""Stack files broken the way users break them, one section at a time, each planned by `make plan`
(the program on the mock engine, as `pulumi preview` runs it): refused with exit 1, naming the stack
file, the exact key path and what is allowed, with nothing written and no traceback. The first run
of these found a retention refused with a bare regular expression (now says what Prometheus takes); a
stack file written from README alone (issue 32) found the existing-cluster cases, the model's context and
the bare bounds ("Input should be greater than 0") kept here. `says` is the message's start, or a tuple of
its start and parts that must follow on the same line (a did-you-mean after a list that grows)."""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.support import MODELLED_BY, example_entries
from tests.tools.test_bad_inputs import FILE, deployment, dev_with, planned

SECURE = {"secure": "v1:AAAA"}  # as `pulumi config set --secret` writes a value
CERTIFICATE = "arn:aws:acm:us-east-2:123456789012:certificate/00000000-0000-4000-8000-000000000000"


def cluster(entries) -> dict:
    return entries["gpt-oss-infra:cluster"]


def pool(entries) -> dict:
    return entries["gpt-oss-infra:nodePools"]["gpu"]


def release(entries) -> dict:
    return entries["gpt-oss-infra:release"]


def with_keys(entries, **endpoint) -> None:
    """An internal endpoint with the API keys it needs, then `endpoint`'s settings."""
    entries["gpt-oss-infra:apiKeys"] = {"ci": SECURE}
    deployment(entries)["endpoint"] = {"exposure": "internal"} | endpoint


def as_existing(entries, **cluster_keys) -> dict:
    """The dev stack file on an existing cluster, as README's Stack config reference has one: its GPU nodes
    selected by the label NVIDIA's GPU feature discovery sets, a StorageClass for the model cache."""
    entries["gpt-oss-infra:cluster"] = {"kind": "existing", "name": "lab", "blockStorageClassName": "gp3"}
    entries["gpt-oss-infra:cluster"] |= cluster_keys
    entries["gpt-oss-infra:modelCache"] = {"storage": "existing", "storageClassName": "shared-rwx"}
    pool(entries).pop("capacityType")
    pool(entries)["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-H200"}
    return entries


def autoscaled(entries, gpus: int = 8, **autoscaling) -> None:
    """The dev deployment scaled by Dynamo's Planner, with the Prometheus it reads."""
    deployment(entries)["gpus"] = gpus
    deployment(entries)["autoscaling"] = {"ttftMs": 500, "itlMs": 20} | autoscaling
    entries["gpt-oss-infra:observability"] = {"enabled": True}


def disaggregated(entries, **autoscaling) -> None:
    """The dev deployment as B200's disaggregated 1P4D recipe, scaled by Dynamo's Planner."""
    pool(entries)["hardware"] = "b200"
    autoscaled(entries, **autoscaling)
    deployment(entries).pop("gpus")
    deployment(entries)["recipe"] = "b200-disagg-1p4d"


def elastic(entries, **scaling) -> None:
    """The dev pool's nodes provisioned by Karpenter, between `scaling`'s bounds, instead of a fixed count."""
    pool(entries).pop("nodes")
    pool(entries)["scaling"] = {"maxNodes": 2} | scaling


def cpu_pool(entries, **pool) -> None:
    """An elastic cpu pool beside the dev stack's GPU pool, with a mocker graph on it: refused for what the
    cases below break before the stack's two backends (mocker and trtllm) are compared."""
    entries["gpt-oss-infra:nodePools"]["workers"] = {
        "hardware": "cpu",
        "instanceType": "m7i.2xlarge",
        "scaling": {"maxNodes": 1},
    } | pool
    entries["gpt-oss-infra:deployments"]["mock"] = {"recipe": "trial-mocker-agg", "nodePool": "workers"}


def on_release(entries, dynamo: str) -> None:
    release(entries).update(dynamo=dynamo, runtimeImage=f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{dynamo}")


CAPACITY_BLOCK = {"capacityType": "CAPACITY_BLOCK", "capacityReservationId": "cr-0123456789abcdef0"}
BROKEN = {
    # cluster
    "cluster name with capitals": (
        lambda e: cluster(e).update(name="GptOss"),
        "cluster.name",
        "'GptOss' must be a DNS label: lowercase letters, digits and '-', at most 63 characters",
    ),
    "a Kubernetes version without pinned add-ons": (
        lambda e: cluster(e).update(kubernetesVersion="1.20"),
        "cluster.kubernetesVersion",
        "EKS add-on versions are pinned for 1.33, 1.34, 1.35, 1.36 (configs/eks-addons.yaml); "
        "pin them for 1.20 there first",
    ),
    "a cluster kind we do not make": (
        lambda e: cluster(e).update(kind="gke"),
        "cluster",
        "Input tag 'gke' found using 'kind' does not match any of the expected tags: 'eks', 'existing'",
    ),
    "an old stack file: cluster.create beside kind": (
        lambda e: cluster(e).update(create=True),
        "cluster.create",
        "deprecated and replaced by kind: remove it",
    ),
    "a public API endpoint open to nobody in particular": (
        lambda e: cluster(e).pop("publicAccessCidrs"),
        "cluster.publicAccessCidrs",
        "required while endpointPublicAccess is true: the CIDRs allowed to reach the API",
    ),
    "no system nodes": (
        lambda e: cluster(e).update(systemNodes={"nodes": 0}),
        "cluster.systemNodes.nodes",
        "must be at least 1 (got 0): the CPU nodes for the frontend, the operator, NATS and jobs",
    ),
    "an instance type EC2 does not have": (
        lambda e: cluster(e).update(systemNodes={"instanceType": "m7i.huge"}),
        "cluster.systemNodes.instanceType",
        "'m7i.huge' is not one of the 1437 EC2 instance types botocore's ec2 model lists (closest: m7i.large,",
    ),
    "one availability zone": (
        lambda e: cluster(e).update(network={"availabilityZones": 1}),
        "cluster.network.availabilityZones",
        "must be at least 2 (got 1): the availability zones the VPC spans (EKS needs subnets in two)",
    ),
    "a VPC CIDR that is no CIDR": (
        lambda e: cluster(e).update(network={"vpcCidr": "10.0.0.0/33"}),
        "cluster.network.vpcCidr",
        "'10.0.0.0/33' is not a CIDR block like 10.0.0.0/16",
    ),
    # node pools
    "hardware the catalog lacks": (
        lambda e: pool(e).update(hardware="a100"),
        "nodePools.gpu.hardware",
        "unknown hardware 'a100'; one of h100, h200, b200, gb200",
    ),
    "a negative node count": (
        lambda e: pool(e).update(nodes=-1),
        "nodePools.gpu.nodes",
        "must be at least 0 (got -1): the GPU nodes in the pool",
    ),
    "a capacity type EKS has not": (
        lambda e: pool(e).update(capacityType="SPOT_ONLY"),
        "nodePools.gpu.capacityType",
        "Input should be 'ON_DEMAND', 'SPOT' or 'CAPACITY_BLOCK' (got 'SPOT_ONLY'; did you mean 'SPOT'?)",
    ),
    "a Capacity Block without its zone": (
        lambda e: pool(e).update(CAPACITY_BLOCK),
        "nodePools.gpu.availabilityZone",
        "required with capacityType CAPACITY_BLOCK: the reservation's AZ (e.g. us-east-2b)",
    ),
    "a Capacity Block in another region's zone": (
        lambda e: pool(e).update(CAPACITY_BLOCK | {"availabilityZone": "us-west-2a"}),
        "nodePools.gpu.availabilityZone",
        "'us-west-2a' is not an availability zone of us-east-2",
    ),
    "a root volume too small for the runtime image": (
        lambda e: pool(e).update(diskSizeGiB=50),
        "nodePools.gpu.diskSizeGiB",
        "must be at least 100 (got 50): each GPU node's root volume, in GiB: runtime images are large",
    ),
    "an instance type of other GPUs": (
        lambda e: pool(e).update(instanceType="p5.48xlarge"),
        "nodePools.gpu.instanceType",
        "'p5.48xlarge' does not carry h200; one of p5en.48xlarge, p5e.48xlarge",
    ),
    # elastic pools (issue 35): each refusal an elastic pool's bounds can meet
    "a pool both fixed and elastic": (
        lambda e: pool(e).update(scaling={"maxNodes": 2}),
        "nodePools.gpu.scaling",
        "not with nodes: give a fixed number of nodes, or scaling's bounds",
    ),
    "a pool of no size": (
        lambda e: pool(e).pop("nodes"),
        "nodePools.gpu.nodes",
        "required: the pool's number of nodes, or (on a created cluster) scaling: {minNodes, maxNodes}",
    ),
    "an elastic pool of an existing cluster": (
        lambda e: (as_existing(e), elastic(e)),
        "nodePools.gpu.scaling",
        "only for a cluster the program creates (kind: eks), where Karpenter provisions the pool",
    ),
    "an elastic pool in a Capacity Block": (
        lambda e: (elastic(e), pool(e).update(CAPACITY_BLOCK | {"availabilityZone": "us-east-2b"})),
        "nodePools.gpu.scaling",
        "not with a Capacity Block or reservation: its nodes are a fixed number",
    ),
    "an elastic pool's minimum above its maximum": (
        lambda e: elastic(e, minNodes=3),
        "nodePools.gpu.scaling.minNodes",
        "3 is more than maxNodes 2",
    ),
    "an elastic pool's floor its graphs never hold": (
        lambda e: elastic(e, minNodes=2),
        "nodePools.gpu.scaling.minNodes",
        "2, but the pool's graphs at their fewest workers hold 1 node(s), and Karpenter keeps no node",
    ),
    "Planners asking more than an elastic pool's budget": (
        lambda e: (elastic(e), autoscaled(e, maxReplicas=3)),
        "deployments.gpt-oss.autoscaling.maxReplicas",
        (
            "pool gpu (at most 2 (scaling.maxNodes) x p5en.48xlarge, 8 GPUs each, 16 in all) cannot place",
            "raise maxNodes or reduce maxReplicas",
        ),
    ),
    "an elastic Spot pool for a recipe that cannot lose a worker": (
        lambda e: (elastic(e), pool(e).update(capacityType="SPOT")),
        "nodePools.gpu.capacityType",
        "SPOT, but recipe h200-agg-low-latency does not tolerate interruption",
    ),
    "a readiness wait shorter than an elastic pool's cold start": (
        lambda e: (elastic(e), deployment(e).update(readyTimeoutMinutes=30)),
        "deployments.gpt-oss.readyTimeoutMinutes",
        "30, but on elastic pool gpu a worker may wait 15-45 minutes before it serves",
    ),
    "an elastic EFA pool without its zone": (
        lambda e: (
            disaggregated(e, prefill={"maxReplicas": 1}, decode={"maxReplicas": 1}),
            elastic(e, maxNodes=2),
        ),
        "nodePools.gpu.availabilityZone",
        "required for an elastic pool with EFA: its nodes share one cluster placement group",
    ),
    # cpu pools (issue 35: the trial's elastic pool)
    "a fixed cpu pool": (
        lambda e: (cpu_pool(e, nodes=1), e["gpt-oss-infra:nodePools"]["workers"].pop("scaling")),
        "nodePools.workers.scaling",
        "required for a cpu pool: its nodes follow its workers (fixed CPU nodes are cluster.systemNodes)",
    ),
    "a cpu pool of GPU instances": (
        lambda e: cpu_pool(e, instanceType="p5en.48xlarge"),
        "nodePools.workers.instanceType",
        "'p5en.48xlarge' is not one for a cpu pool: one of m7i.2xlarge (configs/nodes.yaml",
    ),
    "a cpu pool in a Capacity Block": (
        lambda e: cpu_pool(e, capacityType="CAPACITY_BLOCK"),
        "nodePools.workers.capacityType",
        "ON_DEMAND or SPOT for a cpu pool (Karpenter's)",
    ),
    "a cpu pool's own node selector": (
        lambda e: cpu_pool(e, nodeSelector={"team": "ml"}),
        "nodePools.workers.nodeSelector",
        "not for a cpu pool: its nodes carry gpt-oss-infra/pool: <pool>, which its workers select",
    ),
    "a cpu pool of an existing cluster": (
        lambda e: (as_existing(e), cpu_pool(e, nodes=2), e["gpt-oss-infra:nodePools"]["workers"].pop("scaling")),
        "nodePools.workers.hardware",
        "cpu is for a cluster the program creates (kind: eks), whose Karpenter provisions the pool",
    ),
    "a GPU recipe on a cpu pool": (
        lambda e: (cpu_pool(e), deployment(e).update(nodePool="workers")),
        "deployments.gpt-oss.recipe",
        "recipe h200-agg-low-latency runs on h200, but node pool workers is cpu",
    ),
    "a mocker graph on a GPU pool": (
        lambda e: (cpu_pool(e), e["gpt-oss-infra:deployments"]["mock"].update(nodePool="gpu")),
        "deployments.mock.nodePool",
        "recipe trial-mocker-agg needs no GPU: its workers run on CPU nodes; leave it out (the system nodes, or any "
        "node of an existing cluster), or name a pool of hardware cpu",
    ),
    # model cache
    "a storage kind we do not make": (
        lambda e: e["gpt-oss-infra:modelCache"].update(storage="s3"),
        "modelCache.storage",
        "Input should be 'efs', 'fsx-lustre' or 'existing'",
    ),
    "an FSx throughput FSx does not sell": (
        lambda e: e["gpt-oss-infra:modelCache"].update(storage="fsx-lustre", fsxThroughputPerTiB=300),
        "modelCache.fsxThroughputPerTiB",
        "Input should be 125, 250, 500 or 1000",
    ),
    "a size in a unit Kubernetes does not read": (
        lambda e: e["gpt-oss-infra:modelCache"].update(size="400GB"),
        "modelCache.size",
        "'400GB' is not a Kubernetes quantity (e.g. 400Gi, 1Ti, 500G)",
    ),
    # deployments, and their references to the other sections
    "a recipe that does not exist": (
        lambda e: deployment(e).update(recipe="h200-agg-fast"),
        "deployments.gpt-oss.recipe",
        "unknown recipe 'h200-agg-fast'; one of b200-agg-low-latency,",
    ),
    "a node pool that does not exist": (
        lambda e: deployment(e).update(nodePool="gpus"),
        "deployments.gpt-oss.nodePool",
        "unknown node pool 'gpus'; one of gpu; did you mean 'gpu'?",
    ),
    "no replicas": (
        lambda e: deployment(e).update(replicas=0),
        "deployments.gpt-oss.replicas",
        "must be at least 1 (got 0): the worker replicas",
    ),
    "a router mode Dynamo has not": (
        lambda e: deployment(e).update(routerMode="random"),
        "deployments.gpt-oss.routerMode",
        "Input should be 'round-robin' or 'kv'",
    ),
    # autoscaling (issue 34): each refusal the Planner's bounds can meet
    "autoscaling with its minimum above its maximum": (
        lambda e: autoscaled(e, minReplicas=3, maxReplicas=2, gpus=1),
        "deployments.gpt-oss.autoscaling.minReplicas",
        "3 is more than maxReplicas 2",
    ),
    "autoscaling to more GPUs than the pool holds": (
        lambda e: autoscaled(e, maxReplicas=2),
        "deployments.gpt-oss.autoscaling.maxReplicas",
        (
            "pool gpu (1 x p5en.48xlarge, 8 GPUs each, 8 in all) cannot place a 8-GPU worker",
            "need 16 GPUs with every autoscaled role at its maxReplicas",
        ),
    ),
    "autoscaling in a Capacity Block": (
        lambda e: (autoscaled(e, maxReplicas=1), pool(e).update(CAPACITY_BLOCK)),
        "deployments.gpt-oss.autoscaling",
        "node pool gpu runs in a Capacity Block, a fixed number of nodes paid for up front",
    ),
    "autoscaling without the Prometheus the Planner reads": (
        lambda e: (autoscaled(e, maxReplicas=1), e.pop("gpt-oss-infra:observability")),
        "deployments.gpt-oss.autoscaling",
        "the Planner queries the frontend's metrics in Prometheus (PROMETHEUS_ENDPOINT): set observability.enabled",
    ),
    "autoscaling on a release whose Planner is not rendered": (
        lambda e: (autoscaled(e, maxReplicas=1), on_release(e, "1.2.1")),
        "deployments.gpt-oss.autoscaling",
        "Dynamo 1.2.1's Planner is not one this program renders: set release.dynamo to 1.6.1",
    ),
    "autoscaling where nothing modelled sizes the drain": (
        lambda e: (
            pool(e).update(hardware="b200"),
            autoscaled(e, maxReplicas=1),
            deployment(e).update(recipe="b200-agg-max-throughput", overrides={"max_batch_size": 64}),
        ),
        "deployments.gpt-oss.autoscaling",
        (
            "a worker the Planner stops must have time to finish its longest request",
            "this deployment has none (not modelled: this deployment's overrides change the recipe's modelled point)",
        ),
    ),
    "replicas beside autoscaling": (
        lambda e: (autoscaled(e, maxReplicas=1), deployment(e).update(replicas=1)),
        "deployments.gpt-oss.replicas",
        "not with autoscaling: the Planner sets the workers' replicas",
    ),
    "an aggregated recipe's autoscaling by role": (
        lambda e: autoscaled(e, maxReplicas=1, decode={"maxReplicas": 2}),
        "deployments.gpt-oss.autoscaling.decode",
        "recipe h200-agg-low-latency is aggregated: give minReplicas and maxReplicas, not decode",
    ),
    "an aggregated recipe's autoscaling without a maximum": (
        lambda e: autoscaled(e),
        "deployments.gpt-oss.autoscaling.maxReplicas",
        "required for recipe h200-agg-low-latency: the most workers",
    ),
    "a misspelt autoscaling key": (
        lambda e: autoscaled(e, maxReplica=2),
        "deployments.gpt-oss.autoscaling.maxReplica",
        ("unknown key; allowed keys here:", "did you mean 'maxReplicas'?"),
    ),
    "a disaggregated recipe's autoscaling without its roles": (
        lambda e: disaggregated(e, maxReplicas=2),
        "deployments.gpt-oss.autoscaling.maxReplicas",
        "recipe b200-disagg-1p4d is disaggregated: give prefill and decode their own minReplicas and maxReplicas",
    ),
    "a disaggregated role's minimum above its maximum": (
        lambda e: disaggregated(e, prefill={"minReplicas": 2, "maxReplicas": 1}, decode={"maxReplicas": 1}),
        "deployments.gpt-oss.autoscaling.prefill.minReplicas",
        "2 is more than maxReplicas 1",
    ),
    "disaggregated roles whose maxima the pool cannot hold": (
        lambda e: disaggregated(e, prefill={"maxReplicas": 4}, decode={"maxReplicas": 2}),
        "deployments.gpt-oss.autoscaling.prefill.maxReplicas",  # first-fit decreasing: the decode workers fill it
        (
            "pool gpu (1 x p6-b200.48xlarge, 8 GPUs each, 8 in all) cannot place a 1-GPU prefill worker",
            "need 12 GPUs with every autoscaled role at its maxReplicas as [4, 4, 1, 1, 1, 1]",
        ),
    ),
    "a split of the Planner's GPU budget the pool cannot place": (
        # Both roles at their maxima fit: the decode workers fill one node, the prefill ones the other. But the
        # Planner bounds the total (16 GPUs), not each role: three decode workers beside four prefill workers
        # take both nodes' room for them, and EFA keeps prefill off a decode worker's node.
        lambda e: (disaggregated(e, prefill={"maxReplicas": 8}, decode={"maxReplicas": 2}), pool(e).update(nodes=2)),
        "deployments.gpt-oss.autoscaling.prefill.maxReplicas",
        (
            "pool gpu (2 x p6-b200.48xlarge, 8 GPUs each, 16 in all) cannot place a 1-GPU prefill worker",
            "with gpt-oss's Planner running TrtllmPrefillWorker 4, TrtllmDecodeWorker 3 within its GPU budget",
        ),
    ),
    "an ITL target no number of workers meets": (
        lambda e: (autoscaled(e, maxReplicas=1), deployment(e)["autoscaling"].update(itlMs=2)),
        "deployments.gpt-oss.autoscaling.itlMs",
        "2 ms is below the time per output token of one request alone on these workers, 4.178 ms (modelled: "
        f"{MODELLED_BY}, batch of one, 1024 in / 1024 out): no number of workers meets it",
    ),
    # An override that changes the modelled point leaves the recipe's timing tables as the floor's basis.
    "an ITL target no number of workers meets, from the recipe's timing tables": (
        lambda e: (
            disaggregated(e, prefill={"maxReplicas": 1}, decode={"maxReplicas": 1}),
            deployment(e)["autoscaling"].update(itlMs=1),
            deployment(e).update(overrides={"decode": {"max_batch_size": 256}}),
        ),
        "deployments.gpt-oss.autoscaling.itlMs",
        "1 ms is below the time per output token of one request alone on these workers, 2.204 ms (modelled: "
        f"{MODELLED_BY} timing tables (configs/mocker-timing/b200-disagg-1p4d.yaml), 8192 in / 1024 out)",
    ),
    "a deployment name Kubernetes refuses": (
        lambda e: e["gpt-oss-infra:deployments"].update(Chat=e["gpt-oss-infra:deployments"].pop("gpt-oss")),
        "deployments.Chat",
        "'Chat' must be a DNS label of at most 40 characters: lowercase letters, digits and '-'",
    ),
    "a deployment name too long for the names made from it": (
        lambda e: e["gpt-oss-infra:deployments"].update({"chat" * 11: e["gpt-oss-infra:deployments"].pop("gpt-oss")}),
        "deployments." + "chat" * 11,
        f"'{'chat' * 11}' is 44 characters; at most 40, so that the names derived from it",
    ),
    "no GPUs per worker": (
        lambda e: deployment(e).update(gpus=0),
        "deployments.gpt-oss.gpus",
        "must be at least 1 (got 0): the GPUs each worker gets",
    ),
    "a recipe name one letter off": (
        lambda e: deployment(e).update(recipe="h200-agg-low-latncy"),
        "deployments.gpt-oss.recipe",
        ("unknown recipe 'h200-agg-low-latncy'; one of ", "; did you mean 'h200-agg-low-latency'?"),
    ),
    "a sequence longer than the model's context": (
        lambda e: deployment(e).update(overrides={"max_seq_len": 1048576}),
        "deployments.gpt-oss.overrides.max_seq_len",
        "1048576 is more than openai/gpt-oss-120b's context of 131072 tokens (maxPositionEmbeddings, "
        "configs/model.yaml): at most 131072",
    ),
    "a prompt longer than the model's context": (
        lambda e: deployment(e).update(overrides={"max_input_len": 131073}),
        "deployments.gpt-oss.overrides.max_input_len",
        "131073 is more than openai/gpt-oss-120b's context of 131072 tokens",
    ),
    "no time to become Ready": (
        lambda e: deployment(e).update(readyTimeoutMinutes=0),
        "deployments.gpt-oss.readyTimeoutMinutes",
        "must be at least 1 (got 0): how long `pulumi up` waits for the graph to be Ready, in minutes",
    ),
    "a misspelt benchmark key": (
        lambda e: deployment(e).update(benchmark={"enable": True}),
        "deployments.gpt-oss.benchmark.enable",
        "unknown key; allowed keys here: concurrencyPerGpu, enabled, inputTokens, outputTokens; "
        "did you mean 'enabled'?",
    ),
    # endpoints and their API keys
    "a gateway without API keys": (
        lambda e: deployment(e).update(endpoint={"exposure": "internal"}),
        "apiKeys",
        "required: deployments gpt-oss have a gateway, which admits only API keys",
    ),
    "a rate limit for a client without a key": (
        lambda e: with_keys(e, clientRateLimits={"batch": {"requests": 5}}),
        "deployments.gpt-oss.endpoint.clientRateLimits.batch",
        "no such client in apiKeys (clients: ci): the limit would never apply",
    ),
    "a rate limit per day": (
        lambda e: with_keys(e, rateLimit={"requests": 5, "unit": "Day"}),
        "deployments.gpt-oss.endpoint.rateLimit.unit",
        "Input should be 'Second', 'Minute' or 'Hour'",
    ),
    "a certificate without the name it covers": (
        lambda e: with_keys(e, certificateArn=CERTIFICATE),
        "deployments.gpt-oss.endpoint.hostname",
        "required with certificateArn: the DNS name clients use, which the certificate covers",
    ),
    "a certificate ARN of another service": (
        lambda e: with_keys(
            e, certificateArn="arn:aws:iam::123456789012:server-certificate/chat", hostname="a.example.com"
        ),
        "deployments.gpt-oss.endpoint.certificateArn",
        "'arn:aws:iam::123456789012:server-certificate/chat' is not an ACM certificate ARN: "
        "arn:aws:acm:<region>:<account>:certificate/<36-character id>",
    ),
    "an allowed CIDR that is no CIDR": (
        lambda e: with_keys(e, allowedCidrs=["10.0.0.0/8", "10.0.0.300/32"]),
        "deployments.gpt-oss.endpoint.allowedCidrs.1",
        "'10.0.0.300/32' is not a CIDR block like 10.0.0.0/16",
    ),
    "a client name that cannot name a Secret key": (
        lambda e: with_keys(e) or e["gpt-oss-infra:apiKeys"].update({"Batch_Jobs": SECURE}),
        "apiKeys.Batch_Jobs",
        "not a client name: lower-case letters, digits and '-', at most 63",
    ),
    # release (versions)
    "a Dynamo release we have not pinned": (
        lambda e: release(e).update(dynamo="9.9.9"),
        "release.dynamo",
        "Dynamo 9.9.9 is not supported; one of 1.0.0, 1.2.1, 1.3.0, 1.4.2, 1.5.1, 1.6.1",
    ),
    "a runtime image by a moving tag": (
        lambda e: release(e).update(runtimeImage="nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:latest"),
        "release.runtimeImage",
        "'nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:latest' must be pinned: registry/repository:tag (not latest)",
    ),
    "a model revision by branch": (
        lambda e: release(e).update(modelRevision="main"),
        "release.modelRevision",
        "'main' must be a full Hugging Face commit id: 40 lowercase hex characters",
    ),
    "a release key promotion does not move": (
        lambda e: release(e).update(chart="1.6.1"),
        "release.chart",
        "unknown key; allowed keys here: dynamo, model, modelRevision, runtimeImage",
    ),
    # secrets
    "a Hugging Face token in plaintext": (
        lambda e: e.update({"gpt-oss-infra:hfToken": "hf_abc"}),
        "hfToken",
        "a secret stored in plaintext in the stack file: remove it and set it with pulumi config set --secret",
    ),
    "one API key in plaintext among encrypted ones": (
        lambda e: e.update({"gpt-oss-infra:apiKeys": {"ci": SECURE, "bob": "sk-plain"}}),
        "apiKeys.bob",
        "a secret stored in plaintext in the stack file: remove it and set it with pulumi config set --secret --path",
    ),
    # existing clusters
    "an existing cluster's GPU nodes without the labels that select them": (
        lambda e: as_existing(e) and pool(e).pop("nodeSelector"),
        "nodePools.gpu.nodeSelector",
        (
            "required on an existing cluster: its nodes carry no gpt-oss-infra/pool label unless you label them",
            "e.g. nvidia.com/gpu.product: NVIDIA-H200, which NVIDIA's GPU feature discovery sets",
            "(kubectl label nodes <node> gpt-oss-infra/pool=gpu) and set nodeSelector: {gpt-oss-infra/pool: gpu}",
        ),
    ),
    "a Capacity Block for GPU nodes that exist": (
        lambda e: as_existing(e) and pool(e).update(CAPACITY_BLOCK | {"availabilityZone": "us-east-2b"}),
        "nodePools.gpu.capacityReservationId",
        "only for a cluster the program creates (kind: eks): this pool describes GPU nodes of an existing cluster",
    ),
    "an existing cluster's Kubernetes version objects cannot be validated for": (
        lambda e: as_existing(e, kubernetesVersion="1.20"),
        "cluster.kubernetesVersion",
        "Kubernetes 1.20 is not one this program can validate objects for: 1.25 to 1.37 (the schemas of "
        "kubernetes-validate 1.37.0, requirements.txt)",
    ),
    "a region that does not exist, on an existing cluster": (
        lambda e: as_existing(e) and e.update({"aws:region": "us-west-9"}),
        "aws:region",
        "'us-west-9' is not one of the 46 regions botocore's endpoint data has EC2 in (closest: us-west-2, ",
    ),
    "a misspelt key of an existing cluster": (
        lambda e: as_existing(e) and cluster(e).update(loadBalancerControler=True),
        "cluster.loadBalancerControler",
        ("unknown key; allowed keys here: ", "; did you mean 'loadBalancerController'?"),
    ),
    # regions
    "a region that does not exist": (
        lambda e: e.update({"aws:region": "us-east-9"}),
        "aws:region",
        "'us-east-9' is not one of the 46 regions botocore's endpoint data has EKS in (closest: us-east-2,",
    ),
    "no region for an EKS cluster": (
        lambda e: e.pop("aws:region"),
        "aws:region",
        "required for a cluster of kind eks: pulumi config set aws:region <region>",
    ),
    # names and the other sections
    "a workloads namespace with capitals": (
        lambda e: e.update({"gpt-oss-infra:namespace": "GPT"}),
        "namespace",
        "'GPT' must be a DNS label",
    ),
    "a platform namespace with an underscore": (
        lambda e: e.update({"gpt-oss-infra:platform": {"namespace": "dynamo_system"}}),
        "platform.namespace",
        "'dynamo_system' must be a DNS label",
    ),
    "a retention Prometheus does not read": (
        lambda e: e.update({"gpt-oss-infra:observability": {"enabled": True, "retention": "15 days"}}),
        "observability.retention",
        "'15 days' is not a retention Prometheus takes: a whole number of hours, days or weeks (12h, 15d, 2w)",
    ),
    "a misspelt top-level key": (
        lambda e: e.update({"gpt-oss-infra:deployment": e.pop("gpt-oss-infra:deployments")}),
        "deployment",
        "unknown key; allowed keys here: cluster, deployments, environment,",
    ),
    "no environment": (
        lambda e: e.pop("gpt-oss-infra:environment"),
        "environment",
        "required key is missing",
    ),
    "a yes-please boolean": (
        lambda e: e.update({"gpt-oss-infra:networkPolicies": {"enabled": "yes please"}}),
        "networkPolicies.enabled",
        "Input should be a valid boolean",
    ),
}


@pytest.mark.parametrize(("change", "key", "says"), BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_stack_file_is_refused_naming_the_key_and_what_is_allowed(tmp_path, capsys, change, key, says):
    code, err = planned(tmp_path, capsys, dev_with(change))
    assert code == 1, err
    assert f"invalid stack config in {FILE}:" in err
    full_key = key if ":" in key else f"gpt-oss-infra:{key}"
    start, *then = says if isinstance(says, tuple) else (says,)
    assert f"\n{full_key}: {start}" in err, err
    line = next(line for line in err.splitlines() if line.startswith(f"{full_key}: {start}"))
    assert all(part in line for part in then), line


def test_existing_gb200_nodes_plan_without_a_capacity_block(tmp_path, capsys):
    """GB200 is sold as Capacity Blocks only: to a cluster the program creates, not to nodes that exist."""

    def gb200(entries):
        as_existing(entries, kubernetesVersion="1.33")
        pool(entries)["hardware"] = "gb200"
        pool(entries)["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-GB200"}
        deployment(entries).update(recipe="gb200-agg-low-latency")
        deployment(entries).pop("gpus")

    code, err = planned(tmp_path, capsys, dev_with(gb200))
    assert code == 0, err


def test_an_internal_nlb_open_to_everything_routed_to_the_vpc_is_warned_about(tmp_path, capsys):
    def internal(entries):
        as_existing(entries, loadBalancerController=True)
        with_keys(entries)

    code, err = planned(tmp_path, capsys, dev_with(internal))
    assert code == 0, err
    assert (
        "gpt-oss-infra:deployments.gpt-oss.endpoint.allowedCidrs: NOT SET, so the internal NLB admits 0.0.0.0/0" in err
    )
    assert "ANYTHING ROUTED TO THIS EXISTING CLUSTER'S VPC reaches it (peered VPCs, Transit Gateway, VPN" in err


def test_a_ttft_target_below_one_request_alone_is_warned_about_not_refused(tmp_path, capsys):
    """KV cache hits and shorter prompts can answer faster than the recipe's prompt from scratch."""

    def fast(entries):
        autoscaled(entries, maxReplicas=1)
        deployment(entries)["autoscaling"]["ttftMs"] = 10

    code, err = planned(tmp_path, capsys, dev_with(fast))
    assert code == 0, err
    assert (
        "gpt-oss-infra:deployments.gpt-oss.autoscaling.ttftMs: 10 ms is below the time to first token of one "
        f"request alone on these workers, 44.888 ms (modelled: {MODELLED_BY}, batch of one, "
        "1024 in / 1024 out): only KV cache hits or shorter prompts meet it"
    ) in " ".join(err.split())


def test_a_gateway_without_an_nlb_is_not_called_one(tmp_path, capsys):
    def internal(entries):
        as_existing(entries)
        with_keys(entries)

    code, err = planned(tmp_path, capsys, dev_with(internal))
    assert code == 0, err
    summary = " ".join((tmp_path / "out" / "broken" / "summary.md").read_text().split())
    assert "internal NLB" not in summary
    assert (
        "- gateway (internal, API keys, 401 without one), reached through the gateway's in-cluster Service "
        "(ClusterIP, no NLB: cluster.loadBalancerController is off):" in summary
    )


def trial_with(change) -> str:
    """The trial stack file (its elastic cpu pool `workers`, the Planner-scaled mocker graph `elastic` on it)."""
    entries = copy.deepcopy(example_entries("trial"))
    change(entries)
    return yaml.safe_dump({"config": entries}, sort_keys=False)


def test_planners_asking_more_than_a_cpu_pool_holds_are_refused(tmp_path, capsys):
    """A cpu pool's workers are placed at the Planner's maximum (the trial's elastic graph on its two-node
    pool): 100 mocker workers of 250m CPU do not fit two 8-vCPU nodes, which the placement check says of the
    graph's worker."""

    def crowded(entries):
        entries["gpt-oss-infra:deployments"]["elastic"]["autoscaling"]["maxReplicas"] = 100

    code, err = planned(tmp_path, capsys, trial_with(crowded))
    assert code == 1, err
    line = next(line for line in err.splitlines() if line.startswith("DynamoGraphDeployment gpt-oss/elastic "))
    # Two nodes hold 62 of them; the 63rd has no room.
    assert "MockerWorker (replica 63 of 100): cannot be scheduled" in line
    assert "pool workers: every node is short of CPU (millicores): needs 250, 80 left" in line


def test_a_cpu_pools_floor_its_graphs_never_hold_is_refused(tmp_path, capsys):
    def floor(entries):
        entries["gpt-oss-infra:nodePools"]["workers"]["scaling"] = {"minNodes": 2, "maxNodes": 2}

    code, err = planned(tmp_path, capsys, trial_with(floor))
    assert code == 1, err
    assert (
        "\ngpt-oss-infra:nodePools.workers.scaling.minNodes: 2, but the pool's graphs at their fewest workers hold "
        "1 node(s)" in err
    ), err


def test_there_are_broken_files_for_every_section():
    sections = {key.split(".")[0] for _, key, _ in BROKEN.values()}
    assert sections >= {
        "cluster",
        "nodePools",
        "modelCache",
        "deployments",
        "apiKeys",
        "release",
        "hfToken",
        "aws:region",
        "namespace",
        "platform",
        "observability",
        "environment",
        "networkPolicies",
    }
    assert len(BROKEN) >= 30


def test_a_tab_indented_stack_file_is_refused_with_its_line(tmp_path, capsys):
    code, err = planned(tmp_path, capsys, "config:\n\tgpt-oss-infra:environment: dev\n")
    assert code == 1
    assert f"{FILE}:2:1: " in err, err
