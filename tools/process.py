"""How a command's process starts and ends: the cyclic garbage collector tuned, and no teardown at exit.

Both are mypy's (mypy/build.py sets these thresholds; mypy/util.py hard_exit ends its process the same
way). Measured on make plan of gb200 (2 cores): a plan leaves about 460,000 objects and the SDK's
modules, and freeing them at a normal exit took 1.4-1.9 s of its 7; the default thresholds ran full
collections over those objects again and again while the plan built them (0.5-1 s).

Only the command line (`python -m gpt_oss_infra`) and the test session use these. The Pulumi program
that `pulumi up` runs keeps Python's defaults.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from typing import NoReturn

# Collect the youngest generation after 200,000 allocations (CPython's default: 700), the older ones
# after 30 collections of the one below.
GC_THRESHOLDS = (200_000, 30, 30)


def tune_gc() -> None:
    gc.set_threshold(*GC_THRESHOLDS)


def hard_exit(code: int) -> NoReturn:
    """End the process now, with `code`: what it printed is flushed, nothing is freed, and no exit
    handler runs. Every command closes its files and stops its processes before it returns."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_command(main: Callable[[], int]) -> NoReturn:
    """A command line's process: the collector tuned before `main` imports its command, and ended by hard_exit."""
    tune_gc()
    hard_exit(main())
