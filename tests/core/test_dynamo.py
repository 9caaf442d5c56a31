"""core/dynamo.py: the vendored CRDs of every supported release are valid for the cluster."""

from __future__ import annotations

import kubernetes_validate
import pytest


@pytest.mark.parametrize("version", ["1.0.0", "1.2.1"])
def test_the_vendored_crds_are_valid_for_the_cluster(catalog, version):
    """The CRDs the program applies pass kubernetes-validate --strict like every other object."""
    crds = catalog.dynamo_versions[version].crds()
    assert len(crds) == 7
    for crd in crds:
        assert kubernetes_validate.validate(crd, "1.33.0", strict=True) == "1.33", crd["metadata"]["name"]
