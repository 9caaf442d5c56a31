"""core/checks/validation.py: rendered objects pass their real consumers' schemas, and those checks
reject bad input."""

from __future__ import annotations

import copy
import dataclasses

import kubernetes_validate
import pytest

from gpt_oss_infra.core.checks.validation import object_problems
from gpt_oss_infra.core.dynamo_graph import graph_components, render_graph
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from tests.support import example_entries, on_release, refused, stack_names_on


@pytest.mark.parametrize("version", ["1.0.0", "1.2.1", "1.3.0", "1.4.2", "1.5.1", "1.6.1"])
def test_the_dgd_passes_the_crd_of_its_dynamo_release(dev_raw, catalog, version):
    stack = build_stack(on_release(dev_raw, catalog, version), catalog, with_hf_token=True)
    (serving,) = stack.serving
    assert serving.graph["apiVersion"] == catalog.dynamo_versions[version].spec.graph_api_version
    assert stack.platform.dynamo.version == version
    assert object_problems(serving.graph, "1.33", stack.platform.dynamo) == []


def _with_unknown_field(graph: dict, where: str) -> dict:
    """The graph with `notAField` in its spec, a worker's pod or its main container."""
    if where == "spec":
        return graph | {"spec": graph["spec"] | {"notAField": True}}
    components = graph_components(graph)
    worker = components[1]
    if where == "pod":
        worker = dataclasses.replace(worker, pod=worker.pod | {"notAField": True})
    else:
        worker = dataclasses.replace(worker, pod=worker.pod | {"containers": [worker.main | {"notAField": True}]})
    metadata, framework = graph["metadata"], graph["spec"]["backendFramework"]
    return render_graph(graph["apiVersion"], metadata, framework, [components[0], worker, *components[2:]])


@pytest.mark.parametrize("where", ["spec", "pod", "main container"])
def test_unknown_dgd_fields_are_rejected(dev_stack, where):
    graph = _with_unknown_field(dev_stack.serving[0].graph, where)
    (problem,) = object_problems(graph, "1.33", dev_stack.platform.dynamo)
    assert "'notAField' was unexpected" in problem
    assert f"({dev_stack.platform.dynamo.schema_crds()[1]})" in problem


def test_every_other_object_passes_kubernetes_validate_strict(dev_stack):
    others = [obj for obj in dev_stack.objects() if obj["kind"] != "DynamoGraphDeployment"]
    assert {obj["kind"] for obj in others} == {
        "Namespace",
        "StorageClass",
        "PersistentVolumeClaim",
        "Secret",
        "Job",
        "ConfigMap",
        # the teardown guard (core/render/teardown.py)
        "Deployment",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
    }
    for obj in others:
        assert kubernetes_validate.validate(obj, "1.33.0", strict=True) == "1.33"


def test_kubernetes_validate_strict_rejects_an_unknown_field(dev_stack):
    pvc = copy.deepcopy(dev_stack.model_cache.pvc)
    pvc["spec"]["accessMode"] = ["ReadWriteMany"]
    (problem,) = object_problems(pvc, "1.33", dev_stack.platform.dynamo)
    assert "accessMode" in problem


@pytest.mark.parametrize("kubernetes_version", ["1.29", "1.33"])
def test_the_built_in_check_says_what_kubernetes_validate_says(dev_stack, kubernetes_version):
    """object_problems builds kubernetes-validate's validator once per kind: on valid and broken
    objects it agrees with kubernetes_validate.validate itself, error for error."""
    objects = [obj for obj in dev_stack.objects() if obj["kind"] != "DynamoGraphDeployment"]
    broken_pvc = copy.deepcopy(dev_stack.model_cache.pvc)
    broken_pvc["spec"]["accessModes"] = "ReadWriteMany"
    broken_namespace = copy.deepcopy(objects[0]) | {"spec": {"finalizers": 3}}
    for obj in [*objects, broken_pvc, broken_namespace]:
        try:
            kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)
            expected = []
        except kubernetes_validate.ValidationError as error:
            expected = [f"{'.'.join(map(str, error.path))}: {error.message} (Kubernetes {kubernetes_version})"]
        assert object_problems(obj, kubernetes_version, dev_stack.platform.dynamo) == expected
    assert all(
        object_problems(obj, kubernetes_version, dev_stack.platform.dynamo) for obj in (broken_pvc, broken_namespace)
    )


def test_undeclared_values_are_refused_before_anything_is_built(dev_raw, catalog):
    broken = dataclasses.replace(
        catalog.dynamo_versions["1.2.1"],
        spec=catalog.dynamo_versions["1.2.1"].spec.model_copy(update={"nats_switch": ["nats.enabled"]}),
    )
    on_release(dev_raw, catalog, "1.2.1")
    catalog = dataclasses.replace(catalog, dynamo_versions={"1.2.1": broken})
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:release.dynamo"
    assert problem.message.startswith("nats.enabled: not a value the dynamo-platform 1.2.1 chart declares")


def test_graphs_stored_before_an_upgrade_are_ones_the_newest_crd_still_serves(catalog):
    """A cluster upgraded from 1.2.1 holds v1alpha1 graphs until the program rewrites them as v1beta1
    (the same resource, by its alias). The newest CRD (main of 2026-08-21) still serves v1alpha1,
    deprecated, beside its storage version v1beta1, converting through the operator's webhook (whose
    code cannot run here), and every 1.2.1 graph of ours is valid under that v1alpha1 schema."""
    newest = catalog.dynamo_versions["1.6.1"]
    crds, _ = newest.schema_crds()
    (graph_crd,) = [crd for crd in crds if crd["spec"]["names"]["kind"] == "DynamoGraphDeployment"]
    versions = {v["name"]: v for v in graph_crd["spec"]["versions"]}
    assert versions["v1alpha1"]["served"] and versions["v1alpha1"].get("deprecated")
    assert versions["v1beta1"]["served"] and versions["v1beta1"]["storage"]
    assert graph_crd["spec"]["conversion"]["strategy"] == "Webhook"
    old = catalog.dynamo_versions["1.2.1"]
    for stack in stack_names_on(catalog, "1.2.1"):
        raw = on_release(namespace_config(example_entries(stack)), catalog, "1.2.1")
        for serving in build_stack(raw, catalog, with_hf_token=True, api_key_clients=["ci"]).serving:
            assert serving.graph["apiVersion"] == old.spec.graph_api_version
            assert object_problems(serving.graph, "1.33", newest) == [], stack


# A GPU pool as Karpenter would provision it (issue 35's elastic pools): the vendored Karpenter v1.14.1 CRDs
# (vendor/crds/karpenter/) validate the NodePool and EC2NodeClass the program will render for one.
KARPENTER_NODE_CLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "h200"},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@v20260801"}],
        "role": "gpt-oss-karpenter-node",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpt-oss"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpt-oss"}}],
        "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 1},
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "500Gi", "volumeType": "gp3", "encrypted": True}}
        ],
    },
}
KARPENTER_NODE_POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "h200"},
    "spec": {
        "template": {
            "metadata": {"labels": {"gpt-oss-infra/pool": "h200"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "h200"},
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5en.48xlarge"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                "expireAfter": "Never",
            },
        },
        "limits": {"nvidia.com/gpu": "16", "nodes": "2"},
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"},
    },
}


@pytest.mark.parametrize(
    "karpenter_object", [KARPENTER_NODE_CLASS, KARPENTER_NODE_POOL], ids=["EC2NodeClass", "NodePool"]
)
def test_karpenters_objects_are_validated_against_its_own_crds(dev_stack, karpenter_object):
    dynamo = dev_stack.platform.dynamo
    assert object_problems(karpenter_object, "1.36", dynamo) == []
    broken = copy.deepcopy(karpenter_object)
    broken["spec"]["noSuchField"] = 1
    assert any("noSuchField" in line for line in object_problems(broken, "1.36", dynamo))


def test_a_consolidation_policy_karpenter_does_not_know_is_caught(dev_stack):
    broken = copy.deepcopy(KARPENTER_NODE_POOL)
    broken["spec"]["disruption"]["consolidationPolicy"] = "Never"
    [problem] = object_problems(broken, "1.36", dev_stack.platform.dynamo)
    allowed = "['WhenEmpty', 'WhenEmptyOrUnderutilized', 'Balanced']"
    assert problem.startswith(f"spec.disruption.consolidationPolicy: 'Never' is not one of {allowed}")
