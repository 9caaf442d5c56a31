"""core/dynamo.py: the vendored CRDs of every supported release are valid for the cluster, and each
unverified pin of a release is said with what would verify it."""

from __future__ import annotations

import kubernetes_validate
import pytest

from gpt_oss_infra.core.stack import build_stack


@pytest.mark.parametrize("version", ["1.0.0", "1.2.1"])
def test_the_vendored_crds_are_valid_for_the_cluster(catalog, version):
    """The CRDs the program applies pass kubernetes-validate --strict like every other object."""
    crds = catalog.dynamo_versions[version].crds()
    assert len(crds) == 7
    for crd in crds:
        assert kubernetes_validate.validate(crd, "1.33.0", strict=True) == "1.33", crd["metadata"]["name"]


def test_every_unverified_pin_of_the_stacks_release_is_a_warning_saying_what_would_verify_it(dev_raw, catalog):
    """Loud, in every plan and `pulumi up`: 1.6.1's chart version itself is not verified, and NGC's
    Helm repository is where `up` would fail if it has no such chart."""
    stack = build_stack(dev_raw, catalog, with_hf_token=False)
    pins = [w for w in stack.warnings if w.startswith("gpt-oss-infra:release.dynamo: Dynamo 1.6.1's ")]
    assert len(pins) == len(catalog.dynamo_versions["1.6.1"].spec.unverified) == 4
    assert pins[0] == (
        "gpt-oss-infra:release.dynamo: Dynamo 1.6.1's chart version 1.6.1 not verified: taken from another source "
        "than the release's own artifacts (configs/dynamo/versions.yaml); verify with helm show chart "
        "https://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform-1.6.1.tgz; make preflight asks NGC "
        "for it, and make check-versions"
    )
    verified = [v for v, dynamo in catalog.dynamo_versions.items() if not dynamo.spec.unverified]
    assert verified and all(not catalog.dynamo_versions[v].unverified_pins() for v in verified)
