"""The component provider that hosts the public components for a program of another Pulumi language
(provider/__main__.py runs host()): the SDK's ComponentProvider, with its refusals keyed by argument.

The SDK wraps whatever a component's __init__ raises in an error of its own, which the engine then
shows as one text with a Python stack. A refusal of ours is an InputPropertiesError here
(components/arguments.py), taken out of that wrapper, so the caller's engine shows each problem under
its property path, as its language spells it, with no stack; a RunError (GptOssStack given an AWS
provider) is taken out too, and shown as its message alone."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.provider import main
from pulumi.provider.experimental.component import ComponentProvider

from gpt_oss_infra.components.arguments import described_in_schema_spelling, serve_other_languages
from gpt_oss_infra.core.schema import closest_name


class KeyedRefusalProvider(ComponentProvider):
    def __init__(
        self,
        components: list[type[pulumi.ComponentResource]],
        name: str,
        namespace: str | None = None,
        version: str = "0.0.0",
    ) -> None:
        super().__init__(components, name, namespace, version)
        self.schema = json.dumps(described_in_schema_spelling(json.loads(self.schema or "{}"), components))

    def construct(self, name: str, resource_type: str, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        # The SDK maps only the schema's inputs onto the Args and drops the rest: a misspelt optional one
        # would leave its default silently (a program sends one where its language does not check the schema).
        if unknown := self._unknown_inputs(resource_type, inputs):
            component = resource_type.rsplit(":", maxsplit=1)[-1]
            raise pulumi.InputPropertiesError(f"invalid arguments of {component} {name!r}", unknown)
        try:
            return super().construct(name, resource_type, inputs, *args, **kwargs)
        except Exception as error:
            # The SDK raises its wrapper while handling ours: ours is the wrapper's context. Taken out of it, the
            # SDK's gRPC server sends an InputPropertiesError keyed by property path and a RunError as its message
            # alone; the wrapper it would send as one text with a Python stack.
            refused = error.__context__
            if isinstance(refused, pulumi.InputPropertiesError | pulumi.RunError):
                raise refused from None
            raise

    def _unknown_inputs(self, resource_type: str, inputs: Any) -> list[pulumi.InputPropertyErrorDetails]:
        """Each input the package's schema does not define for the component, with did-you-mean, in its
        nested objects (an endpoint) too."""
        resource = self._schema.get("resources", {}).get(resource_type)
        return _unknown(inputs, resource["inputProperties"], self._schema.get("types", {}), "") if resource else []

    @functools.cached_property
    def _schema(self) -> dict[str, Any]:
        """The package schema the SDK generated from the components (Provider.schema, JSON)."""
        parsed: dict[str, Any] = json.loads(self.schema or "{}")
        return parsed


def _unknown(
    inputs: Any, properties: dict[str, Any], types: dict[str, Any], within: str
) -> list[pulumi.InputPropertyErrorDetails]:
    if not isinstance(inputs, Mapping):
        return []
    found: list[pulumi.InputPropertyErrorDetails] = []
    for key, value in inputs.items():
        spec = properties.get(key)
        if spec is None:
            close = closest_name(key, properties)
            hint = f"did you mean {close!r}?" if close else f"it takes {', '.join(sorted(properties))}"
            found.append({"property_path": f"{within}{key}", "reason": f"not an argument: {hint}"})
        elif (nested := types.get(str(spec.get("$ref", "")).removeprefix("#/types/"))) is not None:
            found += _unknown(value, nested["properties"], types, f"{within}{key}.")
    return found


def host(components: list[type[pulumi.ComponentResource]], package: str, version: str) -> None:
    serve_other_languages(components)
    main(KeyedRefusalProvider(components, package, None, version), sys.argv[1:])
