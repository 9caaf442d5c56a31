"""Dynamo's mocker: a simulated engine that needs no GPU and no weights, only the model's tokenizer.

It serves through the real frontend and router with a real KV-cache model and simulated timing, so
a whole stack can be tried on CPU nodes (the trial recipes, configs/recipes/trial-*.yaml). Its
engine settings are its own flags (configs/backends/mocker-fields.yaml), rendered onto its command
line, where Dynamo's own parser checks them (tools/dynamo_parsers.py). One is ours:
`planner_profile_data: <profile>` names timing tables of configs/mocker-timing/, which the worker
reads as an NPZ file from its mounted config directory (`--planner-profile-data`).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpt_oss_infra.core.backends.protocol import BackendSpec, EngineView
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.npz import npz_bytes
from gpt_oss_infra.core.paths import DATA_ROOT
from gpt_oss_infra.core.schema import problems_from
from gpt_oss_infra.core.yaml_files import read_yaml

_TYPES: dict[str, type[Any] | tuple[type[Any], ...]] = {
    "int": int,
    "float": (int, float),
    "str": str,
    "bool": bool,
    "profile": str,
}
TIMING_FLAG = "planner_profile_data"  # the field whose value is a timing profile's name
TIMING_DIR = "mocker-timing"  # under configs/: profiles.yaml, and <profile>.yaml for each


class MockerBackend:
    """configs/backends/mocker.yaml"""

    name = "mocker"

    def __init__(self, spec: BackendSpec, fields: dict[str, dict[str, Any]], timing: dict[str, dict[str, Any] | None]):
        self.spec = spec
        self.fields = fields
        self.timing = timing  # profile name -> its tables (configs/mocker-timing/<profile>.yaml), None if not made

    @classmethod
    def load(cls, config_dir: Path) -> MockerBackend:
        path = config_dir / "backends" / f"{cls.name}.yaml"
        try:
            spec = BackendSpec.model_validate(read_yaml(path))
        except ValidationError as error:
            raise ConfigError(problems_from(error, f"{path}: ")) from None
        timing_dir = config_dir / TIMING_DIR
        timing = {  # a profile without its tables yet (make mocker-timing writes them) is refused where used
            name: read_yaml(timing_dir / f"{name}.yaml") if (timing_dir / f"{name}.yaml").exists() else None
            for name in read_yaml(timing_dir / "profiles.yaml")
        }
        return cls(spec, read_yaml(DATA_ROOT / spec.engine_fields), timing)

    def check(self, engine: dict[str, Any], key_prefix: str) -> list[Problem]:
        problems = []
        for name, value in engine.items():
            key = f"{key_prefix}.{name}"
            field = self.fields.get(name)
            if field is None:
                closest = difflib.get_close_matches(name, self.fields, n=1)
                hint = f"; did you mean {closest[0]!r}?" if closest else ""
                problems.append(Problem(key, f"not a mocker setting{hint}"))
            elif isinstance(value, bool) != (field["type"] == "bool") or not isinstance(value, _TYPES[field["type"]]):
                problems.append(Problem(key, f"{value!r}: the mocker takes {field['type']} here"))
            elif value not in field.get("choices", self.timing if field["type"] == "profile" else [value]):
                choices = field.get("choices", list(self.timing))
                problems.append(Problem(key, f"{value!r} is not one of {', '.join(choices)}"))
            elif field["type"] == "profile" and self.timing[value] is None:
                problems.append(
                    Problem(key, f"configs/{TIMING_DIR}/{value}.yaml is missing: make mocker-timing writes it")
                )
        return problems

    def parallel_sizes(self, tensor: int, expert: int) -> dict[str, Any]:
        return {}  # a simulated engine on a CPU: nothing to split

    def consistency_problems(
        self, engine: dict[str, Any], gpus: int, overrides: dict[str, Any], overrides_key: str, gpus_key: str
    ) -> list[Problem]:
        return []

    def view(self, engine: dict[str, Any]) -> EngineView:
        return EngineView(
            tensor_parallel=1,
            pipeline_parallel=1,
            expert_parallel=None,
            attention_data_parallel=False,
            kv_cache_fraction=1.0,  # its KV cache is num_gpu_blocks_override blocks, no GPU memory
            kv_cache_dtype=engine.get("kv_cache_dtype", "auto"),
            max_seq_len=engine.get("max_model_len"),
            max_batch_size=engine.get("max_num_seqs", 256),  # the mocker's own defaults
            max_num_tokens=engine.get("max_num_batched_tokens", 8192),
            prefix_caching=engine.get("enable_prefix_caching", True),
            chunked_prefill=engine.get("enable_chunked_prefill", True),
            moe_backend=None,
        )

    def _tables(self, profile: str) -> dict[str, Any]:
        """A profile's timing tables: check() has refused an engine that names one without them."""
        tables = self.timing[profile]
        assert tables is not None, f"configs/{TIMING_DIR}/{profile}.yaml is missing"
        return tables

    def simulation(self, engine: dict[str, Any]) -> str | None:
        name = engine.get(TIMING_FLAG)
        if name is None:
            return "Dynamo's mocker with its default timing model (no GPU's)"
        profile = self._tables(name)
        return (
            f"Dynamo's mocker, timed as {profile['recipe']} ({profile['prefill']['gpus']}-GPU prefill, "
            f"{profile['decode']['gpus']}-GPU decode) as {profile['modelledBy']['tool']} models it "
            f"(configs/{TIMING_DIR}/{name}.yaml)"
        )

    def config_files(self, role: str, engine: dict[str, Any]) -> dict[str, str | bytes]:
        if TIMING_FLAG not in engine:
            return {}
        name = engine[TIMING_FLAG]
        profile = self._tables(name)
        prefill, decode = profile["prefill"], profile["decode"]
        tables = {  # the mocker's NPZ keys (dynamo/mocker/utils/planner_profiler_perf_data_converter.py)
            "prefill_isl": prefill["islTokens"],
            "prefill_ttft_ms": prefill["ttftMs"],
            "decode_active_kv_tokens": decode["activeKvTokens"],
            "decode_context_length": decode["contextTokens"],
            "decode_itl": decode["itlMs"],
        }
        return {_timing_file(name): npz_bytes(tables)}

    def worker_args(
        self,
        model_path: str,
        served_model_name: str,
        engine: dict[str, Any],
        role: str,
        config_dir: str,
        recipe_args: list[str],
    ) -> list[str]:
        args = ["--model-path", model_path, "--model-name", served_model_name]
        for name, value in engine.items():
            flag = name.replace("_", "-")
            if name == TIMING_FLAG:
                args += [f"--{flag}", f"{config_dir}/{_timing_file(value)}"]
            elif isinstance(value, bool):
                args.append(f"--{flag}" if value else f"--no-{flag}")
            else:
                args += [f"--{flag}", str(value)]
        args += recipe_args
        return args if role == "worker" else [*args, "--disaggregation-mode", role]


def _timing_file(profile: str) -> str:
    return f"{profile}.npz"  # the mocker takes a .npz path as its own table format
