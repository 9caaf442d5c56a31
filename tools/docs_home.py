"""MkDocs hook (mkdocs.yml `hooks:`): the site's home page is README.md, its links to docs/<page>.md made
relative to the site, so the two never say different things."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parent.parent / "README.md"


def home_page(readme: str) -> str:
    """README's text as the site's index.md: `](docs/page.md...)` becomes `](page.md...)`."""
    return re.sub(r"\]\(docs/", "](", readme)


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "index.md", content=home_page(README.read_text())))
    return files
