"""core/inputs/aws_values.py reads the part of botocore's data it uses from vendor/botocore/, through
botocore's own model classes, and never loads botocore's whole models."""

from __future__ import annotations

import subprocess
import sys

import pytest
from botocore.exceptions import UnknownServiceError

from gpt_oss_infra.core.inputs import aws_values
from gpt_oss_infra.core.paths import DATA_ROOT


def test_the_values_are_read_without_loading_botocores_models():
    # Before the vendored part, the first of these made a botocore session and read EC2's whole model
    # (4 MB of JSON) and the endpoint data: a third of a second of every plan.
    probe = (
        "import sys; from gpt_oss_infra.core.inputs import aws_values as v; "
        "assert 'p6e-gb200.36xlarge' in v.enum('ec2', 'InstanceType'); "
        "assert 'us-east-2' in v.regions('eks'); "
        "v.service_model('eks').operation_model('CreateNodegroup').input_shape; "
        "print(sorted(m for m in ('botocore.session', 'botocore.loaders', 'botocore.client') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=DATA_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_model_is_botocores_own_class_with_the_mapped_operations():
    model = aws_values.service_model("eks")
    assert type(model).__module__ == "botocore.model"
    shape = model.operation_model("CreateNodegroup").input_shape
    assert {"clusterName", "nodegroupName", "subnets", "nodeRole"} <= set(shape.required_members)
    assert "CAPACITY_BLOCK" in shape.members["capacityType"].enum
    assert "AL2023_x86_64_NVIDIA" in aws_values.enum("eks", "AMITypes")


def test_an_unknown_service_is_botocores_unknown_service_error():
    # aws_contract's mapping check names an unknown service as botocore would.
    with pytest.raises(UnknownServiceError, match="ec3"):
        aws_values.service_model("ec3")
