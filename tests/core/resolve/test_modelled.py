"""core/resolve/modelled.py: each recipe's point in AISimulate's terms, and configs/estimates.yaml kept
at exactly those points (a recipe whose point changed fails here until make estimate runs again)."""

from __future__ import annotations

import dataclasses

import pytest

from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.resolve import modelled


def stale_points(catalog: Catalog) -> list[str]:
    """Every recipe point whose stored inputs are not the ones the recipe makes now, or that is missing."""
    stale = []
    for name, counts in modelled.modelled_gpu_counts(catalog).items():
        recipe = catalog.recipes[name]
        for gpus in counts:
            request = modelled.estimate_request(
                catalog, recipe.hardware, recipe.traffic, modelled.recipe_workers(catalog, name, gpus)
            )
            stored = catalog.estimates.recipes.get(name, {}).get(gpus)
            if stored is None or (stored.system, stored.inputs) != (request.system, request.inputs):
                stale.append(f"{name} at {gpus} GPUs: its point changed or was never modelled; run make estimate")
    return stale


def test_every_recipe_point_is_modelled_at_exactly_its_current_inputs(catalog):
    assert stale_points(catalog) == []


def test_a_recipe_whose_engine_setting_changed_is_stale_by_name(catalog):
    recipe = catalog.recipes["h200-agg-low-latency"]
    worker = recipe.workers["worker"]
    engine = worker.engine | {"kv_cache_config": {"free_gpu_memory_fraction": 0.5}}
    changed = recipe.model_copy(update={"workers": {"worker": worker.model_copy(update={"engine": engine})}})
    broken = dataclasses.replace(catalog, recipes=catalog.recipes | {"h200-agg-low-latency": changed})
    assert stale_points(broken) == [
        f"h200-agg-low-latency at {gpus} GPUs: its point changed or was never modelled; run make estimate"
        for gpus in (1, 4, 8)
    ]


def test_every_point_says_what_aiconfigurator_answered_or_why_it_could_not(catalog):
    for name, points in catalog.estimates.recipes.items():
        for gpus, point in points.items():
            assert (point.figures is None) != (point.not_modelled is None), (name, gpus)
            if point.figures is not None:
                assert point.database and point.figures.output_tokens_per_second_per_gpu > 0, (name, gpus)
            assert "/work/" not in (point.not_modelled or ""), "a reason names no path of the machine it ran on"


def test_every_gpu_recipe_has_a_search_at_its_default_gpus_and_goal(catalog):
    for name in modelled.modelled_gpu_counts(catalog):
        search = catalog.estimates.searches[name]
        assert search.goal == catalog.recipes[name].goal
        assert search.inputs == modelled.search_experiments(catalog, name), f"{name}: run make estimate"


def test_what_aiconfigurator_supports_is_recorded_per_hardware_type(catalog):
    assert set(catalog.estimates.support) == set(catalog.hardware)
    for hardware, entry in catalog.estimates.support.items():
        assert entry.system == catalog.hardware[hardware].aiconfigurator_system


@pytest.mark.parametrize(
    ("recipe", "gpus", "expected"),
    [
        ("h200-agg-low-latency", 8, {"tp": 8, "dp": 1, "moe_tp": 1, "moe_ep": 8}),  # TP8 = EP8
        ("h200-agg-max-throughput", 8, {"tp": 1, "dp": 8, "moe_tp": 1, "moe_ep": 8}),  # attention DP: DEP8
        ("b200-disagg-1p4d", 5, {"tp": 4, "dp": 1, "moe_tp": 4, "moe_ep": 1}),  # the decode worker: TP4, MoE TP4
    ],
)
def test_a_workers_engine_becomes_aiconfigurators_layout(catalog, recipe, gpus, expected):
    *_, worker = modelled.recipe_workers(catalog, recipe, gpus)
    assert modelled.layout(worker.view) == expected


def test_the_batch_is_the_concurrency_over_the_attention_ranks_up_to_max_batch_size(catalog):
    def inputs(recipe: str, gpus: int) -> dict:
        traffic = catalog.recipes[recipe].traffic
        return modelled.estimate_request(
            catalog, "h200", traffic, modelled.recipe_workers(catalog, recipe, gpus)
        ).inputs

    assert inputs("h200-agg-low-latency", 8)["batch_size"] == 16  # 2 per GPU x 8, one rank set
    assert inputs("h200-agg-max-throughput", 8)["batch_size"] == 640  # 640 per GPU x 8 over 8 ranks, max 640
    assert inputs("h200-agg-low-latency", 8)["ctx_tokens"] == 1024  # one 1024-token prompt a step


def test_the_moe_quantization_is_the_architectures_unless_a_worker_overrides_it(catalog):
    def quant(recipe: str) -> str:
        hardware = catalog.recipes[recipe].hardware
        request = modelled.estimate_request(
            catalog, hardware, catalog.recipes[recipe].traffic, modelled.recipe_workers(catalog, recipe)
        )
        return request.inputs["moe_quant_mode"]

    assert quant("h200-agg-low-latency") == "w4a16_mxfp4"  # Hopper: bf16 activations
    assert quant("b200-agg-low-latency") == "w4a8_mxfp4_mxfp8"  # Blackwell: MXFP8 activations
    assert quant("b200-disagg-1p4d") == "w4a8_mxfp4_mxfp8"  # its OVERRIDE_QUANT_ALGO


def test_the_roles_of_a_disaggregated_recipe_agree_on_quantization(catalog):
    """One estimate takes one quantization: a recipe whose roles differ could not be modelled as written."""
    for name, recipe in catalog.recipes.items():
        if recipe.mode != "disaggregated" or recipe.goal is None:
            continue
        prefill, decode = modelled.recipe_workers(catalog, name)
        assert modelled.quantization(catalog, recipe.hardware, prefill) == modelled.quantization(
            catalog, recipe.hardware, decode
        ), name


def test_blackwell_with_triton_moe_is_not_modelled_as_the_simulator_has_no_such_quantization(catalog):
    """TensorRT-LLM runs W4A8_MXFP4_FP8 there ([trtllm-model-config]); AISimulate (as AIConfigurator 0.12.0
    before it) has no mode for it."""
    assert modelled.moe_quant_mode(catalog, "b200", "TRITON", {}) == (
        None,
        "TensorRT-LLM runs its MoE as W4A8_MXFP4_FP8, which AISimulate has no quantization mode for",
    )
    assert modelled.moe_quant_mode(catalog, "b200", "CUTLASS", {}) == ("w4a8_mxfp4_mxfp8", None)
    assert modelled.moe_quant_mode(catalog, "h200", "TRITON", {}) == ("w4a16_mxfp4", None)
    assert modelled.moe_quant_mode(catalog, "b200", "TRITON", {"OVERRIDE_QUANT_ALGO": "W4A16_MXFP4"}) == (
        "w4a16_mxfp4",
        None,
    )


def test_attention_data_parallel_keeps_the_experts_own_parallel_sizes():
    assert modelled.parallel_layout(4, 2, True) == {"tp": 1, "dp": 4, "moe_tp": 2, "moe_ep": 2}
    assert modelled.parallel_layout(4, 4, False) == {"tp": 4, "dp": 1, "moe_tp": 1, "moe_ep": 4}


def test_a_prefill_worker_takes_one_prompt_at_a_time_as_aiconfigurators_own_search_does(catalog):
    recipe = catalog.recipes["b200-disagg-4p4d"]
    request = modelled.estimate_request(
        catalog, "b200", recipe.traffic, modelled.recipe_workers(catalog, "b200-disagg-4p4d")
    )
    assert request.inputs["prefill_batch_size"] == 1
    assert request.inputs["decode_batch_size"] == 64  # 256 concurrent over the decode worker's 4 attention ranks


def test_engine_settings_aiconfigurator_takes_no_input_for_or_assumes_are_named(catalog):
    assert modelled.not_inputs(modelled.recipe_workers(catalog, "h200-agg-low-latency", 8)) == {
        "worker": [
            "moe_config.backend TRITON",
            "max_seq_len unset (TensorRT-LLM's default): AISimulate takes isl + osl",
        ]
    }
    [worker] = modelled.recipe_workers(catalog, "b200-agg-max-throughput", 8)
    assert modelled.not_inputs([worker])["worker"][1] == "max_num_tokens 16384: activations sized for 8192"
