"""Blocks of a docs page that a tool writes (the config reference, the modelled figures, the simulated ones):
the text between a begin and an end marker, HTML comments the page keeps. Tests keep each block equal to
what its tool would write."""

from __future__ import annotations

from pathlib import Path


def with_block(text: str, begin: str, end: str, body: str) -> str:
    """`text` with what stands between `begin` and `end` replaced by `body`."""
    before, _, rest = text.partition(begin)
    _, _, after = rest.partition(end)
    return f"{before}{begin}\n{body}\n{end}{after}"


def write_block(page: Path, begin: str, end: str, body: str) -> None:
    page.write_text(with_block(page.read_text(), begin, end, body))
