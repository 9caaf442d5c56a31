"""components/kubernetes.py: manifests as typed resources' arguments, and a scripted Job beside its script."""

from __future__ import annotations

import inspect

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import resource_args, scripted_job

MODULES = {
    "v1": k8s.core.v1,
    "batch/v1": k8s.batch.v1,
    "storage.k8s.io/v1": k8s.storage.v1,
    "apiextensions.k8s.io/v1": k8s.apiextensions.v1,
    "apps/v1": k8s.apps.v1,
    "rbac.authorization.k8s.io/v1": k8s.rbac.v1,
}


def test_resource_args_drop_the_kind_and_snake_case_only_top_level_keys(example_stack):
    storage_class = example_stack("dev").model_cache.storage_class
    args = resource_args(storage_class)
    assert set(args) == {"metadata", "provisioner", "parameters", "reclaim_policy", "volume_binding_mode"}
    assert args["volume_binding_mode"] == storage_class["volumeBindingMode"]
    # Nested keys keep Kubernetes' names, which the SDK passes through as they are.
    assert args["parameters"] == {"provisioningMode": "efs-ap", "directoryPerms": "775", "basePath": "/gpt-oss-infra"}


@pytest.mark.parametrize("stack_name", ["dev", "gb200", "b200-disagg", "existing-cluster"])
def test_every_manifest_becomes_keyword_arguments_its_resource_takes(example_stack, stack_name):
    stack = example_stack(stack_name)
    # The graphs are CustomResources, built from their fields rather than from resource_args.
    graphs = [id(serving.graph) for serving in stack.serving]
    manifests = [obj for obj in stack.objects() if id(obj) not in graphs] + stack.platform.crds
    assert {obj["kind"] for obj in manifests} >= {"Namespace", "Secret", "PersistentVolumeClaim", "ConfigMap", "Job"}
    for manifest in manifests:
        args_class = getattr(MODULES[manifest["apiVersion"]], f"{manifest['kind']}Args")
        accepted = set(inspect.signature(args_class.__init__).parameters) - {"__self__"}
        assert set(resource_args(manifest)) <= accepted, (manifest["kind"], manifest["metadata"]["name"])


def test_scripted_job_waits_for_its_script_and_for_what_it_is_given(engine, example_stack):
    scripted = example_stack("dev").model_cache.download
    made = {}

    def program():
        before = pulumi.ComponentResource("test:index:Ready", "before")
        owner = Component("gpt-oss-infra:test:Owner", "owner", None, pulumi.ResourceOptions(depends_on=[before]))
        given = pulumi.ComponentResource("test:index:Ready", "given")
        made["job"] = scripted_job(owner, "owner-job", scripted, [given], custom_timeouts=pulumi.CustomTimeouts("9m"))
        return {}

    engine.run(program)
    assert engine.children("owner") == ["owner-job-script", "owner-job"]
    assert engine.parent_type("owner-job") == engine.parent_type("owner-job-script") == "gpt-oss-infra:test:Owner"
    assert made["job"] is engine.built["owner-job"].resource
    assert engine.registered("owner-job").typ == "kubernetes:batch/v1:Job"
    assert engine.inputs("owner-job-script")["data"] == scripted.script["data"]
    assert engine.inputs("owner-job")["metadata"]["name"] == scripted.job["metadata"]["name"]
    assert engine.waits_for("owner-job") == ["before", "given", "owner-job-script"]
    assert engine.built["owner-job"].opts.custom_timeouts.create == "9m"
    assert engine.waits_for("owner-job-script") == ["before"]
