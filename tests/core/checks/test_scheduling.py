"""core/checks/scheduling.py: every pod the plan makes is placed on the stack's node pools as the
scheduler would; a pod that cannot be placed refuses the stack, naming the object, the pool and why."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from gpt_oss_infra.core.checks import scheduling
from gpt_oss_infra.core.checks.scheduling import Amounts, Pod, Pool
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, refused, stack_names


def stack_config(name):
    return namespace_config(copy.deepcopy(example_entries(name)))


@pytest.mark.parametrize("name", stack_names())
def test_every_stack_places_every_pod(name, catalog):
    stack = build_stack(stack_config(name), catalog, with_hf_token=True, with_ngc_key=True, api_key_clients=["ci"])
    assert not [warning for warning in stack.warnings if "image" in warning and "unknown" in warning]


def test_what_a_node_has_left_follows_nodeadm_and_the_daemon_sets(catalog):
    nodes = catalog.nodes
    system = scheduling.system_pool("m7i.2xlarge", 2, catalog, "efs")
    # 8000m - 90m kube-reserved - 80m (aws-node 50m, ebs-csi-node 30m); 32768 - (11 x 58 + 255) - 100 - 120 MiB.
    assert system.free == Amounts(cpu=7830, memory=31655, pods=53, gpus=0, efa=0)
    efa_node = scheduling.node_free(
        nodes.instance_types["p6-b200.48xlarge"], nodes, 8, 8, scheduling.daemon_sets_on(nodes, "efa", "efs")
    )
    # 192000m - 550m - 90m; 2097152 - (11 x 198 + 255) - 100 - 140 MiB; 198 pods - 7 DaemonSets.
    assert efa_node == Amounts(cpu=191360, memory=2094479, pods=191, gpus=8, efa=8)


def test_a_job_that_asks_for_more_cpu_than_a_system_node_has_is_refused(catalog):
    """The benchmark Job used to request 8 CPUs: more than an m7i.2xlarge system node has left."""
    settings = catalog.benchmark.model_copy(update={"resources": {"requests": {"cpu": "8", "memory": "16Gi"}}})
    (problem,) = refused(stack_config("staging"), dataclasses.replace(catalog, benchmark=settings)).problems
    assert problem.key.startswith("Job gpt-oss/gpt-oss-bench-")
    assert problem.message == (
        "cannot be scheduled: pool gpu: taint nvidia.com/gpu=true:NoSchedule not tolerated; "
        "pool system: every node is short of CPU (millicores): needs 8000, 7830 left"
    )


def test_an_image_not_published_for_the_nodes_architecture_is_refused(catalog):
    """As if the runtime image had no arm64 build: GB200 nodes could not run the workers."""
    config = stack_config("gb200")
    image = config["release"]["runtimeImage"]
    amd64_only = catalog.image_platforms | {image: ["x86_64"]}
    problems = refused(config, dataclasses.replace(catalog, image_platforms=amd64_only)).problems
    worker = next(p for p in problems if p.key == "DynamoGraphDeployment gpt-oss/low-latency TrtllmWorker")
    assert f"pool gb200: image {image} is not published for arm64" in worker.message


def test_an_image_listed_nowhere_is_a_warning(catalog):
    unlisted = {image: platforms for image, platforms in catalog.image_platforms.items() if "operator" not in image}
    config = stack_config("dev")
    stack = build_stack(config, dataclasses.replace(catalog, image_platforms=unlisted), with_hf_token=False)
    operator = f"nvcr.io/nvidia/ai-dynamo/kubernetes-operator:{config['release']['dynamo']}"
    assert any(warning.startswith(f"image {operator}: the CPU architectures") for warning in stack.warnings)


GPU_POOL = Pool(
    name="gpu",
    nodes=1,
    labels={"gpt-oss-infra/pool": "gpu"},
    taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
    cpu_architecture="x86_64",
    free=Amounts(cpu=1000, memory=1000, pods=10, gpus=8, efa=2),
)
TOLERATES_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def place(*pods, existing=frozenset()):
    return scheduling.placement_problems(list(pods), [GPU_POOL], set(existing), {})[0]


def worker(**changes):
    pod = Pod(
        owner="worker",
        replicas=1,
        requests=Amounts(gpus=8, pods=1),
        phase=scheduling.SERVING,
        node_selector={"gpt-oss-infra/pool": "gpu"},
        tolerations=TOLERATES_GPU,
    )
    return dataclasses.replace(pod, **changes)


def test_a_pod_that_fits_is_placed():
    assert place(worker()) == []


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        (
            {"node_selector": {"gpt-oss-infra/pool": "other"}},
            "nodeSelector {'gpt-oss-infra/pool': 'other'} does not match",
        ),
        (
            {"required_terms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
            "required node affinity does not match its node labels",
        ),
        ({"tolerations": []}, "taint nvidia.com/gpu=true:NoSchedule not tolerated"),
        ({"requests": Amounts(gpus=9, pods=1)}, "every node is short of nvidia.com/gpu: needs 9, 8 left"),
        ({"requests": Amounts(gpus=1, efa=4, pods=1)}, "every node is short of vpc.amazonaws.com/efa: needs 4, 2 left"),
        ({"requests": Amounts(memory=2048, pods=1)}, "every node is short of memory (MiB): needs 2048, 1000 left"),
    ],
)
def test_each_reason_a_pod_cannot_be_placed_is_named(changes, why):
    (problem,) = place(worker(**changes))
    assert problem.key == "worker"
    assert problem.message.startswith("cannot be scheduled: pool gpu: ")
    assert why in problem.message


def test_replicas_that_do_not_all_fit_name_the_first_that_does_not():
    (problem,) = place(worker(requests=Amounts(gpus=4, pods=1), replicas=3))
    assert problem.key == "worker (replica 3 of 3)"


def test_required_anti_affinity_keeps_pods_apart():
    prefill = worker(owner="prefill", requests=Amounts(gpus=1, pods=1), labels={"role": "prefill"})
    decode = worker(owner="decode", requests=Amounts(gpus=1, pods=1), apart_from=[{"role": "prefill"}])
    (problem,) = place(prefill, decode)
    assert problem.key == "decode" and "anti-affinity" in problem.message


def test_a_volume_the_stack_does_not_make_is_named():
    pod = worker(volumes=[("ConfigMap", "engine-config"), ("PersistentVolumeClaim", "model-cache")])
    (problem,) = place(pod, existing={("PersistentVolumeClaim", "model-cache")})
    assert (problem.key, problem.message) == ("worker", "mounts ConfigMap engine-config, which the stack does not make")


def test_the_download_is_placed_apart_from_the_graphs_it_precedes():
    """Every graph waits for the download: they never need the same room at once."""
    download = worker(owner="download", phase=scheduling.FILLING, requests=Amounts(gpus=8, pods=1))
    assert place(download, worker()) == []
    (problem,) = place(worker(owner="always", phase=scheduling.ALWAYS), worker())
    assert problem.key in ("always", "worker")
