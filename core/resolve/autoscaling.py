"""A deployment's `autoscaling` against its recipe: each worker role's bounds for Dynamo's SLA Planner.

An aggregated recipe has one worker role, bounded by `minReplicas` and `maxReplicas`; a disaggregated
one has a prefill and a decode role, each bounded by its own range. `replicas` is refused beside
`autoscaling`: the Planner owns the scaled workers' replicas (core/render/manifests.py leaves them out of
the graph, so that a later `pulumi up` does not reset what the Planner set). Whether the pool can hold
every role at its maximum is the placement check's (core/resolve/sizing.py), which reads
`Worker.most_replicas`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.inputs.catalog import Recipe
from gpt_oss_infra.core.inputs.config import AutoscalingConfig, DeploymentConfig

AGGREGATED_ROLE = "worker"
DISAGGREGATED_ROLES = ("prefill", "decode")


@dataclass(frozen=True)
class Drain:
    """How long a scaled worker's pod may take to stop (core/resolve/drain.py): its longest request at the
    recipe's modelled pace, and the release's own waits around it."""

    longest_tokens: int  # the longest answer its engine admits
    tpot_ms: float  # modelled time per output token, at the recipe's point
    ttft_ms: float  # modelled time to first token, at the recipe's point
    request_seconds: int  # the longest request's time: the worker's grace period after SIGTERM
    grace_seconds: int  # the pod's terminationGracePeriodSeconds
    basis: str  # what the figures are, and from what


@dataclass(frozen=True)
class RoleBounds:
    """How many workers of one role the Planner may run, and the stack config key that says so."""

    min_replicas: int
    max_replicas: int
    key: str  # e.g. gpt-oss-infra:deployments.<name>.autoscaling.decode


def role_bounds(deployment: DeploymentConfig, recipe: Recipe, key: str) -> tuple[dict[str, RoleBounds], list[Problem]]:
    """Each worker role -> its bounds ({} without autoscaling), and what is wrong with them. `key`: the
    deployment's."""
    autoscaling = deployment.autoscaling
    if autoscaling is None:
        return {}, []
    deployment_key, key = key, f"{key}.autoscaling"
    roles = tuple(recipe.workers)
    if roles == (AGGREGATED_ROLE,):
        bounds, problems = _aggregated(autoscaling, deployment.recipe, key)
    elif sorted(roles) == sorted(DISAGGREGATED_ROLES):
        bounds, problems = _disaggregated(autoscaling, deployment.recipe, key)
    else:  # the Planner scales an aggregated worker, or prefill and decode: nothing else
        return {}, [
            Problem(key, f"recipe {deployment.recipe}'s roles {list(roles)} are not ones Dynamo's Planner scales")
        ]
    for bound in bounds.values():
        if bound.min_replicas > bound.max_replicas:
            message = f"{bound.min_replicas} is more than maxReplicas {bound.max_replicas}"
            problems.append(Problem(f"{bound.key}.minReplicas", message))
    if "replicas" in deployment.model_fields_set:
        problems.append(
            Problem(
                f"{deployment_key}.replicas",
                "not with autoscaling: the Planner sets the workers' replicas (through the graph's scaling "
                "adapters, which a `pulumi up` must not reset); remove it. The graph starts with one worker per "
                "role, the operator's default, and the Planner keeps each role within minReplicas..maxReplicas",
            )
        )
    return bounds, problems


def _aggregated(autoscaling: AutoscalingConfig, recipe: str, key: str) -> tuple[dict[str, RoleBounds], list[Problem]]:
    problems = [
        Problem(f"{key}.{role}", f"recipe {recipe} is aggregated: give minReplicas and maxReplicas, not {role}")
        for role in DISAGGREGATED_ROLES
        if getattr(autoscaling, role) is not None
    ]
    if autoscaling.max_replicas is None:
        problems.append(Problem(f"{key}.maxReplicas", f"required for recipe {recipe}: the most workers"))
        return {}, problems
    return {AGGREGATED_ROLE: RoleBounds(autoscaling.min_replicas or 1, autoscaling.max_replicas, key)}, problems


def _disaggregated(
    autoscaling: AutoscalingConfig, recipe: str, key: str
) -> tuple[dict[str, RoleBounds], list[Problem]]:
    problems = [
        Problem(
            f"{key}.{field}",
            f"recipe {recipe} is disaggregated: give prefill and decode their own minReplicas and maxReplicas",
        )
        for field, value in (("minReplicas", autoscaling.min_replicas), ("maxReplicas", autoscaling.max_replicas))
        if value is not None
    ]
    bounds = {}
    for role in DISAGGREGATED_ROLES:
        given = getattr(autoscaling, role)
        if given is None:
            problems.append(Problem(f"{key}.{role}", f"required for recipe {recipe}: {{minReplicas, maxReplicas}}"))
            continue
        bounds[role] = RoleBounds(given.min_replicas, given.max_replicas, f"{key}.{role}")
    return bounds, problems
