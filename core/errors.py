"""The one error type bad input raises: every problem names the exact config key."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    key: str  # e.g. "gpt-oss-infra:deployments.gpt-oss.gpus"
    message: str  # what is wrong and what is allowed

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


class ConfigError(ValueError):
    """Invalid stack config or catalog data; raised before any resource is registered."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def refuse(problems: list[Problem]) -> None:
    """ConfigError with `problems`, if there are any."""
    if problems:
        raise ConfigError(problems)
