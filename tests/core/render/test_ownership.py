"""core/render/ownership.py: what a stack claims in a cluster, how it marks it as its own, and what it
refuses to take from someone else (each rule with the broken case it catches)."""

from __future__ import annotations

import copy

import pytest

from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render import ownership
from gpt_oss_infra.core.render.ownership import ADOPTED_ANNOTATION, OWNER_ANNOTATION, Claim, ReleaseClaim
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, refused

OWNER = ownership.owner_of("organization", "gpt-oss-infra", "lab")
NAMESPACE = Claim("Namespace", "v1", "monitoring", "gpt-oss-infra:observability.namespace")
CRD = Claim("CustomResourceDefinition", "apiextensions.k8s.io/v1", "dynamographdeployments.nvidia.com", "k")


def existing_raw(**cluster) -> dict:
    raw = copy.deepcopy(namespace_config(example_entries("existing-cluster")))
    raw["cluster"] |= cluster
    return raw


def test_the_claims_of_a_stack_are_its_namespaces_and_cluster_wide_objects_with_their_keys(catalog):
    stack = build_stack(
        namespace_config(example_entries("staging")), catalog, with_hf_token=False, api_key_clients=["ci"]
    )
    claimed = {claim.ref: claim.key for claim in ownership.claims(stack)}
    assert claimed["Namespace/dynamo-system"] == "gpt-oss-infra:platform.namespace"
    assert claimed["Namespace/gpt-oss"] == "gpt-oss-infra:namespace"
    assert claimed["Namespace/monitoring"] == "gpt-oss-infra:observability.namespace"
    assert claimed["Namespace/dynamo-system-teardown"] == "gpt-oss-infra:platform.namespace"
    assert claimed["CustomResourceDefinition/dynamographdeployments.nvidia.com"] == "gpt-oss-infra:release.dynamo"
    assert {"GatewayClass/gpt-oss-infra", "ClusterRole/dynamo-system-teardown", "StorageClass/gpt-oss-efs"} <= set(
        claimed
    )
    assert [(r.name, r.namespace) for r in ownership.release_claims(stack)] == [
        ("dynamo-platform", "dynamo-system"),
        ("envoy-gateway", "envoy-gateway-system"),
        ("aws-load-balancer-controller", "kube-system"),
        ("kube-prometheus-stack", "monitoring"),
    ]


def test_every_claimed_object_is_marked_as_the_owners_and_nothing_else_is(catalog):
    raw = namespace_config(example_entries("staging"))
    stack = build_stack(raw, catalog, with_hf_token=False, api_key_clients=["ci"], owner=OWNER)
    objects = [*stack.platform.crds, *stack.objects()]
    marked = [obj for obj in objects if OWNER_ANNOTATION in obj["metadata"].get("annotations", {})]
    assert {f"{obj['kind']}/{obj['metadata']['name']}" for obj in marked} == {c.ref for c in ownership.claims(stack)}
    assert all(obj["metadata"]["annotations"][OWNER_ANNOTATION] == OWNER for obj in marked)
    # the vendored CRDs the catalog caches are copied, never changed in place
    assert all(OWNER_ANNOTATION not in crd["metadata"].get("annotations", {}) for crd in stack.platform.dynamo.crds())


def test_an_adopted_object_is_marked_adopted_and_a_bad_adoption_is_refused_by_its_index(catalog):
    stack = build_stack(existing_raw(adopt=["Namespace/dynamo-system"]), catalog, with_hf_token=False, owner=OWNER)
    assert stack.platform.namespace["metadata"]["annotations"] == {ADOPTED_ANNOTATION: OWNER}
    with pytest.raises(ConfigError) as refused:
        build_stack(existing_raw(adopt=["Namespace/dynamo-sytem", "Secret/x"]), catalog, with_hf_token=False)
    problems = {problem.key: problem.message for problem in refused.value.problems}
    assert "did you mean 'Namespace/dynamo-system'?" in problems["gpt-oss-infra:cluster.adopt[0]"]
    assert "only Namespaces and CustomResourceDefinitions can be adopted" in problems["gpt-oss-infra:cluster.adopt[1]"]


def test_adopt_is_a_key_of_existing_clusters_only(catalog):
    raw = copy.deepcopy(namespace_config(example_entries("dev")))
    raw["cluster"]["adopt"] = ["Namespace/gpt-oss"]
    with pytest.raises(ConfigError) as refused:
        build_stack(raw, catalog, with_hf_token=False)
    assert [problem.key for problem in refused.value.problems] == ["gpt-oss-infra:cluster.adopt"]


@pytest.mark.parametrize(
    ("annotations", "adopt", "refused_with"),
    [
        (None, [], None),  # not there: it will be made
        ({OWNER_ANNOTATION: OWNER}, [], None),  # made by this stack's earlier `up`
        ({}, ["Namespace/monitoring"], None),  # adopted on purpose
        ({}, [], "Namespace monitoring exists in the cluster and this stack did not make it"),
        ({OWNER_ANNOTATION: "other/prod"}, [], "it belongs to stack other/prod"),
        ({"meta.helm.sh/release-name": "prometheus"}, [], "Helm release prometheus made it"),
        ({ADOPTED_ANNOTATION: OWNER}, [], "this stack adopted it earlier: keep it in cluster.adopt"),
    ],
)
def test_an_existing_namespace_is_refused_unless_it_is_the_stacks_or_adopted(annotations, adopt, refused_with):
    problems = ownership.ownership_problems([NAMESPACE], {NAMESPACE.ref: annotations}, [], {}, OWNER, adopt)
    if refused_with is None:
        assert problems == []
        return
    (problem,) = problems
    assert problem.key == "gpt-oss-infra:observability.namespace"
    assert refused_with in problem.message
    assert "list 'Namespace/monitoring' in cluster.adopt" in problem.message
    assert f"kubectl annotate namespace monitoring {OWNER_ANNOTATION}={OWNER}" in problem.message


def test_a_helm_release_of_the_same_name_in_another_namespace_is_refused():
    release = ReleaseClaim("dynamo-platform", "dynamo-system", "gpt-oss-infra:platform.namespace")
    assert ownership.ownership_problems([], {}, [release], {"dynamo-platform": ["dynamo-system"]}, OWNER, []) == []
    (problem,) = ownership.ownership_problems(
        [], {}, [release], {"dynamo-platform": ["dynamo-system", "team-a"]}, OWNER, []
    )
    assert problem.message.startswith("a Helm release named dynamo-platform already runs in namespace team-a")


def test_a_claims_rest_path_finds_it_by_name():
    assert NAMESPACE.path == "/api/v1/namespaces/monitoring"
    assert CRD.path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dynamographdeployments.nvidia.com"


def test_an_owner_is_the_stacks_full_name_with_its_organization():
    assert OWNER == "organization/gpt-oss-infra/lab"
    assert ownership.owner_of("team-b", "gpt-oss-infra", "lab") != OWNER  # another organization's stack "lab"
    # A self-managed backend's organization, also where the engine names none (never "None/...").
    assert ownership.owner_of(None, "gpt-oss-infra", "lab") == OWNER


def test_the_crds_the_operator_applies_are_the_stacks_only_where_its_platform_namespace_is(catalog):
    """From 1.3 the operator applies Dynamo's CRDs with no annotation of ours: they are this stack's where
    its platform namespace is; else another install's, which this stack's operator would take over."""
    stack = build_stack(existing_raw(), catalog, with_hf_token=False, owner=OWNER)
    assert not stack.platform.crds  # the existing-cluster stack runs 1.6.1: its operator applies them
    (graphs,) = [claim for claim in ownership.claims(stack) if claim.kind == "CustomResourceDefinition"]
    assert (graphs.name, graphs.owned_with) == ("dynamographdeployments.nvidia.com", "Namespace/dynamo-system")
    ours = {"Namespace/dynamo-system": {OWNER_ANNOTATION: OWNER}}
    assert ownership.ownership_problems([graphs], {graphs.ref: {}} | ours, [], {}, OWNER, []) == []
    (problem,) = ownership.ownership_problems([graphs], {graphs.ref: {}}, [], {}, OWNER, [])
    assert problem.key == "gpt-oss-infra:release.dynamo"
    assert "another Dynamo install applied them" in problem.message and "cluster.adopt" in problem.message
    assert ownership.ownership_problems([graphs], {graphs.ref: {}}, [], {}, OWNER, [graphs.ref]) == []


def test_adopting_what_the_stack_made_itself_is_refused():
    """An adopted Namespace is only annotated (a patch): listing the stack's own would stop managing it."""
    live = {NAMESPACE.ref: {OWNER_ANNOTATION: OWNER}}
    (problem,) = ownership.ownership_problems([NAMESPACE], live, [], {}, OWNER, [NAMESPACE.ref])
    assert (problem.key, problem.message) == (
        "gpt-oss-infra:cluster.adopt",
        "Namespace/monitoring is this stack's own: remove it from cluster.adopt",
    )


def rolled_back_raw() -> dict:
    """The existing-cluster stack on 1.2.1, whose program applies Dynamo's CRDs itself."""
    raw = existing_raw()
    raw["release"] = raw["release"] | {
        "dynamo": "1.2.1",
        "runtimeImage": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.2.1",
    }
    return raw


def test_rolling_back_to_a_release_whose_program_applies_the_crds_takes_the_operators_over(catalog):
    """1.6.1's operator applied the CRDs (no annotation of ours); back on 1.2.1 the program applies them:
    they are this stack's, its platform namespace being this stack's."""
    stack = build_stack(rolled_back_raw(), catalog, with_hf_token=False, owner=OWNER)
    crds = [claim for claim in ownership.claims(stack) if claim.kind == "CustomResourceDefinition"]
    assert len(crds) == 7 and {claim.owned_with for claim in crds} == {"Namespace/dynamo-system"}
    live = {claim.ref: {} for claim in crds} | {"Namespace/dynamo-system": {OWNER_ANNOTATION: OWNER}}
    assert ownership.ownership_problems(crds, live, [], {}, OWNER, []) == []


def test_after_a_destroy_the_crds_left_behind_are_refused_once_naming_both_causes(catalog):
    """`destroy` leaves the CRDs (and the operator's carry no annotation of ours) and deletes the platform
    namespace: the next `up` cannot tell them from another install's, so it asks for cluster.adopt."""
    stack = build_stack(rolled_back_raw(), catalog, with_hf_token=False, owner=OWNER)
    crds = [claim for claim in ownership.claims(stack) if claim.kind == "CustomResourceDefinition"]
    (problem,) = ownership.ownership_problems(crds, {claim.ref: {} for claim in crds}, [], {}, OWNER, [])
    assert problem.key == "gpt-oss-infra:release.dynamo"
    assert "another Dynamo install applied them, or one this stack's `pulumi destroy` removed left them" in (
        problem.message
    )
    assert "'CustomResourceDefinition/dynamographdeployments.nvidia.com'" in problem.message
    # the program's own, from an earlier `up` (their annotation), pass however the namespace is
    assert ownership.ownership_problems(crds, {c.ref: {OWNER_ANNOTATION: OWNER} for c in crds}, [], {}, OWNER, []) == []


def test_adopting_what_is_not_in_the_cluster_is_refused():
    """A NamespacePatch of a namespace that is not there would create it (server-side apply), and leave it."""
    (problem,) = ownership.ownership_problems([NAMESPACE], {}, [], {}, OWNER, [NAMESPACE.ref])
    assert (problem.key, problem.message) == (
        "gpt-oss-infra:cluster.adopt",
        "Namespace/monitoring is not in the cluster: remove it from cluster.adopt",
    )


def test_an_adopted_platform_namespace_makes_the_crds_its_operator_applied_the_stacks(catalog):
    """Re-up of a 1.6.1 stack that adopted its platform namespace: the namespace carries adopted-by, the
    CRDs its operator applied carry nothing of ours; another stack's CRD still says whose it is."""
    stack = build_stack(existing_raw(adopt=["Namespace/dynamo-system"]), catalog, with_hf_token=False, owner=OWNER)
    (graphs,) = [claim for claim in ownership.claims(stack) if claim.kind == "CustomResourceDefinition"]
    live = {graphs.ref: {}, "Namespace/dynamo-system": {ADOPTED_ANNOTATION: OWNER}}
    assert ownership.ownership_problems([graphs], live, [], {}, OWNER, ["Namespace/dynamo-system"]) == []
    theirs = {graphs.ref: {OWNER_ANNOTATION: "team-b/infra/prod"}}
    (problem,) = ownership.ownership_problems([graphs], theirs, [], {}, OWNER, [])
    assert "it belongs to stack team-b/infra/prod" in problem.message


def test_crds_adopted_on_a_release_whose_program_applied_them_stay_adoptable_after_upgrading(catalog):
    """1.2.1 claimed all seven CRDs; 1.6.1's operator applies them and the stack claims one: the entries
    a stack listed on 1.2.1 still name Dynamo CRDs of its release."""
    crds = [f"CustomResourceDefinition/{c['metadata']['name']}" for c in catalog.dynamo_versions["1.2.1"].crds()]
    stack = build_stack(existing_raw(adopt=crds), catalog, with_hf_token=False, owner=OWNER)
    assert ownership.adoption_problems(stack, crds) == []


def test_on_an_existing_cluster_the_stack_makes_its_gpu_softwares_namespaces_keyed_by_what_asks_for_them(catalog):
    """Helm's createNamespace makes a namespace `helm uninstall` never deletes: on a cluster that outlives
    the stack, the stack makes them itself (and `destroy` deletes them)."""
    stack = build_stack(existing_raw(gpuSoftware="device-plugin", dcgmExporter=True), catalog, False, owner=OWNER)
    assert {release.chart.namespace for release in stack.gpu_software} == {"nvidia-device-plugin", "dcgm-exporter"}
    made = {namespace["metadata"]["name"]: namespace["metadata"] for namespace in stack.gpu_namespaces}
    assert sorted(made) == ["dcgm-exporter", "nvidia-device-plugin"]
    for metadata in made.values():
        assert metadata["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"  # they read the host
        assert metadata["labels"]["pod-security.kubernetes.io/warn"] == "restricted"
        assert metadata["labels"]["pod-security.kubernetes.io/enforce-version"] == "v1.36"
        assert metadata["annotations"] == {OWNER_ANNOTATION: OWNER}
    claimed = {claim.ref: claim.key for claim in ownership.claims(stack)}
    assert claimed["Namespace/nvidia-device-plugin"] == "gpt-oss-infra:cluster.gpuSoftware"
    assert claimed["Namespace/dcgm-exporter"] == "gpt-oss-infra:cluster.dcgmExporter"


def test_a_created_cluster_leaves_its_gpu_softwares_namespaces_to_helm(catalog):
    """They go with the cluster; the live stacks' namespaces, which Helm made, stay as they are."""
    stack = build_stack(
        namespace_config(example_entries("staging")), catalog, with_hf_token=False, api_key_clients=["ci"]
    )
    assert stack.gpu_software
    assert stack.gpu_namespaces == []


def test_an_unmarked_gpu_software_namespace_is_refused_with_each_way_it_came_there(catalog):
    """Before 0.6.7 Helm made it for this stack (the Namespace the stack makes now would fail to create over
    it, marked or not: adopt it, as it stays at destroy, as it did), an earlier destroy left it empty, or it
    holds the cluster's own GPU software. Its name is the chart's, so there is none to choose."""
    stack = build_stack(existing_raw(gpuSoftware="device-plugin"), catalog, False, owner=OWNER)
    claimed = [claim for claim in ownership.claims(stack) if claim.ref == "Namespace/nvidia-device-plugin"]
    (problem,) = ownership.ownership_problems(claimed, {claimed[0].ref: {}}, [], {}, OWNER, [])
    assert problem.key == "gpt-oss-infra:cluster.gpuSoftware"
    assert "Helm made it for this stack before 0.6.7: list 'Namespace/nvidia-device-plugin' in cluster.adopt" in (
        problem.message
    )
    assert "kubectl delete namespace nvidia-device-plugin" in problem.message
    assert "Otherwise gpt-oss-infra:cluster.gpuSoftware would install GPU software a second time" in problem.message
    assert "Choose another name" not in problem.message and "kubectl annotate" not in problem.message
    adopted = ["Namespace/nvidia-device-plugin"]
    assert ownership.ownership_problems(claimed, {claimed[0].ref: {}}, [], {}, OWNER, adopted) == []
    # someone's (another stack's, or applied with kubectl): never to adopt, rename or claim
    for live, whose in (
        ({OWNER_ANNOTATION: "o/p/s"}, "it belongs to stack o/p/s"),
        ({"kubectl.kubernetes.io/last-applied-configuration": "{}"}, "this stack did not make it"),
    ):
        (problem,) = ownership.ownership_problems(claimed, {claimed[0].ref: live}, [], {}, OWNER, [])
        assert whose in problem.message
        assert problem.message.endswith(
            "gpt-oss-infra:cluster.gpuSoftware would install GPU software a second time beside what runs there: "
            "leave it to its owner"
        )
        for phrase in ("0.6.7", "cluster.adopt", "Choose another name", "kubectl annotate"):
            assert phrase not in problem.message


def test_dcgm_exporters_namespace_is_keyed_by_observability_when_only_observability_asks_for_it(catalog):
    raw = existing_raw()
    raw["observability"] = {"enabled": True}
    stack = build_stack(raw, catalog, False, owner=OWNER)
    claimed = {claim.ref: claim.key for claim in ownership.claims(stack)}
    assert claimed["Namespace/dcgm-exporter"] == "gpt-oss-infra:observability.enabled"


@pytest.mark.parametrize(
    ("stack", "change", "key", "reason"),
    [
        ("staging", {"namespace": "dynamo-system"}, "namespace", "both the platform's namespace"),
        # under the key the stack file sets (staging leaves observability.namespace at its default)
        ("staging", {"namespace": "monitoring"}, "namespace", "both the workloads' namespace"),
        ("staging", {"observability": {"namespace": "gpt-oss"}}, "observability.namespace", "and the monitoring"),
        ("staging", {"namespace": "envoy-gateway-system"}, "namespace", "and Envoy Gateway's namespace"),
        # the guards' name is derived from platform.namespace: the key given the name is `namespace`
        ("staging", {"namespace": "dynamo-system-teardown"}, "namespace", "and the teardown guards' namespace"),
        (
            "staging",
            {"namespace": "kube-system"},
            "namespace",
            "kube-system exists on every cluster: choose a namespace other than default",
        ),
        # a created cluster's GPU software: Helm makes its namespace, which the stack's would clash with
        ("staging", {"namespace": "nvidia-device-plugin"}, "namespace", "and the GPU software's namespace"),
        (
            "existing-cluster",
            {"namespace": "nvidia-device-plugin", "cluster": {"gpuSoftware": "device-plugin"}},
            "namespace",
            "and the GPU software's namespace (gpt-oss-infra:cluster.gpuSoftware)",
        ),
        (
            "staging",
            {"modelCache": {"storageClassName": "gpt-oss-gp3"}},
            "modelCache.storageClassName",
            "block StorageClass",
        ),
    ],
)
def test_a_namespace_the_stack_would_make_twice_or_cannot_create_is_refused_by_its_key(
    stack, change, key, reason, catalog
):
    """Two Namespaces (or StorageClasses) of one name: the second would fail to create, after the first was
    made. A created cluster's own namespaces exist already there, and cluster.adopt is an existing cluster's."""
    raw = copy.deepcopy(namespace_config(example_entries(stack)))
    for name, value in change.items():
        raw[name] = raw[name] | value if isinstance(value, dict) else value
    (problem,) = refused(raw, catalog).problems
    assert problem.key == f"gpt-oss-infra:{key}"
    assert reason in problem.message


def test_an_existing_clusters_own_namespace_is_left_to_the_ownership_check(catalog):
    """`default` exists there: the check of the live cluster refuses it, unless cluster.adopt lists it."""
    raw = copy.deepcopy(namespace_config(example_entries("existing-cluster")))
    raw["namespace"] = "default"
    stack = build_stack(raw, catalog, with_hf_token=False)
    assert stack.namespace["metadata"]["name"] == "default"


def test_a_claim_is_never_keyed_by_the_namespace_of_monitoring_that_is_off(catalog):
    """With observability off its namespace is made by nobody: a refusal of the platform's names the platform's key."""
    raw = existing_raw()
    raw["observability"] = {"enabled": False, "namespace": "dynamo-system"}
    claimed = {claim.ref: claim.key for claim in ownership.claims(build_stack(raw, catalog, False))}
    assert claimed["Namespace/dynamo-system"] == "gpt-oss-infra:platform.namespace"
