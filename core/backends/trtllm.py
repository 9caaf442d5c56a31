"""Dynamo's TensorRT-LLM backend: its engine configs (`extra_llm_api_options`) and how workers run.

Engine configs are checked against the fields TRT-LLM accepts: vendor/trtllm/llm_args_fields.json
(see SOURCES.md there), for each TorchLlmArgs class its field names, annotation text and default.
TorchLlmArgs rejects unknown keys at start-up, after the pod has pulled a large image and loaded
60 GiB of weights; we refuse them at plan time instead, with the closest valid name.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from gpt_oss_infra.core.backends.protocol import BackendSpec, EngineView
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.paths import DATA_ROOT
from gpt_oss_infra.core.schema import problems_from
from gpt_oss_infra.core.yaml_files import read_yaml

TOP_LEVEL_CLASS = "TorchLlmArgs"
# KvCacheConfig.free_gpu_memory_fraction's default (the field list gives it as 0.9).
KV_CACHE_FRACTION_DEFAULT = 0.9

# Sections whose class is chosen by a discriminator key (the field list's notes say so):
# section -> (discriminator key, suffix of the candidate class names, class used when absent).
_DISCRIMINATED = {
    "cuda_graph_config": ("mode", "CudaGraphConfig", "DecodeCudaGraphConfig"),
    "speculative_config": ("decoding_type", "DecodingConfig", None),
    "sparse_attention_config": ("algorithm", "SparseAttentionConfig", None),
    "kv_cache_compression_config": ("algorithm", "CompressionConfig", None),
}
# Annotation words meaning "free-form value": no keys to check below this point.
_OPAQUE = re.compile(r"\b(Dict|dict|object|Any)\b")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"[\"']([^\"']*)[\"']")


# Annotation names -> the JSON/YAML value types they take, and the bound a constrained one adds
# (pydantic's NonNegativeInt and friends).
_SCALARS: dict[str, tuple[type[Any] | tuple[type[Any], ...], str | None]] = {
    "int": (int, None),
    "NonNegativeInt": (int, ">= 0"),
    "PositiveInt": (int, "> 0"),
    "float": ((int, float), None),
    "NonNegativeFloat": ((int, float), ">= 0"),
    "PositiveFloat": ((int, float), "> 0"),
    "bool": (bool, None),
    "str": (str, None),
}


@dataclass(frozen=True)
class EngineFields:
    classes: dict[str, dict[str, dict[str, Any]]]
    bounds: dict[str, dict[str, Any]]  # "<class>.<field>" -> min/max a validator enforces (bounds.yaml)

    @classmethod
    def load(cls, path: Path) -> EngineFields:
        data = json.loads(path.read_text())
        return cls(classes=data["classes"], bounds=read_yaml(path.parent / "bounds.yaml"))

    def default(self, key: str) -> str | None:
        """The default TRT-LLM uses for a top-level field, as annotation text (e.g. "2048")."""
        default: str | None = self.classes[TOP_LEVEL_CLASS][key]["default"]
        return default

    def int_default(self, key: str) -> int:
        """The default of a top-level field that TRT-LLM gives a number (e.g. max_batch_size)."""
        default = self.default(key)
        if default is None:
            raise ValueError(f"TensorRT-LLM's {TOP_LEVEL_CLASS}.{key} has no default")
        return int(default)

    def check(self, config: dict[str, Any], key_prefix: str) -> list[Problem]:
        """Every problem in `config`, each keyed `<key_prefix>.<path>`."""
        return self._check_class(TOP_LEVEL_CLASS, config, key_prefix)

    def _check_class(self, class_name: str, config: Any, key: str) -> list[Problem]:
        if not isinstance(config, dict):
            return [Problem(key, f"must be a mapping of {class_name} fields")]
        fields = self.classes[class_name]
        problems = []
        for name, value in config.items():
            child_key = f"{key}.{name}"
            if name not in fields:
                problems.append(Problem(child_key, _unknown_field_message(name, fields)))
                continue
            problems += self._check_value(name, fields[name]["type"], value, child_key)
            problems += self._bound_problems(self.bounds.get(f"{class_name}.{name}"), value, child_key)
        return problems

    @staticmethod
    def _bound_problems(bound: dict[str, Any] | None, value: Any, key: str) -> list[Problem]:
        if bound is None or not isinstance(value, int | float) or isinstance(value, bool):
            return []
        if ("min" in bound and value < bound["min"]) or ("max" in bound and value > bound["max"]):
            return [Problem(key, f"{value} is out of range: TensorRT-LLM refuses it ({bound['quote']!r})")]
        return []

    def _check_value(self, name: str, annotation: str, value: Any, key: str) -> list[Problem]:
        if name in _DISCRIMINATED and isinstance(value, dict):
            return self._check_discriminated(name, value, key)
        if _OPAQUE.search(annotation):
            return []
        nested = [word for word in _IDENTIFIER.findall(annotation) if word in self.classes]
        if nested and isinstance(value, dict):
            return self._check_class(nested[0], value, key)
        # A section whose annotation also admits a scalar (Union[X, str]) is not refused for one.
        if nested and value is not None and not _SCALARS.keys() & set(_IDENTIFIER.findall(annotation)):
            return [Problem(key, f"{value!r}: must be a mapping of {nested[0]} fields (TensorRT-LLM: {annotation})")]
        allowed = _literal_values(annotation)
        if allowed and isinstance(value, str) and value not in allowed:
            return [Problem(key, f"{value!r} is not one of {', '.join(allowed)}")]
        return _scalar_problems(annotation, value, key)

    def _check_discriminated(self, section: str, value: dict[str, Any], key: str) -> list[Problem]:
        discriminator, suffix, fallback = _DISCRIMINATED[section]
        candidates = {
            _literal_values(fields[discriminator]["type"])[0]: class_name
            for class_name, fields in self.classes.items()
            if class_name.endswith(suffix) and discriminator in fields
        }
        chosen = value.get(discriminator)
        class_name = candidates.get(chosen) if chosen is not None else fallback
        if class_name is None:
            return [
                Problem(
                    f"{key}.{discriminator}",
                    f"{'required' if chosen is None else repr(chosen) + ' is not valid'};"
                    f" one of {', '.join(sorted(candidates))}",
                )
            ]
        return self._check_class(class_name, value, key)


def _literal_values(annotation: str) -> list[str]:
    """The allowed strings of a `Literal[...]` annotation, or [] when any string is allowed."""
    if "Literal[" not in annotation or re.search(r"\bstr\b", annotation):
        return []
    literal = annotation[annotation.index("Literal[") :]
    return _QUOTED.findall(literal[: literal.index("]") + 1])


def _or_default(value: Any, default: Any) -> Any:
    """A field set to null means TensorRT-LLM's default."""
    return default if value is None else value


def _scalar_problems(annotation: str, value: Any, key: str) -> list[Problem]:
    """A value of the wrong type for a plain scalar annotation (int, Optional[float], PositiveInt,
    ...), or outside its constrained type's bound. Unions and containers are left to TRT-LLM."""
    inner = annotation.strip()
    optional = inner.startswith("Optional[") and inner.endswith("]")
    if optional:
        inner = inner[len("Optional[") : -1].strip()
    if inner not in _SCALARS or (value is None and optional):
        return []
    types, bound = _SCALARS[inner]
    if (isinstance(value, bool) and inner != "bool") or not isinstance(value, types):
        return [Problem(key, f"{value!r}: TensorRT-LLM takes {annotation} here")]
    if isinstance(value, float) and not math.isfinite(value):
        return [Problem(key, f"{value!r}: not a finite number")]
    if bound and not ((value >= 0) if bound == ">= 0" else (value > 0)):
        return [Problem(key, f"{value!r}: TensorRT-LLM takes {inner} here ({bound})")]
    return []


def _unknown_field_message(name: str, fields: dict[str, Any]) -> str:
    closest = difflib.get_close_matches(name, fields, n=1)
    hint = f"; did you mean {closest[0]!r}?" if closest else ""
    return f"not a TensorRT-LLM engine field{hint}"


class TrtllmBackend:
    """Dynamo's TensorRT-LLM backend (configs/backends/trtllm.yaml)."""

    name = "trtllm"
    # The engine fields that bound one sequence, which the model's context caps (core/inputs/rules.py
    # checks them against configs/model.yaml maxPositionEmbeddings), with what a larger value does.
    # TensorRT-LLM's PyTorch engine lowers a larger max_seq_len to the model's max_position_embeddings
    # at start-up with only a log line ("Specified max_seq_len=... is larger than what the model can
    # support", PyTorchModelEngine._init_max_seq_len, NVIDIA/TensorRT-LLM
    # tensorrt_llm/_torch/pyexecutor/model_engine.py). max_num_tokens is not one of them: it is a
    # batch's tokens per iteration, not one sequence's.
    sequence_fields = {
        "max_seq_len": "TensorRT-LLM would lower it to the model's at start-up, and the plan would size and "
        "describe the workers for sequences they never serve",
        "max_input_len": "no prompt can be longer than the model's context",
    }

    def __init__(self, spec: BackendSpec, fields: EngineFields):
        self.spec = spec
        self.fields = fields

    @classmethod
    def load(cls, config_dir: Path) -> TrtllmBackend:
        path = config_dir / "backends" / f"{cls.name}.yaml"
        try:
            spec = BackendSpec.model_validate(read_yaml(path))
        except ValidationError as error:
            raise ConfigError(problems_from(error, f"{path}: ")) from None
        backend = cls(spec, EngineFields.load(DATA_ROOT / spec.engine_fields))
        problems = backend.check(spec.efa.engine, f"{path}: efa.engine") if spec.efa else []
        if problems:
            raise ConfigError(problems)
        return backend

    def check(self, engine: dict[str, Any], key_prefix: str) -> list[Problem]:
        return self.fields.check(engine, key_prefix)

    def parallel_sizes(self, tensor: int, expert: int) -> dict[str, Any]:
        return {"tensor_parallel_size": tensor, "moe_expert_parallel_size": expert}

    def consistency_problems(
        self, engine: dict[str, Any], gpus: int, overrides: dict[str, Any], overrides_key: str, gpus_key: str
    ) -> list[Problem]:
        tensor = engine.get("tensor_parallel_size", 1)
        pipeline = engine.get("pipeline_parallel_size", 1)
        if tensor * pipeline == gpus:
            return []
        culprit = next(
            (
                f"{overrides_key}.{name}"
                for name in ("tensor_parallel_size", "pipeline_parallel_size")
                if name in overrides
            ),
            gpus_key,
        )
        return [
            Problem(
                culprit,
                f"tensor_parallel_size {tensor} x pipeline_parallel_size {pipeline}"
                f" must equal the worker's {gpus} GPUs",
            )
        ]

    def view(self, engine: dict[str, Any]) -> EngineView:
        kv_config = engine.get("kv_cache_config") or {}  # null: TRT-LLM's defaults
        return EngineView(
            tensor_parallel=engine.get("tensor_parallel_size", 1),
            pipeline_parallel=engine.get("pipeline_parallel_size", 1),
            expert_parallel=engine.get("moe_expert_parallel_size"),
            attention_data_parallel=bool(engine.get("enable_attention_dp", False)),
            kv_cache_fraction=_or_default(kv_config.get("free_gpu_memory_fraction"), KV_CACHE_FRACTION_DEFAULT),
            kv_cache_dtype=_or_default(kv_config.get("dtype"), "auto"),
            max_seq_len=engine.get("max_seq_len"),
            max_batch_size=_or_default(engine.get("max_batch_size"), self.fields.int_default("max_batch_size")),
            max_num_tokens=_or_default(engine.get("max_num_tokens"), self.fields.int_default("max_num_tokens")),
            prefix_caching=_or_default(
                kv_config.get("enable_block_reuse"),
                self.fields.classes["KvCacheConfig"]["enable_block_reuse"]["default"] == "True",
            ),
            chunked_prefill=_or_default(
                engine.get("enable_chunked_prefill"), self.fields.default("enable_chunked_prefill") == "True"
            ),
            moe_backend=(engine.get("moe_config") or {}).get("backend"),
        )

    def simulation(self, engine: dict[str, Any]) -> str | None:
        return None  # a real engine

    def config_files(self, role: str, engine: dict[str, Any]) -> dict[str, str | bytes]:
        # PyYAML's own emitter, not LibYAML's: the two fold long non-ASCII strings differently, and this text
        # is hashed into the workers' annotation, so it must not depend on how PyYAML was built.
        return {f"{role}.yaml": yaml.safe_dump(engine, sort_keys=True)}  # --extra-engine-args reads it

    def worker_args(
        self,
        model_path: str,
        served_model_name: str,
        engine: dict[str, Any],
        role: str,
        config_dir: str,
        recipe_args: list[str],
    ) -> list[str]:
        args = [
            "--model-path",
            model_path,
            "--served-model-name",
            served_model_name,
            "--extra-engine-args",
            f"{config_dir}/{role}.yaml",
            *recipe_args,
        ]
        return args if role == "worker" else [*args, "--disaggregation-mode", role]
