"""The CEL rules of Karpenter's CRDs (x-kubernetes-validations), which the API server evaluates and the
OpenAPI validation of core/checks/validation.py does not: every rule of the vendored v1.14.1 CRDs is
evaluated here with cel-python on the elastic pools' rendered EC2NodeClass and NodePool (a GPU pool's and
the trial's cpu pool's), with the two
Kubernetes CEL library functions the rules call (`split` of the strings library, `find` of the regex
library). Transition rules (those reading `oldSelf`) need an object's earlier version and are skipped.
A test-only check: cel-python is a development dependency, not one of `pulumi up`."""

from __future__ import annotations

import copy
import functools
import gzip
import json
import re
from typing import Any

import celpy
import pytest
from celpy import celtypes

from gpt_oss_infra.core.paths import VENDOR_DIR

CRDS = VENDOR_DIR / "crds" / "karpenter" / "v1.14.1"
SCHEMAS = {
    "EC2NodeClass": "karpenter.k8s.aws_ec2nodeclasses.json.gz",
    "NodePool": "karpenter.sh_nodepools.json.gz",
}


@functools.cache
def environment() -> celpy.Environment:
    """celpy's CEL environment, made once and only when a test evaluates a rule (it builds its parser: 0.2-0.3 s,
    which every pytest process collecting this module paid at import)."""
    return celpy.Environment()


def _split(value: Any, separator: Any) -> celtypes.ListType:
    return celtypes.ListType([celtypes.StringType(part) for part in str(value).split(str(separator))])


def _find(value: Any, pattern: Any) -> celtypes.StringType:
    found = re.search(str(pattern), str(value))
    return celtypes.StringType(found.group(0) if found else "")


def _schema(kind: str) -> dict[str, Any]:
    crds = json.loads(gzip.decompress((CRDS / SCHEMAS[kind]).read_bytes()))
    crd = crds[0] if isinstance(crds, list) else crds
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def cel_problems(manifest: dict[str, Any]) -> tuple[list[str], int]:
    """Each CEL rule the object breaks (its path and message), and how many rules were evaluated."""
    broken: list[str] = []
    evaluated = 0

    def walk(schema: dict[str, Any], value: Any, path: str) -> None:
        nonlocal evaluated
        for rule in schema.get("x-kubernetes-validations", []):
            if "oldSelf" in rule["rule"]:
                continue
            cel = environment()
            program = cel.program(cel.compile(rule["rule"]), functions={"split": _split, "find": _find})
            evaluated += 1
            if program.evaluate({"self": celpy.json_to_cel(value)}) != celtypes.BoolType(True):
                broken.append(f"{path}: {rule.get('message', rule['rule'])}")
        if isinstance(value, dict):
            for key, item in value.items():
                child = schema.get("properties", {}).get(key) or schema.get("additionalProperties")
                if isinstance(child, dict):
                    walk(child, item, f"{path}.{key}")
        elif isinstance(value, list) and "items" in schema:
            for index, item in enumerate(value):
                walk(schema["items"], item, f"{path}[{index}]")

    walk(_schema(manifest["kind"]), manifest, manifest["kind"])
    return broken, evaluated


def _objects(plan, pool: str) -> dict[str, dict[str, Any]]:
    karpenter = plan.eks.karpenter
    node_class = copy.deepcopy(karpenter.node_classes[pool])
    node_class["spec"]["role"] = "gptoss-karpenter-node-role-1a2b3c"  # as the shell fills it in
    return {"EC2NodeClass": node_class, "NodePool": karpenter.node_pools[pool]}


@pytest.fixture(scope="module")
def objects(eks_plan) -> dict[str, dict[str, Any]]:
    return _objects(eks_plan("autoscaling"), "b200")


@pytest.mark.parametrize(("stack", "pool"), [("autoscaling", "b200"), ("trial", "workers")])
def test_the_rendered_objects_keep_every_cel_rule_of_karpenters_crds(eks_plan, stack, pool):
    for manifest in _objects(eks_plan(stack), pool).values():
        broken, evaluated = cel_problems(manifest)
        assert broken == [], broken
        assert evaluated >= 10, (manifest["kind"], evaluated)  # the rules did run


def _changed(manifest: dict[str, Any], change) -> dict[str, Any]:
    changed = copy.deepcopy(manifest)
    change(changed["spec"])
    return changed


BROKEN = {
    "an EFA-only primary interface": (
        "EC2NodeClass",
        lambda spec: spec["networkInterfaces"][0].update(interfaceType="efa-only"),
        "networkInterfaces must include a primary interface with interfaceType='interface'",
    ),
    "a role and an instance profile": (
        "EC2NodeClass",
        lambda spec: spec.update(instanceProfile="KarpenterNodeInstanceProfile"),
        "must specify exactly one of ['role', 'instanceProfile']",
    ),
    "an alias beside another AMI term": (
        "EC2NodeClass",
        lambda spec: spec["amiSelectorTerms"].append({"id": "ami-0123456789abcdef0"}),
        "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
    ),
    "a tag Karpenter sets itself": (
        "EC2NodeClass",
        lambda spec: spec["tags"].update({"karpenter.sh/nodepool": "b200"}),
        "tag contains a restricted tag matching karpenter.sh/nodepool",
    ),
    "a label in Karpenter's domain": (
        "NodePool",
        lambda spec: spec["template"]["metadata"]["labels"].update({"karpenter.sh/pool": "b200"}),
        'label domain "karpenter.sh" is restricted',
    ),
}


@pytest.mark.parametrize(("kind", "change", "message"), BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_object_is_caught_by_its_cel_rule(objects, kind, change, message):
    broken, _ = cel_problems(_changed(objects[kind], change))
    assert any(message in problem for problem in broken), broken
