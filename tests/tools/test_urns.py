"""tools/urns.py: what moving a live stack between Dynamo releases does to its resources, by URN."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path

import pytest

from gpt_oss_infra.core.dynamo_graph import GRAPH_TYPES
from gpt_oss_infra.tools.pulumi_engine import AliasSpec
from gpt_oss_infra.tools.urns import Transition, transition, transition_from, urns
from tests.support import example_entries, stack_entries, stack_names, successful_run

CRDS = 7  # the Dynamo CRDs 1.2.1's program applies
# Their own provider, the one that upserts (components/kubernetes.crds_provider): only where there are CRDs.
CRDS_PROVIDER = "pulumi:providers:kubernetes::gptoss-eks-kubernetes-crds"


def on(release: str) -> dict:
    entries = copy.deepcopy(stack_entries("dev"))
    image = f"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:{release}"
    entries["gpt-oss-infra:release"] |= {"dynamo": release, "runtimeImage": image}
    return entries


@pytest.fixture(scope="module")
def runs():
    return {release: successful_run(on(release)).resources for release in ("1.2.1", "1.6.1")}


def graph_urn(run: list) -> str:
    (graph,) = [r for r in run if r.type in GRAPH_TYPES]
    urn = urns(run, "dev")[graph.name]
    assert urn.endswith(f"GptOssDeployment${graph.type}::{graph.name}")
    return urn


def test_the_two_releases_render_two_graph_types(runs):
    assert graph_urn(runs["1.2.1"]) != graph_urn(runs["1.6.1"])  # so their URNs differ


def test_upgrading_takes_the_live_graph_over_and_leaves_the_crds_to_the_operator(runs):
    """1.2.1 -> 1.6.1: the v1alpha1 graph becomes the v1beta1 one in place (its alias); the program's
    CRDs leave the state without being deleted (retainOnDelete): the 1.6.1 operator applies its own."""
    moved = transition(runs["1.2.1"], runs["1.6.1"], "dev")
    assert [pair for pair in moved.kept if pair[0] != pair[1]] == [(graph_urn(runs["1.2.1"]), graph_urn(runs["1.6.1"]))]
    assert moved.created == []
    # Their provider goes after them: deleting a provider deletes nothing in the cluster.
    assert [urn.rsplit("$", 1)[-1] for urn in moved.deleted] == [CRDS_PROVIDER]
    assert len(moved.forgotten) == CRDS
    assert all("CustomResourceDefinition::dynamo-platform-crd-" in urn for urn in moved.forgotten)


def test_rolling_back_takes_the_graph_back_and_adopts_the_crds_again(runs):
    back = transition(runs["1.6.1"], runs["1.2.1"], "dev")
    assert [pair for pair in back.kept if pair[0] != pair[1]] == [(graph_urn(runs["1.6.1"]), graph_urn(runs["1.2.1"]))]
    assert back.deleted == [] and back.forgotten == []
    # Applied over the operator's by their own provider (upsertExistingObjects, patchForce).
    assert back.created[0].endswith(CRDS_PROVIDER)
    assert len(back.created) == 1 + CRDS
    assert all("CustomResourceDefinition::dynamo-platform-crd-" in urn for urn in back.created[1:])


def test_without_the_alias_the_plan_would_create_a_second_graph_and_delete_the_live_one(runs):
    """What the alias prevents: pulumi-kubernetes #546 / #1668 (create clashes, or deletes the live graph)."""
    naive = [dataclasses.replace(r, alias_specs=()) if r.type in GRAPH_TYPES else r for r in runs["1.6.1"]]
    moved = transition(runs["1.2.1"], naive, "dev")
    assert moved.created == [graph_urn(runs["1.6.1"])]
    assert graph_urn(runs["1.2.1"]) in moved.deleted


BEFORE_GPT_OSS_STACK = Path(__file__).resolve().parents[1] / "data" / "urns-before-gpt-oss-stack"


def stored_urns(folder: Path, stack: str) -> list[dict]:
    """A stack's URNs as an earlier release made them (tests/data/<folder>/<stack>.json), each with retainOnDelete."""
    return json.loads((folder / f"{stack}.json").read_text())


def moved_from(before: list[dict], after: list, stack: str) -> Transition:
    """What a `pulumi up` of `after` does to a stack holding the stored URNs `before`."""
    retained = {entry["urn"] for entry in before if entry["retainOnDelete"]}
    return transition_from([entry["urn"] for entry in before], retained, after, stack)


@pytest.mark.parametrize("stack", sorted(path.stem for path in BEFORE_GPT_OSS_STACK.glob("*.json")))
def test_no_live_resource_is_replaced_by_moving_the_stack_into_gpt_oss_stack(stack):
    """0.1.0 moved every component under GptOssStack, which changes every URN: each moved component's
    alias (and its children's, inherited) keeps the resources. The URNs before are those of commit
    3882a1a's program (tests/data/urns-before-gpt-oss-stack/<stack>.json, one file per shipped stack)."""
    before = stored_urns(BEFORE_GPT_OSS_STACK, stack)
    moved = _without_added_deployments(
        moved_from(before, successful_run(example_entries(stack), stack).resources, stack), stack
    )
    # New since then: GptOssStack itself, and (0.3.0) the teardown guards, all under a component of their own,
    # and the CRDs' own provider where the program applies CRDs (1.2.1: prod, staging). Moving a resource
    # between providers of one cluster updates it: Pulumi diffs the two providers' configs (pulumi/pulumi
    # step_generator.go providerChanged), and pulumi-kubernetes' DiffConfig replaces only when the
    # kubeconfig's active cluster changes.
    assert moved.created[0] == f"urn:pulumi:{stack}::gpt-oss-infra::gpt-oss-infra:index:GptOssStack::gpt-oss-infra"
    assert all(_new_in_0_3_0(urn) for urn in moved.created[1:]), moved.created
    # Gone: only the destroy waits of 0.2.0 (Pulumi dynamic resources), which delete at once
    # (components/destroy_wait.py; tests/components/test_destroy_wait.py). Nothing else is replaced.
    assert all("pulumi-python:dynamic:Resource::" in urn for urn in moved.deleted), moved.deleted
    assert moved.forgotten == [] and moved.problems == []
    assert len(moved.kept) == len(before) - len(moved.deleted) and all(old != new for old, new in moved.kept)


# Deployments added to a shipped stack file since the stored URNs (0.5.0: the trial's elastic graph, which
# make trial runs with the real Planner), and (0.6.0) the Karpenter of its elastic pool. Their resources are
# new, not moved: no live resource is touched.
ADDED_DEPLOYMENTS = {"trial": "elastic"}


def _without_added_deployments(moved, stack: str):
    """The transition, without the resources created for a deployment added since (its name in theirs)."""
    added = ADDED_DEPLOYMENTS.get(stack)
    if added is None:
        return moved

    def of_added(urn: str) -> bool:
        name = urn.rsplit("::", 1)[1]
        return name == added or name.startswith(f"{added}-") or f"-{added}-" in name or name.endswith(f"-{added}")

    created = [urn for urn in moved.created if not of_added(urn) and not _karpenters(urn)]
    assert len(created) < len(moved.created), f"nothing of {added} was created: drop it from ADDED_DEPLOYMENTS"
    return dataclasses.replace(moved, created=created)


def _karpenters(urn: str) -> bool:
    """Karpenter's component or one of its children (0.6.0: the trial's elastic cpu pool): new, not moved."""
    return "gpt-oss-infra:aws:Karpenter" in urn.split("::")[2]


def _new_in_0_3_0(urn: str) -> bool:
    """A teardown guard's resource (core/render/teardown.py): its component's, or the guard beside the
    gateways; or the CRDs' own provider; or (0.4.1) a GpuNodePool component, which holds a created
    cluster's GPU pool (no cloud resource: its node group and the rest keep their URNs)."""
    return (
        "gpt-oss-infra:teardown:TeardownGuards" in urn
        or urn.endswith("kubernetes:apps/v1:Deployment::dynamo-platform-gateway-load-balancers-gone")
        or urn.endswith(CRDS_PROVIDER)
        or _a_gpu_pool_component(urn)
    )


def _a_gpu_pool_component(urn: str) -> bool:
    """The GpuNodePool component itself (gpt-oss-infra:index:GpuNodePool last in its type chain)."""
    return urn.split("::")[2].endswith("$gpt-oss-infra:index:GpuNodePool")


def test_without_the_aliases_moving_into_gpt_oss_stack_would_replace_everything():
    before = json.loads((BEFORE_GPT_OSS_STACK / "dev.json").read_text())
    after = successful_run(stack_entries("dev"), "dev").resources
    unaliased = [dataclasses.replace(r, alias_specs=()) for r in after]
    moved = transition_from([entry["urn"] for entry in before], set(), unaliased, "dev")
    assert len(moved.created) == len(after) and len(moved.deleted) == len(before)


URNS_0_4_0 = Path(__file__).resolve().parents[1] / "data" / "urns-0.4.0"


@pytest.mark.parametrize("stack", sorted(path.stem for path in URNS_0_4_0.glob("*.json")))
def test_no_live_resource_is_replaced_by_the_stack_composing_the_public_blocks(stack):
    """0.4.1: GptOssStack makes its platform, cache and deployments with the public blocks, whose types
    differ from the components they replace (dynamo:DynamoPlatform, model:ModelCache, serving:DynamoServing):
    their type aliases keep every resource. A created cluster's GPU pools move from its NodeGroups
    component into a GpuNodePool each: their parent alias keeps them. The URNs before are those of
    0.4.0's plans (commit 6d59e92, tests/data/urns-0.4.0/<stack>.json, one file per shipped stack)."""
    before = stored_urns(URNS_0_4_0, stack)
    after = successful_run(example_entries(stack), stack).resources
    moved = _without_added_deployments(moved_from(before, after, stack), stack)
    # New: only the GpuNodePool components, one per GPU pool of a created cluster.
    gpu_pools = {r.name for r in after if r.type == "gpt-oss-infra:index:GpuNodePool"}
    assert all(_a_gpu_pool_component(urn) for urn in moved.created)
    assert {urn.rsplit("::", 1)[1] for urn in moved.created} == gpu_pools
    assert (moved.deleted, moved.forgotten, moved.problems) == ([], [], [])
    renamed = [(old, new) for old, new in moved.kept if old != new]
    assert len(moved.kept) == len(before) and renamed  # every resource kept, the blocks' under their new types
    blocks = {
        "gpt-oss-infra:dynamo:DynamoPlatform": "gpt-oss-infra:index:DynamoPlatform",
        "gpt-oss-infra:model:ModelCache": "gpt-oss-infra:index:ModelCache",
        "gpt-oss-infra:serving:DynamoServing": "gpt-oss-infra:index:GptOssDeployment",
        "gpt-oss-infra:aws:NodeGroups$": "gpt-oss-infra:index:GpuNodePool$",
    }
    for old, new in renamed:  # only the blocks and their children move, each to its block's type (and 0.6.2's move)
        replaced = [type_ for type_ in blocks if type_ in old]
        assert len(replaced) <= 1, old
        as_block = old.replace(replaced[0], blocks[replaced[0]]) if replaced else old
        assert moved_in_0_6_2(as_block) == new


def _with_specs(run: list, name: str, specs: tuple) -> list:
    return [dataclasses.replace(r, alias_specs=specs) if r.name == name else r for r in run]


@pytest.fixture(scope="module")
def dev_after():
    return successful_run(example_entries("dev"), "dev").resources


def test_the_blocks_keep_their_resources_only_with_their_type_aliases(dev_after):
    """Without block_aliases' type alias, 0.4.1's platform would be a new component: the engine would
    create its Helm release and namespace again and delete the live ones."""
    moved = moved_from(stored_urns(URNS_0_4_0, "dev"), _with_specs(dev_after, "dynamo-platform", ()), "dev")
    assert "dynamo-platform-release" in {urn.rsplit("::", 1)[1] for urn in moved.deleted}
    assert any(urn.endswith("::dynamo-platform-release") for urn in moved.created)


def test_an_alias_to_the_old_type_at_the_root_needs_both_in_one_alias(dev_after):
    """What the engine does with a type alias and a separate move to the root (another way to write
    block_aliases): neither names the pre-0.1.0 URN (old type at the root), so the platform's resources
    would be replaced on a stack from before 0.1.0. tools/urns.py matches aliases as the engine does."""
    (platform,) = [r for r in dev_after if r.name == "dynamo-platform"]
    old_type = "gpt-oss-infra:dynamo:DynamoPlatform"
    assert set(platform.alias_specs) == {AliasSpec(type=old_type), AliasSpec(type=old_type, no_parent=True)}
    apart = (AliasSpec(type=old_type), AliasSpec(no_parent=True))
    moved = moved_from(
        stored_urns(BEFORE_GPT_OSS_STACK, "dev"), _with_specs(dev_after, "dynamo-platform", apart), "dev"
    )
    assert "dynamo-platform-release" in {urn.rsplit("::", 1)[1] for urn in moved.deleted}


def test_a_gpu_pool_keeps_its_node_group_only_with_its_parent_alias(dev_after):
    (group,) = [r for r in dev_after if r.name == "gptoss-nodes-gpu"]
    assert group.parent == "gptoss-pool-gpu" and group.alias_specs == (AliasSpec(parent="gptoss-nodes"),)
    for folder in (URNS_0_4_0, BEFORE_GPT_OSS_STACK):  # the engine swaps in the parent's matched old URN
        before = stored_urns(folder, "dev")
        assert not [urn for urn in moved_from(before, dev_after, "dev").deleted if "gptoss-nodes-gpu" in urn]
        moved = moved_from(before, _with_specs(dev_after, "gptoss-nodes-gpu", ()), "dev")
        assert {urn.rsplit("::", 1)[1] for urn in moved.deleted} == {
            "gptoss-nodes-gpu",
            *(["volumes-gone"] if folder == BEFORE_GPT_OSS_STACK else []),  # 0.2.0's destroy wait
        }


def test_two_resources_claiming_one_old_urn_is_an_error_of_up(dev_after):
    """The engine refuses an old URN two new resources alias (GetDuplicateResourceAliasError)."""
    (group,) = [r for r in dev_after if r.name == "gptoss-nodes-gpu"]
    twin = dataclasses.replace(
        group, name="gptoss-nodes-gpu-twin", alias_specs=(AliasSpec(name="gptoss-nodes-gpu", parent="gptoss-nodes"),)
    )
    moved = moved_from(stored_urns(URNS_0_4_0, "dev"), [*dev_after, twin], "dev")
    assert len(moved.problems) == 1 and "gptoss-nodes-gpu: an alias of both" in moved.problems[0]


def test_an_alias_of_another_resources_own_urn_is_an_error_of_up(dev_after):
    """The engine refuses a resource that takes over, through an alias, the URN another resource of the run has
    as its own (step_generator.go getOldResource: GetDuplicateResourceAliasError)."""
    (release,) = [r for r in dev_after if r.name == "dynamo-platform-release"]
    twin = dataclasses.replace(release, name="dynamo-platform-helm", alias_specs=(AliasSpec(name=release.name),))
    moved = moved_from(stored_urns(URNS_0_6_0, "dev"), [*dev_after, twin], "dev")
    platform = "urn:pulumi:dev::gpt-oss-infra::gpt-oss-infra:index:GptOssStack$gpt-oss-infra:index:DynamoPlatform$"
    release_urn = f"{platform}kubernetes:helm.sh/v3:Release::dynamo-platform-release"
    assert moved.problems == [
        f"{release_urn}: the URN of a resource of this run, and an alias of {release_urn[:-7]}helm"
    ]


URNS_0_6_0 = Path(__file__).resolve().parents[1] / "data" / "urns-0.6.0"


def test_the_0_6_0_urns_are_stored_for_every_shipped_stack():
    assert sorted(path.stem for path in URNS_0_6_0.glob("*.json")) == stack_names()


# 0.6.2: the teardown guards and Envoy Gateway, GptOssStack's own children up to 0.6.1 (`teardown`, `gateway`),
# are made by its DynamoPlatform, and each deployment's NetworkPolicies, until then made by the stack's
# Workloads, by its GptOssDeployment, as the blocks make them for a program of their own: the same resources
# under new URNs, which their aliases keep.
MOVED_INTO_THE_PLATFORM = ["gpt-oss-infra:teardown:TeardownGuards", "gpt-oss-infra:gateway:GatewayController"]
STACK_TYPE, PLATFORM_TYPE = "gpt-oss-infra:index:GptOssStack", "gpt-oss-infra:index:DynamoPlatform"
WORKLOADS_POLICY = f"{STACK_TYPE}$gpt-oss-infra:serving:Workloads$kubernetes:networking.k8s.io/v1:NetworkPolicy"
DEPLOYMENT_POLICY = f"{STACK_TYPE}$gpt-oss-infra:index:GptOssDeployment$kubernetes:networking.k8s.io/v1:NetworkPolicy"


def moved_in_0_6_2(urn: str) -> str:
    """A URN of 0.6.1's stack as 0.6.2 makes it: a guard's or the gateway's under the DynamoPlatform
    `dynamo-platform`, its name prefixed with the platform's; a deployment's NetworkPolicy under its
    GptOssDeployment, without the `workloads-` prefix; any other URN as it is."""
    head, project, chain, name = urn.split("::")
    for type_ in MOVED_INTO_THE_PLATFORM:
        if chain.startswith(f"{STACK_TYPE}${type_}"):
            chain = chain.replace(STACK_TYPE, f"{STACK_TYPE}${PLATFORM_TYPE}", 1)
            name = f"dynamo-platform-{name}"
    if chain == WORKLOADS_POLICY and re.fullmatch(r"workloads-.+-(frontend|workers)-ingress", name):
        chain, name = DEPLOYMENT_POLICY, name.removeprefix("workloads-")
    return "::".join([head, project, chain, name])


def test_the_0_6_2_moves_are_exercised_by_prods_urns():
    """prod (networkPolicies, an NLB gateway) holds URNs of both 0.6.2 moves: the tests above exercise them."""
    moved = [urn for urn in (entry["urn"] for entry in stored_urns(URNS_0_6_0, "prod")) if moved_in_0_6_2(urn) != urn]
    assert any(urn.endswith("::workloads-gpt-oss-frontend-ingress") for urn in moved)
    assert any(urn.endswith("::gateway-release") for urn in moved)


@pytest.mark.parametrize("stack", sorted(path.stem for path in URNS_0_6_0.glob("*.json")))
def test_every_shipped_stack_keeps_every_resource_of_0_6_0(stack):
    """Every resource of 0.6.0's plans is kept: nothing a live stack holds is deleted or replaced, and each
    keeps its URN but those 0.6.2 moved (moved_in_0_6_2), which their aliases keep
    (a deliberate move is named here). The URNs are those of commit dbe8924's plans
    (tests/data/urns-0.6.0/<stack>.json, one file per stack file: autoscaling, and the resources added since
    0.4.0, the Planner's and Karpenter's among them). A resource added later is created beside."""
    before = stored_urns(URNS_0_6_0, stack)
    moved = moved_from(before, successful_run(example_entries(stack), stack).resources, stack)
    assert (moved.deleted, moved.forgotten, moved.problems) == ([], [], [])
    assert sorted(moved.kept) == sorted((entry["urn"], moved_in_0_6_2(entry["urn"])) for entry in before)
    # Every stack has teardown guards (its platform's or monitoring's volumes), and prod an NLB gateway.
    assert any(old != new for old, new in moved.kept)


def test_the_platforms_guards_and_gateway_keep_their_resources_only_with_their_aliases():
    """Without the aliases of 0.6.2's move, prod's Envoy Gateway and teardown guards would be new: the engine
    would create them again (a second release of the chart into its namespace) and delete the live ones."""
    prod = successful_run(example_entries("prod"), "prod").resources
    unaliased = _with_specs(_with_specs(prod, "dynamo-platform-gateway", ()), "dynamo-platform-teardown", ())
    moved = moved_from(stored_urns(URNS_0_6_0, "prod"), unaliased, "prod")
    deleted = {urn.rsplit("::", 1)[1] for urn in moved.deleted}
    assert {"gateway-release", "gateway-load-balancers-gone", "teardown-volumes-gone"} <= deleted
    assert any(urn.endswith("::dynamo-platform-gateway-release") for urn in moved.created)
    aliased = moved_from(stored_urns(URNS_0_6_0, "prod"), prod, "prod")
    assert aliased.deleted == [] and aliased.created == []


def test_a_deployments_network_policies_keep_their_resources_only_with_their_aliases():
    """Without its aliases, a deployment's NetworkPolicy under its GptOssDeployment would be new: the engine
    would create the policy again (a clash: the name is taken in the namespace) and delete the live one."""
    prod = successful_run(example_entries("prod"), "prod").resources
    unaliased = _with_specs(_with_specs(prod, "gpt-oss-frontend-ingress", ()), "gpt-oss-workers-ingress", ())
    moved = moved_from(stored_urns(URNS_0_6_0, "prod"), unaliased, "prod")
    deleted = {urn.rsplit("::", 1)[1] for urn in moved.deleted}
    assert deleted == {"workloads-gpt-oss-frontend-ingress", "workloads-gpt-oss-workers-ingress"}
    assert {urn.rsplit("::", 1)[1] for urn in moved.created} == {"gpt-oss-frontend-ingress", "gpt-oss-workers-ingress"}


def test_a_resource_renamed_since_0_6_0_is_caught(dev_after):
    """What the test above catches: a refactor that renames a resource (no alias) deletes the live one."""
    renamed = [
        dataclasses.replace(r, name="dynamo-platform-helm") if r.name == "dynamo-platform-release" else r
        for r in dev_after
    ]
    moved = moved_from(stored_urns(URNS_0_6_0, "dev"), renamed, "dev")
    assert [urn.rsplit("::", 1)[1] for urn in moved.deleted] == ["dynamo-platform-release"]
    assert [urn.rsplit("::", 1)[1] for urn in moved.created] == ["dynamo-platform-helm"]
