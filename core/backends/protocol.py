"""The types every serving backend shares (core/backends/__init__.py says what a backend is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import Field

from gpt_oss_infra.core.errors import Problem
from gpt_oss_infra.core.schema import StrictModel


class BackendEfa(StrictModel):
    engine: dict[str, Any]  # deep-merged into the worker's engine config
    env: dict[str, str]


class BackendSpec(StrictModel):
    """configs/backends/<name>.yaml"""

    title: str  # as people name it, in messages
    framework: str | None  # DynamoGraphDeployment spec.backendFramework (None: not set)
    command: list[str] = Field(min_length=1)
    service_names: dict[str, str]  # role (worker, prefill, decode) -> Dynamo service name
    engine_fields: str  # the engine field list, under the data root (core/paths.py): vendor/... or configs/...
    # A simulated engine (the mocker): no GPU, no weights (the cache holds the tokenizer only), answers
    # whose text may be empty (a smoke test counts their tokens), simulated throughput and latency.
    simulated: bool = False
    efa: BackendEfa | None  # what a worker whose KV cache crosses nodes gets on an EFA pool


@dataclass(frozen=True)
class EngineView:
    """An engine config as the rest of the core reads it, whatever the backend."""

    tensor_parallel: int
    pipeline_parallel: int
    expert_parallel: int | None
    attention_data_parallel: bool  # each rank serves its own sequences (KV per rank)
    kv_cache_fraction: float  # of the GPU memory left after the weights
    kv_cache_dtype: str  # "auto" (the model's) or a narrower type such as "fp8"
    max_seq_len: int | None
    max_batch_size: int  # per rank
    max_num_tokens: int  # tokens per iteration (prefill chunks and decode steps together)
    prefix_caching: bool  # KV blocks of a shared prompt prefix are reused
    chunked_prefill: bool  # a long prompt is prefilled over several iterations
    moe_backend: str | None


class Backend(Protocol):
    name: str
    spec: BackendSpec

    def check(self, engine: dict[str, Any], key_prefix: str) -> list[Problem]:
        """Every problem of an engine config (unknown keys, wrong values), each keyed under key_prefix."""

    def parallel_sizes(self, tensor: int, expert: int) -> dict[str, Any]:
        """The engine keys that give a worker these tensor and expert parallel sizes."""

    def consistency_problems(
        self, engine: dict[str, Any], gpus: int, overrides: dict[str, Any], overrides_key: str, gpus_key: str
    ) -> list[Problem]:
        """Problems of a resolved engine config with the worker's GPUs (e.g. TP x PP != GPUs)."""

    def view(self, engine: dict[str, Any]) -> EngineView: ...

    def simulation(self, engine: dict[str, Any]) -> str | None:
        """What a simulated engine's throughput and latency imitate, and from what; None for a real engine."""

    def config_files(self, role: str, engine: dict[str, Any]) -> dict[str, str | bytes]:
        """The files a worker of this role reads from its config directory (a mounted ConfigMap), by name:
        text, or bytes. Workers of one deployment share the directory: one name, one content."""

    def worker_args(
        self,
        model_path: str,
        served_model_name: str,
        engine: dict[str, Any],
        role: str,
        config_dir: str,
        recipe_args: list[str],
    ) -> list[str]:
        """The worker command's arguments, the recipe's own among them; the engine settings as flags, or as
        the files of config_files(), read from config_dir."""
