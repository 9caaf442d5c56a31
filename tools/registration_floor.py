"""make bench's second floor (tools/bench.py): the SDK registering a plan's resources on its own mocks, with
its generic classes and nothing of gpt_oss_infra: what any program that makes those resources pays beyond
importing the SDK. make bench runs it by path, after the first floor's imports, with the plan's
resources.json as its argument (a CRD's spec as that file abridges it: its manifest's name and digest).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pulumi

# The resource types of the project's own components (tools/plan.py writes them into resources.json too).
COMPONENT_PACKAGE = "gpt-oss-infra"
PROVIDER_PREFIX = "pulumi:providers:"


class _EchoMocks(pulumi.runtime.Mocks):
    """Each resource's state is its inputs. The plan's lookups ran in the program, not here."""

    def __init__(self) -> None:
        self.registered = 0

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.registered += 1
        return f"{args.name}-id", args.inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        raise NotImplementedError(f"registration_floor answers no function: {args.token}")


def register(resources: list[dict[str, Any]]) -> None:
    """Every resource as resources.json lists it (parents before children), under its parent."""
    made: dict[str, pulumi.Resource] = {}
    for resource in resources:
        kind, name, inputs = resource["type"], resource["name"], resource["inputs"]
        opts = pulumi.ResourceOptions(parent=made[resource["parent"]] if resource["parent"] else None)
        if kind.startswith(PROVIDER_PREFIX):
            made[name] = pulumi.ProviderResource(kind.removeprefix(PROVIDER_PREFIX), name, inputs, opts)
        elif kind.split(":")[0] == COMPONENT_PACKAGE:
            made[name] = pulumi.ComponentResource(kind, name, None, opts)
        else:
            made[name] = pulumi.CustomResource(kind, name, inputs, opts)


def register_plan(resources_json: Path) -> None:
    resources = json.loads(resources_json.read_text())
    mocks = _EchoMocks()
    pulumi.runtime.set_mocks(mocks, project="registration-floor", stack="bench", preview=False)
    pulumi.runtime.test(register)(resources)  # the SDK's own test runner: returns once every registration is done
    print(f"{mocks.registered} resources registered")


if __name__ == "__main__":
    register_plan(Path(sys.argv[1]))
