"""The Pulumi package schema of the public components (gpt_oss_infra.COMPONENTS), derived offline by
the Pulumi SDK's own component analyzer (its descriptions naming arguments as the schema does, as the
component provider serves it): what `pulumi package add` generates every language's SDK from."""

from typing import Any

from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema

import gpt_oss_infra
from gpt_oss_infra.components.arguments import described_in_schema_spelling


def component_schema() -> dict[str, Any]:
    analyzed = Analyzer(gpt_oss_infra.PACKAGE).analyze(gpt_oss_infra.COMPONENTS)
    schema = generate_schema(
        gpt_oss_infra.PACKAGE,
        gpt_oss_infra.__version__,
        None,
        analyzed["component_definitions"],
        analyzed["type_definitions"],
        sorted(analyzed["dependencies"], key=lambda dependency: f"{dependency.name}{dependency.version}"),
    )
    return described_in_schema_spelling(schema.to_json(), gpt_oss_infra.COMPONENTS)


def api_summary(schema: dict[str, Any]) -> dict[str, Any]:
    """The contract a change to the public API must own up to (CHANGELOG.md, a version bump): each
    component's inputs with their types, which are required and which must be plain values, and its
    outputs; and the fields of the object types its inputs take."""
    return {
        "resources": {
            token: {
                "inputs": _typed(resource["inputProperties"]),
                "required": sorted(resource.get("requiredInputs", [])),
                "outputs": {name: _type_of(spec) for name, spec in sorted(resource["properties"].items())},
            }
            for token, resource in sorted(schema["resources"].items())
        },
        "types": {
            token: {"fields": _typed(type_["properties"]), "required": sorted(type_.get("required", []))}
            for token, type_ in sorted(schema.get("types", {}).items())
        },
    }


def _typed(properties: dict[str, Any]) -> dict[str, str]:
    """Each property's type, and whether it must be a plain value."""
    return {
        name: _type_of(spec) + (" (plain)" if spec.get("plain") else "") for name, spec in sorted(properties.items())
    }


def _type_of(spec: dict[str, Any]) -> str:
    if "$ref" in spec:
        return str(spec["$ref"]).rsplit("/", 1)[-1]
    if spec.get("type") == "array":
        return f"list[{_type_of(spec['items'])}]"
    if spec.get("type") == "object" and "additionalProperties" in spec:
        return f"dict[str, {_type_of(spec['additionalProperties'])}]"
    return str(spec["type"])
