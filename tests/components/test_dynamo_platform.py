"""components/dynamo_platform.py: the Dynamo platform's CRDs, namespace, NGC pull secret and pinned Helm release,
as GptOssStack has the block make them (DynamoPlatform.of_stack)."""

from __future__ import annotations

import json

import pulumi
import pytest

from gpt_oss_infra.components.dynamo_platform import DecidedPlatform, DynamoPlatform
from gpt_oss_infra.components.kubernetes import docker_config_json
from gpt_oss_infra.core.dynamo import CHART
from tests.components.conftest import (
    SYSTEM_READY,
    assert_on_the_cluster,
    is_secret,
    on_stand_in_cluster,
    string_data_is_secret,
    unwrap_secret,
)

NGC_KEY = "nvapi-component-test-key"
PLATFORM = "gpt-oss-infra:index:DynamoPlatform"


def nvcr_credentials(key: str) -> str:
    return json.dumps({"auths": {"nvcr.io": {"username": "$oauthtoken", "password": key}}})


def test_docker_config_json_is_a_secret_even_from_a_plain_key(engine):
    def program():
        config = docker_config_json(pulumi.Output.from_input(NGC_KEY))
        return {"config": config, "secret": is_secret(config)}

    assert engine.run(program) == {"config": nvcr_credentials(NGC_KEY), "secret": True}


def build_platform(engine, objects, ngc_api_key):
    def program():
        key = pulumi.Output.secret(ngc_api_key) if ngc_api_key else None
        decided = DecidedPlatform(objects, key, guards=None, gateway=None)
        platform = DynamoPlatform.of_stack("dynamo-platform", decided, opts=on_stand_in_cluster())
        return {
            "namespace": platform.namespace,
            "version": platform.version,
            "secret": string_data_is_secret(engine, "dynamo-platform-ngc-pull"),
        }

    return engine.run(program)


def test_crds_are_applied_by_the_program_and_outlive_it(engine, example_stack):
    objects = example_stack("dev").platform
    build_platform(engine, objects, NGC_KEY)
    crds = [f"dynamo-platform-crd-{crd['spec']['names']['plural']}" for crd in objects.crds]
    assert engine.names_of("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition") == crds
    for name, crd in zip(crds, objects.crds, strict=True):
        assert engine.inputs(name)["metadata"]["name"] == crd["metadata"]["name"]
        opts = engine.built[name].opts
        # The operator owns spec.conversion (its webhook); deleting a CRD would delete every object of its kind.
        assert opts.ignore_changes == ["spec.conversion"]
        assert opts.retain_on_delete is True


def test_the_release_waits_for_crds_namespace_and_pull_secret(engine, example_stack):
    objects = example_stack("dev").platform
    values = build_platform(engine, objects, NGC_KEY)
    # Read from the release, so whatever uses them waits for it.
    assert (values["namespace"], values["version"]) == (objects.namespace["metadata"]["name"], objects.dynamo.version)
    children = assert_on_the_cluster(engine, "dynamo-platform", PLATFORM)
    assert children[-3:] == ["dynamo-platform-namespace", "dynamo-platform-ngc-pull", "dynamo-platform-release"]
    release = engine.inputs("dynamo-platform-release")
    assert {key: release[key] for key in ("name", "chart", "version", "namespace", "skipCrds")} == {
        "name": CHART,
        "chart": objects.dynamo.chart_url,
        "version": objects.dynamo.version,
        "namespace": objects.namespace["metadata"]["name"],
        "skipCrds": True,
    }
    assert release["values"] == objects.values
    assert (release["timeout"], release["maxHistory"]) == (900, 10)
    assert engine.waits_for("dynamo-platform-release") == [SYSTEM_READY, *children[:-1]]
    assert engine.waits_for("dynamo-platform-ngc-pull") == [SYSTEM_READY, "dynamo-platform-namespace"]


def test_the_pull_secret_holds_the_ngc_key_only_as_a_secret(engine, example_stack):
    objects = example_stack("dev").platform
    values = build_platform(engine, objects, NGC_KEY)
    secret = engine.inputs("dynamo-platform-ngc-pull")
    assert secret["metadata"] == objects.pull_secret["metadata"]
    assert secret["type"] == "kubernetes.io/dockerconfigjson"
    assert unwrap_secret(secret["stringData"]) == {".dockerconfigjson": nvcr_credentials(NGC_KEY)}
    assert values["secret"] is True
    assert not [text for text in engine.plain_strings() if NGC_KEY in text]


@pytest.mark.parametrize(
    ("with_pull_secret", "ngc_api_key"),
    [(False, None), (True, None)],
    ids=["no NGC key", "a pull secret but no key to fill it"],
)
def test_no_pull_secret_without_an_ngc_key(engine, example_stack, with_pull_secret, ngc_api_key):
    objects = example_stack("dev", with_secrets=with_pull_secret).platform
    build_platform(engine, objects, ngc_api_key)
    assert engine.names_of("kubernetes:core/v1:Secret") == []
    assert engine.waits_for("dynamo-platform-release")[-1] == "dynamo-platform-namespace"
