"""The values AWS accepts for what a stack file and the hardware catalog name directly, checked
before anything is registered, so that a refusal names the key rather than an AWS request.

Read from botocore's bundled data (offline, no credentials): the EC2 InstanceType and EKS AMITypes
enums of its service models, and the regions of its endpoint data. The program reads the part of that
data it uses from vendor/botocore/ (aws-models.json.gz: the operations configs/aws-api/mapping.yaml
names and every shape they reach, ENUMS_READ, the regions of REGIONS_READ), written from the pinned
botocore by `make vendor-json` and kept equal to it by a test: a plan used to spend a third of a
second loading botocore's whole models. What botocore states only in prose is quoted from its source:
  [az-codes] https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html
             "The code for an Availability Zone is its Region code followed by a letter identifier."
Whether an instance type is offered in the stack's zones is the account's answer, read at deploy
time (components/aws/lookups.py, core/render/aws/specs.py).
"""

from __future__ import annotations

import difflib
import functools
import gzip
import json
import re
from collections.abc import Iterable
from typing import Any

import botocore.model
from botocore.exceptions import UnknownServiceError

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.paths import VENDOR_DIR

AWS_MODELS = VENDOR_DIR / "botocore" / "aws-models.json.gz"
# Beside the mapping's operations: the enums read here whichever operations reach them, and the
# services whose regions are read.
ENUMS_READ = {"ec2": ("InstanceType",), "eks": ("AMITypes",)}
REGIONS_READ = ("ec2", "eks")


@functools.cache
def vendored_models() -> dict[str, Any]:
    """vendor/botocore/aws-models.json.gz: {"botocore": version, "models": {service: model},
    "regions": {service: [region]}}, each model botocore's with only the operations and shapes used."""
    with gzip.open(AWS_MODELS) as stream:
        models: dict[str, Any] = json.load(stream)
    return models


@functools.cache
def service_model(service: str) -> botocore.model.ServiceModel:
    """botocore's model of one AWS service, as botocore reads it, from the vendored part of it."""
    services = vendored_models()["models"]
    if service not in services:
        raise UnknownServiceError(service_name=service, known_service_names=", ".join(sorted(services)))
    return botocore.model.ServiceModel(services[service], service_name=service)


@functools.cache
def enum(service: str, shape: str) -> frozenset[str]:
    """The values of one enum shape of a service model, e.g. ("ec2", "InstanceType")."""
    return frozenset(service_model(service).shape_for(shape).enum)


@functools.cache
def regions(service: str) -> frozenset[str]:
    """Every region of every partition botocore's endpoint data has `service` (one of REGIONS_READ) in."""
    return frozenset(vendored_models()["regions"][service])


def eks_regions() -> frozenset[str]:
    """Every region of every partition botocore knows an EKS endpoint in."""
    return regions("eks")


def one_of(value: str, allowed: Iterable[str], what: str) -> str | None:
    """None when `value` is allowed; else what is allowed, with the closest values."""
    allowed = sorted(allowed)
    if value in allowed:
        return None
    closest = difflib.get_close_matches(value, allowed, n=3, cutoff=0.6)
    hint = f" (closest: {', '.join(closest)})" if closest else ""
    return f"{value!r} is not one of the {len(allowed)} {what}{hint}"


def instance_type_problem(key: str, instance_type: str) -> Problem | None:
    refused = one_of(instance_type, enum("ec2", "InstanceType"), "EC2 instance types botocore's ec2 model lists")
    return Problem(key, refused) if refused else None


def zone_problem(key: str, zone: str, region: str) -> Problem | None:
    if re.fullmatch(rf"{re.escape(region)}[a-z]", zone):
        return None
    return Problem(
        key,
        f'{zone!r} is not an availability zone of {region}: "The code for an Availability Zone is its Region '
        'code followed by a letter identifier" (docs.aws.amazon.com/global-infrastructure/latest/regions/'
        "aws-availability-zones.html)",
    )


def hardware_problems(source: str, name: str, ami_type: str, instance_types: Iterable[str]) -> list[Problem]:
    """One hardware catalog entry, used by a stack or not."""
    refused = one_of(ami_type, enum("eks", "AMITypes"), "AMI types botocore's eks model lists")
    problems = [Problem(f"{source}: {name}.amiType", refused)] if refused else []
    for instance_type in instance_types:
        found = instance_type_problem(f"{source}: {name}.instanceTypes.{instance_type}", instance_type)
        problems += [found] if found else []
    return problems
