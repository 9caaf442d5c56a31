"""The serving-backend seam: what is specific to the engine a recipe's workers run.

A recipe names its backend (`backend: trtllm`); the backend, made from its module and its data
(configs/backends/<name>.yaml), owns the worker's command and service names, the DGD's
backendFramework, the engine-config validator, how a worker's GPUs become parallel sizes, and an
`EngineView`: the few numbers the rest of the core (sizing, report) reads of an engine config.
Adding vLLM or SGLang is a module here, its data file, an entry in load_backends, and recipes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gpt_oss_infra.core.backends import mocker, trtllm
from gpt_oss_infra.core.backends.protocol import Backend, BackendEfa, BackendSpec, EngineView

__all__ = ["Backend", "BackendEfa", "BackendSpec", "EngineView", "load_backends"]


def load_backends(config_dir: Path) -> dict[str, Backend]:
    loaders: dict[str, Callable[[Path], Backend]] = {
        "trtllm": trtllm.TrtllmBackend.load,
        "mocker": mocker.MockerBackend.load,
    }
    return {name: load(config_dir) for name, load in loaders.items()}
