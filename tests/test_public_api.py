"""The public API: its component schema as Pulumi's own analyzer derives it (what every language's SDK
is generated from), and the contract pinned in tests/data/public-api.json, which changes only with a
CHANGELOG entry and a version bump."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

import gpt_oss_infra
from gpt_oss_infra.component_schema import api_summary, component_schema
from gpt_oss_infra.components import arguments
from gpt_oss_infra.components.provider_host import KeyedRefusalProvider

ROOT = Path(__file__).resolve().parent.parent
PINNED = ROOT / "tests" / "data" / "public-api.json"


@pytest.fixture(scope="module")
def schema() -> dict:
    return component_schema()


def test_the_schema_has_every_public_component_with_described_inputs_and_outputs(schema):
    assert sorted(schema["resources"]) == sorted(f"gpt-oss-infra:index:{c.__name__}" for c in gpt_oss_infra.COMPONENTS)
    described = 0
    for token, resource in schema["resources"].items():
        assert resource["isComponent"] and resource["description"], token
        for name, spec in [*resource["inputProperties"].items(), *resource["properties"].items()]:
            assert spec.get("description"), f"{token}.{name} has no description (a docstring under its annotation)"
            described += 1
    for token, type_ in schema["types"].items():  # the object types inputs take (GptOssDeployment's endpoint)
        assert type_["properties"], token
        for name, spec in type_["properties"].items():
            assert spec.get("description"), f"{token}.{name} has no description"
            described += 1
    assert described >= 8


def test_descriptions_name_arguments_as_the_schema_spells_them(schema):
    """The descriptions become the doc comments of every language's generated SDK: an argument named there as
    its Python docstring spells it (node_pool, api_keys) would name nothing in TypeScript or Go."""
    python_names = [*arguments.schema_spelling(gpt_oss_infra.COMPONENTS), "depends_on"]
    descriptions = _descriptions(schema)
    python_spelt = [d for d in descriptions if any(re.search(rf"(?<!\w){name}(?!\w)", d) for name in python_names)]
    assert python_spelt == []
    assert any("nodePool" in d for d in descriptions) and any("dependsOn" in d for d in descriptions)
    # The component provider serves this schema.
    served = KeyedRefusalProvider(gpt_oss_infra.COMPONENTS, gpt_oss_infra.PACKAGE, None, gpt_oss_infra.__version__)
    assert json.loads(served.schema or "{}") == schema


def _descriptions(value) -> list[str]:
    if isinstance(value, dict):
        own = [value["description"]] if isinstance(value.get("description"), str) else []
        return own + [d for key, item in value.items() if key != "description" for d in _descriptions(item)]
    if isinstance(value, list):
        return [d for item in value for d in _descriptions(item)]
    return []


def test_the_stack_component_takes_its_config_as_a_plain_value_and_secrets_as_inputs(schema):
    inputs = schema["resources"]["gpt-oss-infra:index:GptOssStack"]["inputProperties"]
    # Rendering reads the config before anything exists: it cannot wait for another resource's output.
    assert inputs["config"]["plain"] is True
    assert "plain" not in inputs["hfToken"] and "plain" not in inputs["ngcApiKey"]
    assert schema["resources"]["gpt-oss-infra:index:GptOssStack"]["requiredInputs"] == ["config"]


def test_the_public_api_is_the_pinned_one(schema):
    current = {
        "version": gpt_oss_infra.__version__,
        "names": sorted(gpt_oss_infra.__all__),
        **api_summary(schema),
    }
    pinned = json.loads(PINNED.read_text())
    changed = {key for key in current if current[key] != pinned[key]} - {"version"}
    assert not changed, (
        f"the public API changed ({', '.join(sorted(changed))}): bump the version, add its CHANGELOG.md entry, "
        f"and write the new contract to {PINNED.relative_to(ROOT)}"
    )
    assert pinned["version"] == gpt_oss_infra.__version__


def test_the_version_is_one_in_pyproject_the_package_and_the_changelog():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == gpt_oss_infra.__version__
    assert re.match(r"^\d+\.\d+\.\d+$", project["version"])
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    assert headings[0] == gpt_oss_infra.__version__, "CHANGELOG.md's newest entry is not this version"
    # Where the docs and the example tell a user which release to install (`...@v0.2.0` was left behind).
    named = {
        str(path.relative_to(ROOT)): re.findall(r"@v(\d+\.\d+\.\d+)", path.read_text())
        for path in [ROOT / "docs" / "components.md", ROOT / "examples" / "own-cluster" / "requirements.txt"]
    }
    assert named == {path: [gpt_oss_infra.__version__] for path in named}


def test_a_changed_input_is_caught_by_the_pin(schema):
    """The pin sees a renamed input (a breaking change to every language's SDK)."""
    renamed = json.loads(json.dumps(schema))
    inputs = renamed["resources"]["gpt-oss-infra:index:GptOssStack"]["inputProperties"]
    inputs["huggingFaceToken"] = inputs.pop("hfToken")
    assert api_summary(renamed)["resources"] != json.loads(PINNED.read_text())["resources"]
