"""Shared pydantic plumbing: strict camelCase models and errors that name the exact key."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from gpt_oss_infra.core.errors import Problem

# RFC 1123 label: what Kubernetes accepts as a namespace, a Service name or a label value.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class StrictModel(BaseModel):
    """Unknown keys are refused with the list of keys that are allowed at that place."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = sorted(field.alias or name for name, field in cls.model_fields.items())
            unknown = sorted(set(data) - set(allowed))
            if unknown:
                raise PydanticCustomError(
                    "unknown_key",
                    "unknown key; allowed keys here: {allowed}",
                    {"key": unknown[0], "allowed": ", ".join(allowed)},
                )
        return data


def problems_from(error: ValidationError, key_prefix: str) -> list[Problem]:
    """Turn pydantic errors into Problems keyed like `gpt-oss-infra:deployments.gpt-oss.gpus`.

    `key_prefix` is joined to the first path element: "gpt-oss-infra:" for stack config,
    "configs/recipes/x.yaml: " for catalog files.
    """
    problems = []
    for err in error.errors(include_url=False, include_input=False):
        loc = [str(part) for part in err["loc"]]
        if err["type"] == "unknown_key":
            loc.append(err["ctx"]["key"])
        if loc[-1:] == ["[key]"]:  # a bad mapping key: the key itself is the culprit
            loc.pop()
        problems.append(Problem(key_prefix + ".".join(loc), _message(err)))
    return problems


def _message(err: dict[str, Any]) -> str:
    if err["type"] == "missing":
        return "required key is missing"
    return err["msg"].removeprefix("Value error, ")
