"""The cluster target seam: one module per `cluster.kind`, each with
- `plan(stack, catalog) -> ClusterPlan`: what it decides before any resource exists (it may read
  the cloud account); ConfigError refuses the stack there, with nothing registered;
- `aws_resources(stack, plan) -> list[AwsResource]`: what it will make in AWS (core/render/aws/
  resources.py), which AWS's API contract is checked on before anything is registered;
- `build(stack, plan, opts) -> ClusterTarget`: its one component (`opts`: its parent), and the small
  object the rest of the program uses (core.render.cluster_plan, components.targets.target).
Another cloud or cluster kind is a new module here and its config kind (core.inputs.config).
"""

from __future__ import annotations

from types import ModuleType

from gpt_oss_infra.components.targets import eks, existing

KINDS: dict[str, ModuleType] = {"eks": eks, "existing": existing}
