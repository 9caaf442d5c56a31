"""Kubernetes resource quantities (https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/)."""

from __future__ import annotations

import re
from decimal import Decimal

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: dict[str, Decimal | int] = {
    "m": Decimal("0.001"),
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
_QUANTITY = re.compile(r"^(?P<number>[+-]?(\d+(\.\d*)?|\.\d+))(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[mkMGTPE]?)$")


def parse_quantity(text: str) -> Decimal:
    """Return the quantity's value in base units; ValueError if `text` is not a quantity."""
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a Kubernetes quantity (e.g. 400Gi, 1Ti, 500G)")
    scale = _BINARY.get(match["suffix"]) or _DECIMAL[match["suffix"]]
    return Decimal(match["number"]) * scale


def gibibytes(text: str) -> float:
    return float(parse_quantity(text) / 2**30)
