"""The policy pack: `pulumi preview --policy-pack policy`. Constructing PolicyPack starts its gRPC
server and never returns, so the policies live in gpt_oss_policies (importable, unit-tested)."""

from gpt_oss_policies import POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(name="gpt-oss-infra", enforcement_level=EnforcementLevel.MANDATORY, policies=POLICIES)
