"""The request traces make simulate replays, generated from configs/simulation.yaml: Poisson arrivals at a rate
that follows a shape (a day's hours, or steady), lengths drawn around a recipe's traffic, and KV block hashes.
Rows are in the mooncake format dynamo.replay reads: `timestamp` (ms), `input_length`, `output_length` and
`hash_ids` (one per `traceBlockSize` tokens of the prompt; equal ids are equal blocks, so requests that share
them share a prefix). Deterministic: the same figures and seed give the same rows.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]


@dataclass(frozen=True)
class TraceShape:
    input_tokens: int  # the recipe's prompt length: the longest drawn
    output_tokens: int  # the recipe's answer length: the longest drawn
    length_floor: float  # the shortest drawn, as a share of the above
    block_tokens: int  # tokens per hash id


def hourly_rate(shares: list[float], peak_per_s: float, hour_s: float) -> Callable[[float], float]:
    """Requests per second at `t` seconds into a (compressed) day of `len(shares)` hours of `hour_s` seconds:
    linear between the hours' midpoints, flat before the first and after the last."""

    def rate(t: float) -> float:
        position = t / hour_s - 0.5
        lower = min(max(int(position // 1), 0), len(shares) - 1)
        upper = min(lower + 1, len(shares) - 1)
        weight = min(max(position - lower, 0.0), 1.0)
        return peak_per_s * (shares[lower] + (shares[upper] - shares[lower]) * weight)

    return rate


def arrivals(rate: Callable[[float], float], peak_per_s: float, seconds: float, seed: int) -> list[float]:
    """A non-homogeneous Poisson process's arrival times (s), by thinning one at the peak rate."""
    draw, now, times = random.Random(seed), 0.0, list[float]()
    while True:
        now += draw.expovariate(peak_per_s)
        if now >= seconds:
            return times
        if draw.random() * peak_per_s <= rate(now):
            times.append(now)


# Hash ids of the groups' shared blocks: group g's block b is g * GROUP_BLOCKS + b; a request's own blocks
# are numbered after every group's, so no own block equals a shared one.
GROUP_BLOCKS = 100_000


def rows(times: list[float], shape: TraceShape, seed: int, groups: int = 0, prefix_share: float = 0.0) -> list[Row]:
    """Mooncake rows for requests arriving at `times`: lengths uniform between the floor and the recipe's; with
    `groups`, each prompt's first `prefix_share` of blocks are its group's (shared), the rest its own."""
    draw, trace, next_own = random.Random(seed), [], groups * GROUP_BLOCKS
    for time_s in times:
        prompt = draw.randint(int(shape.input_tokens * shape.length_floor), shape.input_tokens)
        answer = draw.randint(int(shape.output_tokens * shape.length_floor), shape.output_tokens)
        blocks = -(-prompt // shape.block_tokens)
        shared = int(blocks * prefix_share) if groups else 0
        group = draw.randrange(groups) if groups else 0
        hash_ids = [group * GROUP_BLOCKS + block for block in range(shared)]
        hash_ids += range(next_own, next_own + blocks - shared)
        next_own += blocks - shared
        trace.append(
            {"timestamp": round(time_s * 1000), "input_length": prompt, "output_length": answer, "hash_ids": hash_ids}
        )
    return trace


def digest(trace: list[Row]) -> str:
    """The trace's SHA-256, over its JSON Lines text (what the replay reads)."""
    return hashlib.sha256("".join(json.dumps(row) + "\n" for row in trace).encode()).hexdigest()
