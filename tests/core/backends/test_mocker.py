"""core/backends/mocker.py: Dynamo's mocker as a backend. Its settings are the 1.6.1 parser's own
flags, its timing tables are mounted as the NPZ it reads, and its graphs set no backendFramework."""

from __future__ import annotations

import json
import subprocess
import zipfile
from io import BytesIO

import pytest

from gpt_oss_infra.core.backends.mocker import TIMING_FLAG
from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR
from gpt_oss_infra.core.yaml_files import read_yaml
from gpt_oss_infra.tools.dynamo_parsers import python_of
from tests.support import MODELLED_BY

# Run in the 1.6.1 parser venv: the options and destinations of dynamo.mocker's own parser.
MOCKER_OPTIONS = """
import argparse, json
from dynamo.mocker import args

class Built(Exception):
    pass

def capture(parser, *_):
    raise Built(parser)

argparse.ArgumentParser.parse_args = capture
try:
    args.parse_args([])
except Built as built:
    parser = built.args[0]
print(json.dumps({option: action.dest for action in parser._actions for option in action.option_strings}))
"""


@pytest.fixture(scope="module")
def mocker(catalog):
    return catalog.backends["mocker"]


@pytest.fixture(scope="module")
def parser_options(catalog) -> dict[str, str]:
    python = python_of(catalog.dynamo_versions["1.6.1"])
    assert python.exists(), "make test makes the parser venvs (python -m gpt_oss_infra dynamo-parsers install)"
    return json.loads(
        subprocess.run([str(python), "-c", MOCKER_OPTIONS], capture_output=True, text=True, check=True).stdout
    )


def test_every_setting_is_a_flag_of_the_real_mocker(mocker, parser_options):
    """configs/backends/mocker-fields.yaml against dynamo.mocker 1.6.1's parser: each name is a flag, and
    a boolean one has its --no- form (the backend renders false so)."""
    fields = read_yaml(CONFIG_DIR / "backends" / "mocker-fields.yaml")
    assert fields == mocker.fields and len(fields) > 10
    for name, field in fields.items():
        flag = "--" + name.replace("_", "-")
        assert flag in parser_options, flag
        if field["type"] == "bool":  # both forms set the same destination
            assert parser_options.get(f"--no-{flag[2:]}") == parser_options[flag], flag
    assert "--definitely-not-a-mocker-flag" not in parser_options  # the capture read a real parser


def test_settings_are_checked_with_the_closest_name_and_the_allowed_values(mocker):
    problems = mocker.check(
        {
            "block_sise": 32,
            "engine_type": "tensorrt",
            "max_num_seqs": "64",
            "enable_prefix_caching": 1,
            TIMING_FLAG: "x",
        },
        "recipe.workers.worker.engine",
    )
    assert [(p.key.rsplit(".", 1)[1], p.message) for p in problems] == [
        ("block_sise", "not a mocker setting; did you mean 'block_size'?"),
        ("engine_type", "'tensorrt' is not one of vllm, sglang, trtllm"),
        ("max_num_seqs", "'64': the mocker takes int here"),
        ("enable_prefix_caching", "1: the mocker takes bool here"),
        (TIMING_FLAG, f"'x' is not one of {', '.join(read_yaml(CONFIG_DIR / 'mocker-timing' / 'profiles.yaml'))}"),
    ]
    assert mocker.check({"block_size": 32, TIMING_FLAG: "b200-disagg-1p4d"}, "k") == []


def test_a_profile_without_its_tables_is_refused(mocker, monkeypatch):
    monkeypatch.setitem(mocker.timing, "not-made-yet", None)
    (problem,) = mocker.check({TIMING_FLAG: "not-made-yet"}, "k")
    assert problem.message == "configs/mocker-timing/not-made-yet.yaml is missing: make mocker-timing writes it"


def test_the_engine_settings_become_flags_and_the_timing_a_mounted_npz(mocker):
    engine = {
        "engine_type": "trtllm",
        TIMING_FLAG: "b200-disagg-1p4d",
        "block_size": 32,
        "enable_prefix_caching": False,
    }
    args = mocker.worker_args("/opt/models/snap", "openai/gpt-oss-120b", engine, "decode", "/cfg", ["--x"])
    assert args == [
        "--model-path", "/opt/models/snap", "--model-name", "openai/gpt-oss-120b",
        "--engine-type", "trtllm", "--planner-profile-data", "/cfg/b200-disagg-1p4d.npz",
        "--block-size", "32", "--no-enable-prefix-caching", "--x", "--disaggregation-mode", "decode",
    ]  # fmt: skip
    ((name, content),) = mocker.config_files("decode", engine).items()
    assert name == "b200-disagg-1p4d.npz"
    with zipfile.ZipFile(BytesIO(content)) as archive:  # the keys dynamo.mocker looks for
        assert sorted(archive.namelist()) == sorted(
            f"{key}.npy"
            for key in (
                "prefill_isl",
                "prefill_ttft_ms",
                "decode_active_kv_tokens",
                "decode_context_length",
                "decode_itl",
            )
        )
    assert mocker.config_files("worker", {"block_size": 32}) == {}  # no timing profile: nothing to mount


def test_a_mocker_says_what_it_simulates_a_real_engine_nothing(mocker, catalog):
    said = mocker.simulation({TIMING_FLAG: "h200-agg-low-latency-1gpu"})
    assert said == (
        f"Dynamo's mocker, timed as h200-agg-low-latency (1-GPU prefill, 1-GPU decode) as {MODELLED_BY} "
        "models it (configs/mocker-timing/h200-agg-low-latency-1gpu.yaml)"
    )
    assert catalog.backends["trtllm"].simulation({}) is None
    assert mocker.spec.simulated and mocker.spec.framework is None and mocker.spec.efa is None
