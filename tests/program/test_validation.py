"""Every Kubernetes object of every stack, as the program registers it, passes strict validation."""

from __future__ import annotations

import kubernetes_validate
import pytest

from gpt_oss_infra.tools import plan
from tests.support import example_entries, run_entries


@pytest.mark.parametrize("stack", ["dev", "b200", "gb200", "h100", "h200", "existing-cluster"])
def test_every_kubernetes_object_of_every_stack_passes_strict_validation(stack):
    run = run_entries(example_entries(stack), stack=stack)
    # The vendored CRDs are checked once per Dynamo release (test_validation.py).
    manifests = [manifest for manifest in plan.manifests(run) if manifest["kind"] != "CustomResourceDefinition"]
    assert manifests
    checked = 0
    for manifest in manifests:
        if manifest["kind"] == "DynamoGraphDeployment":
            continue  # checked against the Dynamo CRD schemas (test_validation.py)
        if manifest.get("stringData") == "[secret]":
            manifest = manifest | {"stringData": {}}  # the plan hides the values, not the shape
        assert kubernetes_validate.validate(manifest, "1.33.0", strict=True) == "1.33"
        checked += 1
    assert checked >= 4
