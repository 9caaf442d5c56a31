"""The serving-backend seam (core/backends/): a recipe names its backend, whose data (configs/backends/)
is checked when the catalog loads, and whose names fit what Kubernetes and the Dynamo CRDs accept."""

from __future__ import annotations

import shutil

import pytest
import yaml

from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR, load_catalog
from gpt_oss_infra.core.inputs.types import MAX_DEPLOYMENT_NAME


def test_every_recipe_names_a_known_backend(catalog):
    assert {recipe.backend for recipe in catalog.recipes.values()} <= set(catalog.backends)


@pytest.fixture
def config_copy(tmp_path):
    """A writable copy of configs/ (without the bulky vendored CRDs and charts the test never reads)."""
    copy = tmp_path / "configs"
    shutil.copytree(CONFIG_DIR, copy, ignore=shutil.ignore_patterns("*.gz"))
    return copy


def _edit_yaml(path, edit):
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_recipe_with_an_unknown_backend_is_refused(config_copy):
    recipe = config_copy / "recipes" / "b200-agg-low-latency.yaml"
    _edit_yaml(recipe, lambda data: data.update(backend="vlm"))
    with pytest.raises(ConfigError) as error:
        load_catalog(config_copy)
    (problem,) = error.value.problems
    assert problem.key == f"{recipe}: backend"
    assert problem.message == "unknown backend; known: trtllm, mocker"


def test_a_backend_efa_setting_the_engine_does_not_accept_is_refused(config_copy):
    backend = config_copy / "backends" / "trtllm.yaml"
    _edit_yaml(backend, lambda data: data["efa"]["engine"].update(cache_transceiver_confg={"backend": "NIXL"}))
    with pytest.raises(ConfigError) as error:
        load_catalog(config_copy)
    (problem,) = error.value.problems
    assert problem.key == f"{backend}: efa.engine.cache_transceiver_confg"
    assert "did you mean 'cache_transceiver_config'" in problem.message


def test_a_backend_file_with_an_unknown_key_is_refused(config_copy):
    backend = config_copy / "backends" / "trtllm.yaml"
    _edit_yaml(backend, lambda data: data.update(serviceName={"worker": "W"}))
    with pytest.raises(ConfigError) as error:
        load_catalog(config_copy)
    assert f"{backend}: serviceName" in [problem.key for problem in error.value.problems]


def test_every_backend_names_a_service_per_role(catalog):
    for backend in catalog.backends.values():
        assert set(backend.spec.service_names) == {"worker", "prefill", "decode"}


KUBERNETES_NAME_LIMIT = 63


def test_object_names_the_operator_derives_fit_kubernetes(catalog):
    """The operator names a worker's objects "<deployment>-<service name, lowercased>"; deployment
    names are bounded (core/inputs/types.py) so that the longest of these stays a valid name."""
    for backend in catalog.backends.values():
        for service in backend.spec.service_names.values():
            assert MAX_DEPLOYMENT_NAME + 1 + len(service) <= KUBERNETES_NAME_LIMIT, service


def test_every_backend_framework_is_one_every_release_accepts(catalog):
    """Or none, as Dynamo's own mocker graph template sets none (the field is optional in every CRD)."""
    for version in catalog.dynamo_versions.values():
        crds, _ = version.schema_crds()
        (crd,) = [crd for crd in crds if crd["spec"]["names"]["kind"] == "DynamoGraphDeployment"]
        (served,) = [v for v in crd["spec"]["versions"] if f"nvidia.com/{v['name']}" == version.spec.graph_api_version]
        accepted = served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["backendFramework"]["enum"]
        spec_schema = served["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert "backendFramework" not in spec_schema.get("required", []), version.version
        for backend in catalog.backends.values():
            assert backend.spec.framework in [*accepted, None], (version.version, backend.name)


def test_the_engine_view_reads_defaults_from_the_field_list(catalog):
    view = catalog.backends["trtllm"].view({"tensor_parallel_size": 4})
    assert view.tensor_parallel == 4
    assert view.pipeline_parallel == 1
    assert view.max_batch_size == 2048  # TorchLlmArgs.max_batch_size's default in the pinned field list
    assert view.kv_cache_fraction == 0.9
    assert view.kv_cache_dtype == "auto"
