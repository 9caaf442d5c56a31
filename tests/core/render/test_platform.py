"""core/render/platform.py: the dynamo-platform values are all declared by the release's chart."""

from __future__ import annotations

import copy

import pytest

from gpt_oss_infra.core.dynamo import undeclared_values
from gpt_oss_infra.core.render.labels import SYSTEM_POOL_AFFINITY
from gpt_oss_infra.core.stack import build_stack
from tests.support import existing, on_release, refused


def test_existing_cluster_names_the_block_storage_class_nats_needs(dev_raw, catalog):
    existing(dev_raw)
    dev_raw["modelCache"] = {"storage": "existing", "storageClassName": "shared-rwx"}
    dev_raw["platform"] = {"nats": True}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:cluster.blockStorageClassName"
    assert "platform.nats" in problem.message and "StorageClass" in problem.message
    # On by default in 1.2.1's chart: refused there too without the key.
    del dev_raw["platform"]
    assert refused(on_release(copy.deepcopy(dev_raw), catalog, "1.2.1"), catalog).problems == [problem]
    # NATS off (1.6.1's default, or said): no platform volume, nothing to name.
    assert build_stack(copy.deepcopy(dev_raw), catalog, with_hf_token=False).platform.values["global"]["nats"] == {
        "install": False
    }
    dev_raw["platform"] = {"nats": False}
    values = build_stack(dev_raw, catalog, with_hf_token=False).platform.values
    assert values["global"]["nats"] == {"install": False}
    assert values["nats"] == {"podTemplate": {"merge": {"spec": {"tolerations": [], "affinity": SYSTEM_POOL_AFFINITY}}}}
    # Named: every PVC the chart creates asks for it.
    dev_raw["platform"] = {"nats": True}
    dev_raw["cluster"]["blockStorageClassName"] = "gp3"
    values = build_stack(dev_raw, catalog, with_hf_token=False).platform.values
    assert values["nats"]["config"]["jetstream"]["fileStore"]["pvc"]["storageClassName"] == "gp3"


@pytest.mark.parametrize(
    ("version", "nats", "crd_apply"),
    [
        ("1.0.0", True, False),
        ("1.2.1", True, False),
        ("1.3.0", True, True),  # NATS off by default from 1.4 (#11951); the operator applies the CRDs from 1.3
        ("1.4.2", False, True),
        ("1.5.1", False, True),
        ("1.6.1", False, True),
    ],
)
def test_platform_values_are_all_declared_by_the_release_chart(dev_raw, catalog, version, nats, crd_apply):
    stack = build_stack(on_release(dev_raw, catalog, version), catalog, with_hf_token=False)
    dynamo = stack.platform.dynamo
    assert undeclared_values(stack.platform.values, dynamo.chart_defaults()) == []
    values = stack.platform.values
    # One owner of the CRDs: the operator's crd-apply init container, or the program.
    assert values["dynamo-operator"]["upgradeCRD"] is crd_apply
    assert bool(stack.platform.crds) is not crd_apply
    # The NATS switch sits where each release reads it, at the release's default.
    if version == "1.0.0":
        assert values["nats"]["enabled"] is nats and values["dynamo-operator"]["nats"] == {"enabled": nats}
    else:
        assert values["global"]["nats"] == {"install": nats} and "enabled" not in values["nats"]


def test_the_1_0_nats_switch_is_refused_by_the_1_2_chart(dev_stack):
    """The values the program rendered for every release before: Dynamo 1.2's chart fails the install
    on nats.enabled and dynamo-operator.nats.enabled (its templates/validate-values.yaml)."""
    dynamo = dev_stack.platform.dynamo
    old_style = copy.deepcopy(dev_stack.platform.values)
    old_style["nats"]["enabled"] = True
    old_style["dynamo-operator"]["nats"] = {"enabled": True}
    assert undeclared_values(old_style, dynamo.chart_defaults()) == ["dynamo-operator.nats", "nats.enabled"]
