"""components/gpu_software_resources.py: one pinned Helm release per chart the core chose, on the cluster."""

from __future__ import annotations

import pytest

from gpt_oss_infra.components.gpu_software_resources import GpuSoftware, GpuSoftwareArgs
from tests.components.conftest import assert_on_the_cluster, on_stand_in_cluster

RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"


@pytest.mark.parametrize("stack_name", ["dev", "b200-disagg"])  # the device plugin; with EFA's too
def test_each_chart_is_one_release_of_its_pinned_version(engine, example_stack, stack_name):
    releases = example_stack(stack_name).gpu_software

    def program():
        return {"urn": GpuSoftware("gpu-software", GpuSoftwareArgs(releases), opts=on_stand_in_cluster()).urn}

    engine.run(program)
    children = assert_on_the_cluster(engine, "gpu-software", "gpt-oss-infra:gpu:GpuSoftware")
    assert children == [f"gpu-software-{release.chart.chart}" for release in releases]
    for release, name in zip(releases, children, strict=True):
        chart = release.chart
        registered = engine.registered(name)
        assert registered.typ == RELEASE_TYPE
        assert {key: registered.inputs[key] for key in ("chart", "version", "repositoryOpts", "namespace")} == {
            "chart": chart.chart,
            "version": chart.version,
            "repositoryOpts": {"repo": chart.repo},
            "namespace": chart.namespace,
        }
        assert registered.inputs["createNamespace"] is True
        assert registered.inputs["values"] == release.values
