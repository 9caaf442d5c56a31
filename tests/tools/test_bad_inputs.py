"""Bad stack files as a user writes them: `make plan` exits non-zero naming the stack file and the key
(or line and column), with no traceback, and writes nothing."""

from __future__ import annotations

import copy

import pytest
import yaml

from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import plan
from tests.support import example_entries, refused, stack_entries

FILE = "Pulumi.broken.yaml"


def planned(tmp_path, capsys, text: str) -> tuple[int, str]:
    (tmp_path / FILE).write_text(text)
    code = plan.main(["--stack", "broken", "--stack-dir", str(tmp_path), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 0 or not (tmp_path / "out").exists(), "a refused stack must write nothing"
    assert "Traceback" not in out + err
    return code, err


def dev_with(change) -> str:
    entries = copy.deepcopy(stack_entries("dev"))
    change(entries)
    return yaml.safe_dump({"config": entries}, sort_keys=False)


def deployment(entries) -> dict:
    return entries["gpt-oss-infra:deployments"]["gpt-oss"]


@pytest.mark.parametrize(
    ("change", "key", "says"),
    [
        (lambda e: e["gpt-oss-infra:modelCache"].update(size="-400Gi"), "modelCache.size", "more than zero"),
        (lambda e: e["gpt-oss-infra:modelCache"].update(size="40Gi"), "modelCache.size", "60.8 GiB checkpoint"),
        (
            lambda e: deployment(e).update(overrides={"max_batch_size": "lots"}),
            "deployments.gpt-oss.overrides.max_batch_size",
            "TensorRT-LLM takes Optional[int]",
        ),
        (
            lambda e: deployment(e).update(overrides={"kv_cache_config": {"free_gpu_memory_fraction": "high"}}),
            "deployments.gpt-oss.overrides.kv_cache_config.free_gpu_memory_fraction",
            "TensorRT-LLM takes Optional[float]",
        ),
        (
            lambda e: deployment(e).update(overrides={"kv_cache_config": {"free_gpu_memory_fraction": 1.5}}),
            "deployments.gpt-oss.overrides.kv_cache_config.free_gpu_memory_fraction",
            "between 0 and 1",
        ),
        (
            lambda e: e.update({"gpt-oss-infa:deployments": e.pop("gpt-oss-infra:deployments")}),
            "gpt-oss-infa:deployments",
            "did you mean 'gpt-oss-infra'",
        ),
        (
            lambda e: e.update({"GPT-OSS-INFRA:deployments": e.pop("gpt-oss-infra:deployments")}),
            "GPT-OSS-INFRA:deployments",
            "did you mean 'gpt-oss-infra'",
        ),
        (
            lambda e: e.update({"gpt-oss:deployments": e.pop("gpt-oss-infra:deployments")}),
            "gpt-oss:deployments",
            "did you mean 'gpt-oss-infra'",
        ),
        (lambda e: deployment(e).update(gpus=3), "deployments.gpt-oss.gpus", "allows [1, 4, 8] GPUs per worker, not 3"),
    ],
)
def test_a_bad_value_is_refused_naming_the_file_and_the_key(tmp_path, capsys, change, key, says):
    code, err = planned(tmp_path, capsys, dev_with(change))
    assert code == 1
    assert f"invalid stack config in {FILE}" in err
    full_key = key if ":" in key else f"gpt-oss-infra:{key}"
    line = next(line for line in err.splitlines() if line.startswith(full_key))
    assert says in line, err


def test_yaml_that_does_not_parse_is_refused_with_line_and_column(tmp_path, capsys):
    code, err = planned(tmp_path, capsys, "config:\n  gpt-oss-infra:environment: dev\n  gpt-oss-infra:release: [\n")
    assert code == 1
    assert f"{FILE}:4:1: " in err, err


def test_a_repeated_key_is_refused_with_both_lines(tmp_path, capsys):
    text = dev_with(lambda e: None)
    text = text.replace("config:\n", "config:\n  gpt-oss-infra:environment: other\n", 1)
    code, err = planned(tmp_path, capsys, text)
    assert code == 1
    assert f"{FILE}:" in err and "duplicate key 'gpt-oss-infra:environment' (first at line 2)" in err, err


def test_a_fixed_size_recipe_takes_its_own_size_or_none(catalog):
    """README and the error agree: a fixed-size recipe accepts its own size, and says what to write
    for any other (h100-agg-long-context: 2 GPUs; b200-disagg-4p4d: 4 per prefill and decode
    worker; b200-disagg-1p4d: 1 and 4, so no single value fits)."""
    raw = copy.deepcopy(namespace_config(example_entries("h100")))
    (name,) = raw["deployments"]
    assert raw["deployments"][name]["recipe"] == "h100-agg-long-context"
    raw["deployments"][name]["gpus"] = 2
    build_stack(raw, catalog, with_hf_token=False)
    raw["deployments"][name]["gpus"] = 4
    (problem,) = refused(raw, catalog).problems
    assert (
        problem.message
        == "recipe h100-agg-long-context runs fixed GPU counts (2 per worker): leave gpus out, or write gpus: 2"
    )
    disagg = copy.deepcopy(namespace_config(example_entries("b200-disagg")))
    (name,) = [n for n, d in disagg["deployments"].items() if d["recipe"] == "b200-disagg-1p4d"]
    disagg["deployments"][name]["gpus"] = 4
    messages = [p.message for p in refused(disagg, catalog).problems]
    assert "recipe b200-disagg-1p4d runs fixed GPU counts (1 per prefill, 4 per decode): leave gpus out" in messages


def test_a_runtime_image_of_another_dynamo_release_is_refused(tmp_path, capsys):
    image = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.0.0"

    def older_image(entries):
        entries["gpt-oss-infra:release"]["runtimeImage"] = image

    code, err = planned(tmp_path, capsys, dev_with(older_image))
    assert code == 1
    release = stack_entries("dev")["gpt-oss-infra:release"]["dynamo"]
    assert f"gpt-oss-infra:release.runtimeImage: {image} is Dynamo 1.0.0's, but release.dynamo is {release}" in err


def test_gpu_pools_without_deployments_are_warned_about_with_their_cost(tmp_path, capsys):
    def no_deployments(entries):
        entries["gpt-oss-infra:deployments"] = {}

    code, err = planned(tmp_path, capsys, dev_with(no_deployments))
    assert code == 0
    assert "gpt-oss-infra:nodePools.gpu: its 8 GPUs serve no deployment, and still cost $63.30 per hour" in err


@pytest.mark.parametrize(
    ("overrides", "key", "says"),
    [
        ({"kv_cache_config": 5}, "overrides.kv_cache_config", "must be a mapping of KvCacheConfig fields"),
        ({"moe_config": [1]}, "overrides.moe_config", "must be a mapping of MoeConfig fields"),
        ({"kv_cache_config": {"dtype": "bogus"}}, "overrides.kv_cache_config.dtype", "is not a KV cache dtype"),
        (
            {"kv_cache_config": {"free_gpu_memory_fraction": float("nan")}},
            "overrides.kv_cache_config.free_gpu_memory_fraction",
            "not a finite number",
        ),
    ],
)
def test_a_malformed_engine_section_is_refused_not_crashed_on(tmp_path, capsys, overrides, key, says):
    code, err = planned(tmp_path, capsys, dev_with(lambda e: deployment(e).update(overrides=overrides)))
    assert code == 1
    line = next(line for line in err.splitlines() if line.startswith(f"gpt-oss-infra:deployments.gpt-oss.{key}"))
    assert says in line, err


def test_null_engine_values_mean_trtllms_defaults(tmp_path, capsys):
    overrides = {"kv_cache_config": {"free_gpu_memory_fraction": None}, "moe_config": None}
    code, _ = planned(tmp_path, capsys, dev_with(lambda e: deployment(e).update(overrides=overrides)))
    assert code == 0


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("config:\n", None),  # no keys at all: refused by the config's own rules
        ("config: [a, b]\n", "a stack file is a mapping whose `config:` is a mapping"),
        ("- just\n- a list\n", "a stack file is a mapping whose `config:` is a mapping"),
        ("config:\n  ? [a, b]\n  : 1\n", "a key must be a scalar, not list"),
        ("config:\n  gpt-oss-infra:environment: \x07\n", FILE),
    ],
)
def test_a_malformed_stack_file_is_refused_not_crashed_on(tmp_path, capsys, text, says):
    code, err = planned(tmp_path, capsys, text)
    assert code == 1
    assert FILE in err and (says is None or says in err), err
