"""Rendered objects pass their real consumers' schemas, and those checks do reject bad input."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from core.stack import build_stack
from core.validation import DGD_SCHEMA_RELEASES, object_problems


@pytest.fixture
def dev_stack(dev_raw, catalog):
    return build_stack(dev_raw, catalog, with_hf_token=True)


def test_the_dgd_passes_both_crd_schemas(dev_stack):
    (serving,) = dev_stack.serving
    assert serving.graph["apiVersion"] == "nvidia.com/v1alpha1"
    assert DGD_SCHEMA_RELEASES == ("v1.0.0", "main")
    assert object_problems(serving.graph, "1.33") == []


@pytest.mark.parametrize(
    "path",
    [
        ("spec", "services", "TrtllmWorker"),
        ("spec", "services", "TrtllmWorker", "extraPodSpec", "mainContainer"),
        ("spec",),
    ],
)
def test_unknown_dgd_fields_are_rejected(dev_stack, path):
    graph = copy.deepcopy(dev_stack.serving[0].graph)
    node = graph
    for part in path:
        node = node[part]
    node["notAField"] = True
    problems = object_problems(graph, "1.33")
    assert len(problems) == len(DGD_SCHEMA_RELEASES)  # each schema refuses it
    assert all("'notAField' was unexpected" in problem for problem in problems)


def test_every_other_object_passes_kubernetes_validate_strict(dev_stack):
    others = [obj for obj in dev_stack.objects() if obj["kind"] != "DynamoGraphDeployment"]
    assert {obj["kind"] for obj in others} == {
        "Namespace",
        "StorageClass",
        "PersistentVolumeClaim",
        "Secret",
        "Job",
        "ConfigMap",
    }
    for obj in others:
        assert kubernetes_validate.validate(obj, "1.33.0", strict=True) == "1.33"


def test_kubernetes_validate_strict_rejects_an_unknown_field(dev_stack):
    pvc = copy.deepcopy(dev_stack.model_cache.pvc)
    pvc["spec"]["accessMode"] = ["ReadWriteMany"]
    (problem,) = object_problems(pvc, "1.33")
    assert "accessMode" in problem
