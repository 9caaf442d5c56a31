"""Where the data lives: our own data (configs/), upstream material kept as published (vendor/, each
folder with its SOURCES.md and license), and the scripts the Jobs run (jobs/). In a clone these are
the repository's top-level folders; installed, the same folders inside the package."""

from __future__ import annotations

from pathlib import Path

DATA_ROOT = Path(__file__).resolve().parents[1]
CONFIG_DIR = DATA_ROOT / "configs"
VENDOR_DIR = DATA_ROOT / "vendor"
JOB_SCRIPTS_DIR = DATA_ROOT / "jobs"
