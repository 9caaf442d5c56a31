"""Typed values of the stack config: each idea checked in one place, named once."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import AfterValidator, Field

from gpt_oss_infra.core.quantity import parse_quantity
from gpt_oss_infra.core.schema import DNS_LABEL

# Objects are named after a deployment: "<name>-trtllmprefillworker" (the operator's, 20 more
# characters) and "<name>-smoke-<digest>" must stay within Kubernetes' 63.
MAX_DEPLOYMENT_NAME = 40


def is_dns_label(value: str) -> bool:
    return len(value) <= 63 and bool(DNS_LABEL.match(value))


def _dns_label(value: str) -> str:
    if not is_dns_label(value):
        raise ValueError(f"{value!r} must be a DNS label: lowercase letters, digits and '-', at most 63 characters")
    return value


def _deployment_name(value: str) -> str:
    """A DNS label of at most MAX_DEPLOYMENT_NAME characters: the refusal says 40, not a DNS label's 63."""
    if not DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} must be a DNS label of at most {MAX_DEPLOYMENT_NAME} characters: lowercase letters, digits "
            "and '-' (the names derived from it, e.g. <name>-trtllmprefillworker, stay within Kubernetes' 63)"
        )
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


def matching(pattern: str, what: str) -> AfterValidator:
    """A string of this shape, refused with what it should be (a user reads this, not the regex)."""

    def check(value: str) -> str:
        if not re.fullmatch(pattern, value):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return AfterValidator(check)


# Label syntax (kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set): a name
# part of at most 63 characters, alphanumeric at both ends, '-', '_' and '.' between; a key may have a prefix, a
# DNS subdomain of at most 253 characters, and '/'. A value is empty or a name part. The API server refuses others
# in a pod's nodeSelector, so a graph's pods would never be made.
_LABEL_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"


def _label_key(value: str) -> str:
    prefix, slash, name = value.rpartition("/")
    if not (
        re.fullmatch(_LABEL_NAME, name)
        and len(name) <= 63
        and (not slash or (re.fullmatch(_DNS_SUBDOMAIN, prefix) and len(prefix) <= 253))  # "/zone": an empty prefix
        and value.count("/") <= 1
    ):
        raise ValueError(
            f"{value!r} is not a label key: [a DNS subdomain prefix and '/'] a name of at most 63 characters, "
            "alphanumeric at both ends, with '-', '_' or '.' between (e.g. nvidia.com/gpu.product)"
        )
    return value


def _label_value(value: str) -> str:
    if value and not (re.fullmatch(_LABEL_NAME, value) and len(value) <= 63):
        raise ValueError(
            f"{value!r} is not a label value: empty, or at most 63 characters, alphanumeric at both ends, with "
            "'-', '_' or '.' between"
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
LabelKey = Annotated[str, AfterValidator(_label_key)]
LabelValue = Annotated[str, AfterValidator(_label_value)]
Retention = Annotated[
    str,
    matching(r"[1-9]\d*[hdw]", "a retention Prometheus takes: a whole number of hours, days or weeks (12h, 15d, 2w)"),
]
CommitId = Annotated[str, AfterValidator(_commit_id)]
PinnedImage = Annotated[str, AfterValidator(_pinned_image)]
KubernetesVersion = Annotated[str, matching(r"1\.\d{2}", "a Kubernetes minor version like 1.33")]
RoleArn = Annotated[
    str, matching(r"arn:aws[\w-]*:iam::\d{12}:role/.+", "an IAM role ARN: arn:aws:iam::<account>:role/<name>")
]
SubnetId = Annotated[str, matching(r"subnet-[0-9a-f]{8,17}", "a subnet id like subnet-0123456789abcdef0")]
AvailabilityZone = Annotated[str, matching(r"[a-z]{2}(-[a-z]+)+-\d[a-z]", "an availability zone like us-east-2b")]
ReservationId = Annotated[str, matching(r"cr-[0-9a-f]{17}", "a capacity reservation id like cr-0123456789abcdef0")]
# An ACM certificate (the NLB terminates TLS with it; ACM certificates cannot leave ACM).
AcmCertificateArn = Annotated[
    str,
    matching(
        r"arn:aws[\w-]*:acm:[a-z0-9-]+:\d{12}:certificate/[0-9a-f-]{36}",
        "an ACM certificate ARN: arn:aws:acm:<region>:<account>:certificate/<36-character id>",
    ),
]
# A DNS name of at least two labels, lower case (RFC 1123), e.g. gpt-oss.example.com.
Hostname = Annotated[
    str,
    Field(max_length=253),
    matching(
        r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+",
        "a lower-case DNS name of two labels or more, like gpt-oss.example.com",
    ),
]
# An API client's name: a key of the apiKeys secret map (so of its Secret) and the gateway's client-id header.
ClientName = DnsLabel
