"""core/backends/trtllm.py: engine configs are checked against the TRT-LLM field list (vendor/trtllm)."""

from __future__ import annotations

import pytest
import yaml


@pytest.fixture(scope="module")
def trtllm(catalog):
    return catalog.backends["trtllm"]


def test_unknown_key_names_its_full_path_and_the_closest_field(trtllm):
    (problem,) = trtllm.check({"cuda_graph_confg": {"max_batch_size": 8}}, "x")
    assert problem.key == "x.cuda_graph_confg"
    assert "did you mean 'cuda_graph_config'" in problem.message


def test_nested_keys_are_checked_in_their_section(trtllm):
    config = {"kv_cache_config": {"free_gpu_memory_fraction": 0.9, "free_gpu_mem_fraction": 0.9}}
    (problem,) = trtllm.check(config, "x")
    assert problem.key == "x.kv_cache_config.free_gpu_mem_fraction"
    assert "free_gpu_memory_fraction" in problem.message


def test_literal_values_are_checked(trtllm):
    (problem,) = trtllm.check({"moe_config": {"backend": "TRITONN"}}, "x")
    assert problem.key == "x.moe_config.backend"
    assert "TRITON" in problem.message


def test_published_keys_the_pinned_trtllm_rejects(trtllm):
    """[trtllm-gptoss-blog] sets enable_mixed_sampler; the flag form of the KV fraction is not a field either."""
    problems = trtllm.check({"enable_mixed_sampler": True, "kv_cache_free_gpu_memory_fraction": 0.75}, "x")
    assert [p.key for p in problems] == ["x.enable_mixed_sampler", "x.kv_cache_free_gpu_memory_fraction"]


def test_discriminated_sections_use_the_chosen_class(trtllm):
    fields = trtllm
    assert fields.check({"speculative_config": {"decoding_type": "Eagle3", "max_draft_len": 3}}, "x") == []
    (problem,) = fields.check({"speculative_config": {"decoding_type": "Eagle9"}}, "x")
    assert problem.key == "x.speculative_config.decoding_type"
    # cuda_graph_config without `mode` is the decode variant, which has no num_tokens.
    (problem,) = fields.check({"cuda_graph_config": {"num_tokens": [1]}}, "x")
    assert problem.key == "x.cuda_graph_config.num_tokens"


def test_free_form_sections_are_not_key_checked(trtllm):
    assert trtllm.check({"env_overrides": {"ANY_NAME": "1"}}, "x") == []


def test_every_recipe_engine_config_uses_only_known_fields(catalog, trtllm):
    trtllm_recipes = {name: recipe for name, recipe in catalog.recipes.items() if recipe.backend == "trtllm"}
    assert len(trtllm_recipes) == 10
    for name, recipe in trtllm_recipes.items():
        for role, spec in recipe.workers.items():
            assert trtllm.check(spec.engine, f"{name}.{role}") == []


@pytest.mark.parametrize(
    ("config", "key", "message"),
    [
        ({"max_batch_size": "lots"}, "x.max_batch_size", "'lots': TensorRT-LLM takes Optional[int] here"),
        ({"max_batch_size": True}, "x.max_batch_size", "True: TensorRT-LLM takes Optional[int] here"),
        (
            {"kv_cache_config": {"free_gpu_memory_fraction": "high"}},
            "x.kv_cache_config.free_gpu_memory_fraction",
            "'high': TensorRT-LLM takes Optional[float] here",
        ),
        ({"enable_attention_dp": "yes"}, "x.enable_attention_dp", "'yes': TensorRT-LLM takes bool here"),
        (
            {"cuda_graph_config": {"max_batch_size": -1}},
            "x.cuda_graph_config.max_batch_size",
            "-1: TensorRT-LLM takes NonNegativeInt here (>= 0)",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_by_its_annotation(trtllm, config, key, message):
    (problem,) = trtllm.check(config, "x")
    assert (problem.key, problem.message) == (key, message)


def test_a_bound_a_trtllm_validator_enforces_is_refused_with_its_words(trtllm):
    """1.5 used to plan, reporting more KV cache than the GPU has."""
    (problem,) = trtllm.check({"kv_cache_config": {"free_gpu_memory_fraction": 1.5}}, "x")
    assert problem.message == (
        "1.5 is out of range: TensorRT-LLM refuses it "
        "('kv_cache_config.free_gpu_memory_fraction must be a float between 0 and 1')"
    )
    assert trtllm.check({"kv_cache_config": {"free_gpu_memory_fraction": 0.85, "dtype": "fp8"}}, "x") == []
    assert trtllm.check({"max_batch_size": None, "max_seq_len": 8192}, "x") == []


def test_an_engine_file_is_pyyamls_own_text_whatever_libyaml_would_write(trtllm):
    """A long string with escapes (an override may hold one) is folded by PyYAML's emitter and not by
    LibYAML's. The file's text is hashed into the workers' annotation: it must not depend on PyYAML's build."""
    engine = {"k": "K\nZWeqhFWCEPyYngFb\U0001f600\xe9yBMWXaSCrUZoLg\U0001f600ubbbPIa\u2028yRnBUbHoWCFJowoRoWDsbA\xe9"
              "JPglOU\tshVv\U0001f600UTGBG\xe9QmtsL\u2028F\nGz"}  # fmt: skip
    text = trtllm.config_files("worker", engine)["worker.yaml"]
    assert "\\xE9\\\n  JPglOU" in text  # folded, as PyYAML's emitter does
    assert yaml.safe_load(text) == engine
