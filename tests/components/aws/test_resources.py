"""core/render/aws/resources.py is the one description of what the program makes in AWS: every shipped
stack registers exactly its resources, in its order, with its inputs; and what AWS's API would refuse in
them is refused in the program's own process, before anything is registered."""

from __future__ import annotations

import pytest

from gpt_oss_infra.core.checks.aws_contract import planned
from gpt_oss_infra.core.placeholders import UNKNOWN
from gpt_oss_infra.core.render.aws.karpenter import karpenter_resources
from gpt_oss_infra.core.render.aws.resources import cluster_network, created_cluster
from gpt_oss_infra.tools.plan import as_preview
from tests.support import eks_stack_names, example_entries, run_entries

EKS_STACKS = eks_stack_names()
REGION = "us-east-2"  # every shipped EKS stack's aws:region


def matches(described, registered) -> bool:
    """`registered` is `described`, where an UNKNOWN of the description stands for any value."""
    if described == UNKNOWN:
        return True
    if isinstance(described, dict) and isinstance(registered, dict):
        return described.keys() == registered.keys() and all(matches(described[k], registered[k]) for k in described)
    if isinstance(described, list) and isinstance(registered, list):
        return len(described) == len(registered) and all(map(matches, described, registered))
    return described == registered


@pytest.mark.parametrize("stack", EKS_STACKS)
def test_each_stack_registers_in_aws_exactly_what_the_core_describes(stack, example_stack, eks_plan):
    built = example_stack(stack)
    load_balancers = built.gateways.load_balancers if built.gateways else None
    plan = eks_plan(stack).eks
    made = created_cluster("gptoss", built.config, plan, load_balancers).resources()
    if plan.karpenter is not None:  # an elastic pool's provisioner, after the rest
        cluster = cluster_network("gptoss-eks-cluster")
        made += karpenter_resources("gptoss-karpenter", built.config.cluster.name, REGION, cluster, plan.elastic)
    described = [planned(r) for r in made]
    run = run_entries(example_entries(stack), stack=stack)
    assert run.error is None, run.error
    registered = as_preview(run)
    assert [(r.type, r.name) for r in registered] == [(r.type, r.name) for r in described]
    for ours, theirs in zip(described, registered, strict=True):
        assert matches(ours.inputs, theirs.inputs), (ours.name, ours.inputs, theirs.inputs)
    # Not vacuous: on average more than one and a half inputs per resource are known values, compared as
    # such (IAM policy attachments, many with Karpenter, have two inputs, both known only at `up`).
    assert sum(value != UNKNOWN for r in described for value in r.inputs.values()) > 1.5 * len(described)


def test_the_comparison_catches_an_input_the_shell_would_change():
    assert matches({"a": UNKNOWN, "b": [1, 2]}, {"a": "x", "b": [1, 2]})
    assert not matches({"a": UNKNOWN, "b": [1, 2]}, {"a": "x", "b": [1, 3]})
    assert not matches({"a": 1}, {"a": 1, "extra": 2})


def test_a_stack_file_value_aws_would_refuse_is_refused_in_process_naming_its_key():
    """CloudWatch Logs takes only its listed retentions (1, 3, 5, 7, 14, 30, ...): 2 days is refused by
    GptOssStack itself, before anything is registered, under the stack file's key."""
    entries = example_entries("dev")
    entries["gpt-oss-infra:cluster"] = entries["gpt-oss-infra:cluster"] | {"logRetentionDays": 2}
    run = run_entries(entries, stack="dev")
    assert run.resources == []
    message = str(run.error)
    assert message.startswith("invalid stack config in Pulumi.dev.yaml:"), message
    assert "gpt-oss-infra:cluster.logRetentionDays: AWS would refuse it: gptoss-eks-logs: retentionInDays" in message
