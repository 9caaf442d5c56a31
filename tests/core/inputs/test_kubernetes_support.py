"""Current Kubernetes by default: new stacks get the newest EKS version in standard support with add-on
builds pinned, the shipped stacks run one, and a stack whose version is in extended support, or leaves
standard support within 90 days, is warned about with what that costs (core/inputs/rules.py)."""

from __future__ import annotations

from datetime import date

import pytest

from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.config import EksClusterConfig, ExistingClusterConfig, namespace_config
from gpt_oss_infra.core.inputs.rules import kubernetes_support_warnings, parse_stack_config
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.plan import ROOT, stack_config_entries
from tests.core.inputs.test_rules import existing_nodes
from tests.support import eks_stack_names, example_entries, existing

TODAY = date(2026, 11, 26)
KEY = "gpt-oss-infra:cluster.kubernetesVersion"


def warnings_on(raw, catalog, today: date, region: str | None = "us-east-2") -> list[str]:
    _, warnings = parse_stack_config(raw, catalog, region=region, today=today)
    return [warning for warning in warnings if warning.startswith(KEY)]


def newest_supported(catalog, on: date) -> str:
    """The newest version with add-on builds pinned whose standard support has not ended on `on`."""
    ends = catalog.prices.eks_standard_support_ends
    supported = [v for v in catalog.addon_versions if ends[v] > on]
    return max(supported, key=lambda v: int(v.split(".")[1]))


def test_new_stacks_default_to_the_newest_pinned_version_in_standard_support(catalog):
    assert EksClusterConfig(kind="eks", name="c").kubernetes_version == "1.36"
    assert ExistingClusterConfig(kind="existing", name="c").kubernetes_version == "1.36"
    assert newest_supported(catalog, catalog.prices.read_on) == "1.36"
    assert catalog.addon_versions["1.36"]["aws-efs-csi-driver"].version == "v3.4.1-eksbuild.1"


def test_every_shipped_eks_stack_runs_a_version_in_standard_support_on_the_prices_date(catalog):
    """Judged on configs/prices.yaml's readOn, like the plan's cost lines, so the test does not age:
    no shipped stack is billed at the extended rate; the examples run 1.36, warned about nothing; the
    live stacks, stepping from 1.33 one minor version per `up`, are on 1.34 and warned to move on."""
    stacks = eks_stack_names()
    live = {"dev", "staging", "prod"}
    assert live | {"gb200", "trial"} <= set(stacks)
    read_on = catalog.prices.read_on
    for stack in stacks:
        raw = namespace_config(example_entries(stack))
        config, _ = parse_stack_config(raw, catalog, region="us-east-2", today=read_on)
        version = config.cluster.kubernetes_version
        assert catalog.prices.eks_standard_support_ends[version] > read_on, (stack, version)
        warnings = kubernetes_support_warnings(config, catalog, "us-east-2", today=read_on)
        if stack in live:
            assert version == "1.34"
            (warning,) = warnings
            assert warning.startswith(f"{KEY}: EKS 1.34 leaves standard support on 2026-12-02"), warning
            assert warning.endswith(
                "(a live cluster steps through 1.35, 1.36: EKS upgrades one minor version at a time)"
            )
        else:
            assert (version, warnings) == ("1.36", []), stack


def test_a_version_leaving_standard_support_within_90_days_is_warned_with_the_price(dev_raw, catalog):
    dev_raw["cluster"]["kubernetesVersion"] = "1.34"
    assert warnings_on(dev_raw, catalog, TODAY) == [
        f"{KEY}: EKS 1.34 leaves standard support on 2026-12-02 (in 6 days): then its control plane costs "
        "$0.60/h instead of $0.10/h in us-east-2, +$365 a month at 730 h (configs/prices.yaml); move to 1.36, "
        "the newest version in standard support with add-on builds pinned (a live cluster steps through "
        "1.35, 1.36: EKS upgrades one minor version at a time)"
    ]
    assert warnings_on(dev_raw, catalog, date(2026, 9, 2)) == []  # 91 days before
    (warning,) = warnings_on(dev_raw, catalog, date(2026, 9, 3))
    assert "leaves standard support on 2026-12-02 (in 90 days)" in warning


def test_a_version_in_extended_support_is_warned_with_the_price(dev_raw, catalog):
    dev_raw["cluster"]["kubernetesVersion"] = "1.33"
    (warning,) = warnings_on(dev_raw, catalog, TODAY)
    assert warning == (
        f"{KEY}: EKS 1.33 left standard support on 2026-07-29: in extended support, its control plane costs "
        "$0.60/h instead of $0.10/h in us-east-2, +$365 a month at 730 h (configs/prices.yaml); move to 1.36, "
        "the newest version in standard support with add-on builds pinned (a live cluster steps through "
        "1.34, 1.35, 1.36: EKS upgrades one minor version at a time)"
    )
    (on_its_last_day,) = warnings_on(dev_raw, catalog, date(2026, 7, 28))
    assert "leaves standard support on 2026-07-29 (in 1 day)" in on_its_last_day


def test_the_current_default_is_not_warned_until_90_days_before_its_end(dev_raw, catalog):
    dev_raw["cluster"]["kubernetesVersion"] = "1.36"
    assert warnings_on(dev_raw, catalog, TODAY) == []
    assert warnings_on(dev_raw, catalog, date(2027, 5, 3)) == []  # 91 days before 2027-08-02
    (warning,) = warnings_on(dev_raw, catalog, date(2027, 5, 4))
    assert warning.startswith(f"{KEY}: EKS 1.36 leaves standard support on 2027-08-02 (in 90 days)")
    assert warning.endswith(
        "no newer version has add-on builds pinned: pin one (configs/eks-addons.yaml, configs/prices.yaml)"
    )


@pytest.mark.parametrize(
    ("region", "said"),
    [
        ("eu-west-1", "the extended-support rate (price unknown: none verified for eu-west-1 in configs/prices.yaml)"),
        (None, "the extended-support rate (price unknown: no aws:region)"),
    ],
)
def test_where_the_regions_price_is_unknown_the_warning_says_so(dev_raw, catalog, region, said):
    dev_raw["cluster"]["kubernetesVersion"] = "1.33"
    (warning,) = warnings_on(dev_raw, catalog, TODAY, region=region)
    assert f"in extended support, its control plane costs {said}; move to 1.36" in warning


def test_an_existing_cluster_is_not_warned(dev_raw, catalog):
    """Its control plane is not the stack's to bill or to upgrade."""
    existing_nodes(existing(dev_raw, blockStorageClassName="gp3"))
    dev_raw["modelCache"] = {"storage": "existing", "storageClassName": "shared-rwx", "size": "1Ti"}
    assert warnings_on(dev_raw, catalog, TODAY) == []


def test_the_plan_lists_the_warning(dev_raw, catalog):
    """build_stack's warnings are the plan's (and the summary's); 1.33 is in extended support on any later day."""
    dev_raw["cluster"]["kubernetesVersion"] = "1.33"
    stack = build_stack(dev_raw, catalog, with_hf_token=False, api_key_clients=["ci"], region="us-east-2")
    assert any(w.startswith(f"{KEY}: EKS 1.33 left standard support on 2026-07-29") for w in stack.warnings)


def test_a_stack_file_on_a_version_without_pinned_add_ons_stays_refused(tmp_path, catalog):
    path = tmp_path / "Pulumi.old.yaml"
    path.write_text(
        (ROOT / "Pulumi.dev.yaml").read_text().replace('kubernetesVersion: "1.34"', 'kubernetesVersion: "1.32"')
    )
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(namespace_config(stack_config_entries(path)), catalog, region="us-east-2", today=TODAY)
    (problem,) = caught.value.problems
    assert problem.key == KEY
    assert "pinned for 1.33, 1.34, 1.35, 1.36 (configs/eks-addons.yaml)" in problem.message
