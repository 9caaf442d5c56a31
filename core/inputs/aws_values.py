"""The values AWS accepts for what a stack file and the hardware catalog name directly, checked
before anything is registered, so that a refusal names the key rather than an AWS request.

Read from botocore's bundled data (offline, no credentials): the EC2 InstanceType, EKS AMITypes
and CapacityTypes enums of its service models, and the regions of its endpoint data. What botocore
states only in prose is quoted from its source:
  [az-codes] https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html
             "The code for an Availability Zone is its Region code followed by a letter identifier."
Whether an instance type is offered in the stack's zones is the account's answer, read at deploy
time (components/aws/lookups.py, core/render/aws/specs.py).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable

import botocore.model
import botocore.session

from gpt_oss_infra.core.errors import Problem


@functools.cache
def _session() -> botocore.session.Session:
    return botocore.session.get_session()


@functools.cache
def service_model(service: str) -> botocore.model.ServiceModel:
    """botocore's model of one AWS service (one session for the program: each model is read once)."""
    return _session().get_service_model(service)


@functools.cache
def enum(service: str, shape: str) -> frozenset[str]:
    """The values of one enum shape of a service model, e.g. ("ec2", "InstanceType")."""
    return frozenset(service_model(service).shape_for(shape).enum)


@functools.cache
def regions(service: str) -> frozenset[str]:
    """Every region of every partition botocore's endpoint data has `service` in."""
    session = _session()
    return frozenset(
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions(service, partition)
    )


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
