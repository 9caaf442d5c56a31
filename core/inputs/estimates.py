"""configs/aiconfigurator.yaml (how NVIDIA AISimulate is asked) and configs/estimates.yaml (what it
answered, written by `make estimate`): modelled figures, each with the exact inputs it was modelled at."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PositiveFloat, PositiveInt

from gpt_oss_infra.core.schema import StrictModel

Goal = Literal["low-latency", "max-throughput", "disaggregated", "long-context"]


class GoalTargets(StrictModel):
    """The latency a serving goal's configurations must meet, and why."""

    ttft_ms: PositiveFloat
    tpot_ms: PositiveFloat
    why: str


class CalibrationSettings(StrictModel):
    largest_batch: PositiveInt  # per rank: TensorRT-LLM's default max_batch_size
    kv_cache_fraction: float = Field(gt=0, le=1)  # the published runs' free_gpu_memory_fraction


class AiconfiguratorSettings(StrictModel):
    model: str
    backend: str
    # architecture -> MoE backend (or "default") -> TensorRT-LLM's quantization algorithm
    moe_quantization: dict[Literal["hopper", "blackwell"], dict[str, str]]
    quantization_modes: dict[str, str]  # TensorRT-LLM's algorithm -> AISimulate's MoE quantization mode
    goals: dict[Goal, GoalTargets]
    flag_below_fraction_of_best: float = Field(gt=0, le=1)
    search_top: PositiveInt
    calibration: CalibrationSettings


class ModelledFigures(StrictModel):
    """AISimulate's answer at one point: per GPU and per user, for one replica of the workers."""

    ttft_ms: float
    tpot_ms: float
    output_tokens_per_second_per_gpu: float
    tokens_per_second_per_user: float
    concurrency: float
    gpus: PositiveInt
    memory_gb: dict[str, float]  # per GPU, by worker role
    warning: str | None = None  # AISimulate's own (a KV cache that does not hold the batch)


class ModelledPoint(StrictModel):
    """One point asked of AISimulate: its exact inputs, and its figures or why it has none."""

    system: str
    inputs: dict[str, Any]  # cli_estimate's keyword arguments
    not_inputs: dict[str, list[str]] = {}  # by role: settings it takes no input for, or assumes itself
    database: str | None = None  # the kernel database version that answered
    figures: ModelledFigures | None = None
    not_modelled: str | None = None  # AISimulate's reason (no kernel data for the layout)
    # The same point with one request alone (core/resolve/modelled.alone): its TTFT and TPOT are the
    # fastest these workers answer, the floor of any latency target.
    alone: ModelledFigures | None = None


class SearchRow(StrictModel):
    """One configuration a search found: its layout per worker role, and its figures."""

    mode: Literal["agg", "disagg"]
    workers: dict[str, dict[str, float]]  # role -> tp, dp, moe_tp, moe_ep, bs (per rank), memory, workers
    ttft_ms: float
    tpot_ms: float
    tokens_per_second_per_gpu: float  # over all the GPUs of the search, every replica
    tokens_per_second_per_user: float
    concurrency: float
    gpus: PositiveInt  # of one replica
    database: str | None = None


class RecipeSearch(StrictModel):
    """The best configurations at a recipe's GPUs, lengths and its goal's latency targets."""

    goal: Goal
    system: str
    inputs: dict[str, Any]  # cli_exp's experiments: agg and disagg at the same GPUs, lengths and targets
    best: list[SearchRow] = []  # best first, across modes; each meets the targets
    not_modelled: str | None = None  # why none: no kernel data, or none meets the targets (the closest named)


class SupportEntry(StrictModel):
    system: str
    aggregated: bool
    disaggregated: bool


class CalibrationPoint(StrictModel):
    """A published max-load figure, and AISimulate's at the same layout and the stated batch."""

    hardware: str
    layout: str
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    published_tokens_per_second_per_gpu: PositiveFloat
    source: str
    system: str
    inputs: dict[str, Any] | None = None  # the largest batch that fits; None: none fits, or not modelled
    database: str | None = None
    modelled_tokens_per_second_per_gpu: float | None = None
    not_modelled: str | None = None


class Estimates(StrictModel):
    """configs/estimates.yaml."""

    tool: str  # "NVIDIA AISimulate <version>"
    support: dict[str, SupportEntry]  # hardware -> what AISimulate supports for the model there
    recipes: dict[str, dict[int, ModelledPoint]]  # recipe -> worker GPUs (aggregated) or total (disagg) -> point
    searches: dict[str, RecipeSearch]  # recipe -> the search at its default GPUs
    calibration: list[CalibrationPoint]


class MaxLoadFigure(StrictModel):
    """A published max-load throughput (configs/performance.yaml `maxLoad`) and the layout it ran."""

    hardware: str
    layout: str  # as published: TP1, DEP2 (attention data parallel + expert parallel over 2 GPUs)
    gpus: PositiveInt
    attention_data_parallel: bool
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    output_tokens_per_second_per_gpu: PositiveFloat
    kv_cache_dtype: Literal["auto", "fp8"]
    moe_backend: str
    source: str
