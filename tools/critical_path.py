"""The critical path to serving of a planned stack: the chain of waits that ends last, by the
durations AWS and NVIDIA publish for each phase (configs/durations.yaml).

Each resource that is a phase (an EKS cluster, a node group, the weight download, a graph ...)
takes its phase's published minutes; a phase nobody publishes a figure for counts as 0 and is
named "not published". With most figures unpublished, the path is the chain with the most phases
to a smoke test (or to a graph that is not awaited yet), ties broken by the published minutes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpt_oss_infra.core.dynamo_graph import GRAPH_TYPES
from gpt_oss_infra.core.paths import CONFIG_DIR
from gpt_oss_infra.core.yaml_files import read_yaml
from gpt_oss_infra.tools.dependencies import direct_waits
from gpt_oss_infra.tools.pulumi_engine import Registration

DURATIONS = CONFIG_DIR / "durations.yaml"
COMPONENT_LABEL = "app.kubernetes.io/component"


class Phase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phase: str
    types: list[str] = []  # Pulumi type tokens
    kinds: list[str] = []  # Kubernetes kinds, whatever their apiVersion
    component: str | None = None  # for Jobs: the component label that makes one a phase
    labels: dict[str, str] = {}  # labels the resource also carries (the first phase that matches wins)
    minutes: float | None
    published: str
    source: str | None


@dataclass(frozen=True)
class PathStep:
    resource: str
    phase: Phase


def load_phases(path: Path = DURATIONS) -> list[Phase]:
    return [Phase.model_validate(entry) for entry in read_yaml(path)]


def critical_path(resources: list[Registration], phases: list[Phase]) -> list[PathStep]:
    """The steps of the critical path to serving, first to last."""
    by_name = {resource.name: resource for resource in resources}
    waits = direct_waits(resources)
    phase_of = {resource.name: _phase(resource, phases) for resource in resources}

    @cache
    def longest(name: str) -> tuple[int, float, tuple[str, ...]]:
        """(phases, published minutes, path) of the longest chain ending with `name`."""
        best = max((longest(dependency) for dependency in waits[name]), default=(0, 0.0, ()))
        phase = phase_of[name]
        if phase is None:
            return best
        return (best[0] + 1, best[1] + (phase.minutes or 0), (*best[2], name))

    ends = [name for name, r in by_name.items() if _phase(r, phases) and _is_serving_end(r)]
    if not ends:
        return []
    path = max(longest(name) for name in ends)[2]
    return [PathStep(name, phase_of[name]) for name in path]


def _phase(resource: Registration, phases: list[Phase]) -> Phase | None:
    labels = resource.inputs.get("metadata", {}).get("labels", {})
    return next(
        (
            p
            for p in phases
            if (resource.type in p.types or resource.type.rsplit(":", 1)[-1] in p.kinds)
            and (p.component is None or p.component == labels.get(COMPONENT_LABEL))
            and p.labels.items() <= labels.items()
        ),
        None,
    )


def _is_serving_end(resource: Registration) -> bool:
    """A smoke test, or a graph created without waiting (its nodes come later)."""
    labels = resource.inputs.get("metadata", {}).get("labels", {})
    if labels.get(COMPONENT_LABEL) == "smoke-test":
        return True
    return resource.type in GRAPH_TYPES and "pulumi.com/skipAwait" in resource.inputs["metadata"]["annotations"]


def render(steps: list[PathStep]) -> list[str]:
    """The summary's lines for the path."""
    if not steps:
        return []
    lines = [
        "## Critical path to serving (first `pulumi up`)",
        "",
        "The longest chain of waits, with what AWS and NVIDIA publish for each phase (configs/durations.yaml):",
        "",
    ]
    for number, step in enumerate(steps, 1):
        phase = step.phase
        figure = f"{phase.minutes:g} min" if phase.minutes is not None else "not published"
        lines.append(f"{number}. {phase.phase}, `{step.resource}`: {figure} ({phase.published})")
    published = sum(step.phase.minutes or 0 for step in steps)
    unknown = [step.phase.phase for step in steps if step.phase.minutes is None]
    lines += [
        "",
        f"At least {published:g} minutes by published figures"
        + (f", plus {len(unknown)} phase(s) with none published." if unknown else "."),
        "",
    ]
    return lines
