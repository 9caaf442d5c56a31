"""make bench's second floor (tools/bench.py): the SDK registering a plan's resources on its own mocks, with
its generic classes and nothing of gpt_oss_infra: at least what any program that makes those resources pays
beyond importing the SDK (register says what it leaves out). make bench runs it by path, after the first
floor's imports, with the plan's resources.json as its argument (a CRD's spec as that file abridges it: its
manifest's name and digest).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pulumi

# The package of the project's own components' types (tools/plan.py writes them into resources.json too);
# written here, not imported, since this floor imports nothing of ours.
COMPONENT_PACKAGE = "gpt-oss-infra"
PROVIDER_PREFIX = "pulumi:providers:"


class _EchoMocks(pulumi.runtime.Mocks):
    """Each resource's state is its inputs. The plan's lookups ran in the program, not here."""

    def __init__(self) -> None:
        self.custom: dict[str, bool] = {}  # by name: a custom resource (or a provider), or a component

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.custom[args.name] = args.custom
        return f"{args.name}-id", args.inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        raise NotImplementedError(f"registration_floor answers no function: {args.token}")


def register(resources: list[dict[str, Any]]) -> pulumi.Output[list[str]]:
    """Every resource as resources.json lists it (parents before children), under its parent; their URNs.

    Without what resources.json does not hold as the SDK takes it: options (dependsOn, aliases), explicit
    providers, the typed classes' argument types. So this is at least what a program pays, not all of it."""
    made: dict[str, pulumi.Resource] = {}
    for resource in resources:
        kind, name, inputs = resource["type"], resource["name"], resource["inputs"]
        if name in made:  # parents are named by name alone (a program may repeat a name across types)
            raise SystemExit(f"registration_floor: more than one resource is named {name}")
        opts = pulumi.ResourceOptions(parent=made[resource["parent"]] if resource["parent"] else None)
        if kind.startswith(PROVIDER_PREFIX):
            made[name] = pulumi.ProviderResource(kind.removeprefix(PROVIDER_PREFIX), name, inputs, opts)
        elif kind.split(":")[0] == COMPONENT_PACKAGE:
            made[name] = pulumi.ComponentResource(kind, name, None, opts)
        else:
            made[name] = pulumi.CustomResource(kind, name, inputs, opts)
    return pulumi.Output.all(*(resource.urn for resource in made.values()))


def register_plan(resources_json: Path) -> None:
    """Register every resource of resources.json and print each one's URN, after "custom" or "component";
    exit with an error unless every one was registered."""
    resources = json.loads(resources_json.read_text())
    mocks = _EchoMocks()
    pulumi.runtime.set_mocks(mocks, project="registration-floor", stack="bench", preview=False)
    urns: list[str] = []
    # The SDK's own test runner: it returns once every registration, and the URNs' Output, are done.
    pulumi.runtime.test(lambda: register(resources).apply(urns.extend))()
    if len(urns) != len(resources):
        raise SystemExit(f"registration_floor: {len(urns)} of {len(resources)} resources registered")
    for urn in urns:
        print("custom" if mocks.custom[urn.rsplit("::", 1)[1]] else "component", urn)


if __name__ == "__main__":
    register_plan(Path(sys.argv[1]))
