"""Typed values of the stack config: each idea checked in one place, named once."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import AfterValidator, Field

from core.inputs.quantity import parse_quantity
from core.inputs.schema import DNS_LABEL

# Objects are named after a deployment: "<name>-trtllmprefillworker" (the operator's, 20 more
# characters) and "<name>-smoke-<digest>" must stay within Kubernetes' 63.
MAX_DEPLOYMENT_NAME = 40


def _dns_label(value: str) -> str:
    if len(value) > 63 or not DNS_LABEL.match(value):
        raise ValueError(f"{value!r} must be a DNS label: lowercase letters, digits and '-', at most 63 characters")
    return value


def _deployment_name(value: str) -> str:
    _dns_label(value)
    if len(value) > MAX_DEPLOYMENT_NAME:
        raise ValueError(
            f"{value!r} is {len(value)} characters; at most {MAX_DEPLOYMENT_NAME}, so that the names derived "
            "from it (e.g. <name>-trtllmprefillworker) stay within Kubernetes' 63"
        )
    return value


def _size(value: str) -> str:
    if parse_quantity(value) <= 0:
        raise ValueError(f"{value!r} is not a size: it must be more than zero (e.g. 400Gi)")
    return value


def _retention(value: str) -> str:
    if not re.fullmatch(r"[1-9]\d*[hdw]", value):
        raise ValueError(
            f"{value!r} is not a retention Prometheus takes: a whole number of hours, days or weeks (12h, 15d, 2w)"
        )
    return value


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a CIDR block like 10.0.0.0/16") from None
    return value


def _commit_id(value: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", value):
        raise ValueError(f"{value!r} must be a full Hugging Face commit id: 40 lowercase hex characters")
    return value


def _pinned_image(value: str) -> str:
    name, _, tag = value.rpartition(":")
    if "@sha256:" not in value and (not name or "/" in tag or tag in ("", "latest")):
        raise ValueError(f"{value!r} must be pinned: registry/repository:tag (not latest) or @sha256:digest")
    return value


DnsLabel = Annotated[str, AfterValidator(_dns_label)]
DeploymentName = Annotated[str, AfterValidator(_deployment_name)]
Size = Annotated[str, AfterValidator(_size)]  # a Kubernetes quantity of storage, more than zero
Cidr = Annotated[str, AfterValidator(_cidr)]
Retention = Annotated[str, AfterValidator(_retention)]
CommitId = Annotated[str, AfterValidator(_commit_id)]
PinnedImage = Annotated[str, AfterValidator(_pinned_image)]
KubernetesVersion = Annotated[str, Field(pattern=r"^1\.\d{2}$")]
RoleArn = Annotated[str, Field(pattern=r"^arn:aws[\w-]*:iam::\d{12}:role/.+$")]
SubnetId = Annotated[str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")]
AvailabilityZone = Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")]
ReservationId = Annotated[str, Field(pattern=r"^cr-[0-9a-f]{17}$")]
# An ACM certificate (the NLB terminates TLS with it; ACM certificates cannot leave ACM).
AcmCertificateArn = Annotated[str, Field(pattern=r"^arn:aws[\w-]*:acm:[a-z0-9-]+:\d{12}:certificate/[0-9a-f-]{36}$")]
# A DNS name of at least two labels, lower case (RFC 1123), e.g. gpt-oss.example.com.
Hostname = Annotated[
    str, Field(max_length=253, pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$")
]
# An API client's name: a key of the apiKeys secret map and of the gateway's client-id header.
CLIENT_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"  # a DNS label: an API key's name in its Secret
ClientName = Annotated[str, Field(pattern=CLIENT_NAME_PATTERN)]
