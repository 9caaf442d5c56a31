"""core/render/platform.py: the dynamo-platform values are all declared by the release's chart."""

from __future__ import annotations

import copy

import pytest

from core.dynamo import undeclared_values
from core.render.labels import SYSTEM_POOL_AFFINITY
from core.stack import build_stack
from tests.support import existing, refused


def test_existing_cluster_names_the_block_storage_class_nats_needs(dev_raw, catalog):
    existing(dev_raw)
    dev_raw["modelCache"] = {"storage": "existing", "storageClassName": "shared-rwx"}
    (problem,) = refused(dev_raw, catalog).problems
    assert problem.key == "gpt-oss-infra:cluster.blockStorageClassName"
    assert "platform.nats" in problem.message and "StorageClass" in problem.message
    # NATS off: no platform volume, nothing to name.
    dev_raw["platform"] = {"nats": False}
    values = build_stack(dev_raw, catalog, with_hf_token=False).platform.values
    assert values["global"]["nats"] == {"install": False}
    assert values["nats"] == {"podTemplate": {"merge": {"spec": {"tolerations": [], "affinity": SYSTEM_POOL_AFFINITY}}}}
    # Named: every PVC the chart creates asks for it.
    dev_raw["platform"] = {"nats": True}
    dev_raw["cluster"]["blockStorageClassName"] = "gp3"
    values = build_stack(dev_raw, catalog, with_hf_token=False).platform.values
    assert values["nats"]["config"]["jetstream"]["fileStore"]["pvc"]["storageClassName"] == "gp3"


@pytest.mark.parametrize("version", ["1.0.0", "1.2.1"])
def test_platform_values_are_all_declared_by_the_release_chart(dev_raw, catalog, version):
    dev_raw["release"]["dynamo"] = version
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    dynamo = stack.platform.dynamo
    assert undeclared_values(stack.platform.values, dynamo.chart_defaults()) == []
    # The NATS switch sits where each release reads it.
    values = stack.platform.values
    if version == "1.2.1":
        assert values["global"]["nats"] == {"install": True} and "enabled" not in values["nats"]
    else:
        assert values["nats"]["enabled"] is True and values["dynamo-operator"]["nats"] == {"enabled": True}


def test_the_1_0_nats_switch_is_refused_by_the_1_2_chart(dev_stack):
    """The values the program rendered for every release before: Dynamo 1.2's chart fails the install
    on nats.enabled and dynamo-operator.nats.enabled (its templates/validate-values.yaml)."""
    dynamo = dev_stack.platform.dynamo
    old_style = copy.deepcopy(dev_stack.platform.values)
    old_style["nats"]["enabled"] = True
    old_style["dynamo-operator"]["nats"] = {"enabled": True}
    assert undeclared_values(old_style, dynamo.chart_defaults()) == ["dynamo-operator.nats", "nats.enabled"]
