"""tools/estimate.py without AISimulate: the stored calibration is at the published layouts and the
batches the tool tries, and the point's answer is stored as AISimulate gave it."""

from __future__ import annotations

import pytest
import yaml

from gpt_oss_infra.tools import estimate


def test_each_calibration_point_is_at_its_published_layout(catalog):
    assert len(catalog.estimates.calibration) == len(catalog.performance.max_load)
    largest = catalog.aiconfigurator.calibration.largest_batch
    for figure, point in zip(catalog.performance.max_load, catalog.estimates.calibration, strict=True):
        assert (point.hardware, point.layout, point.input_tokens) == (
            figure.hardware,
            figure.layout,
            figure.input_tokens,
        )
        assert point.inputs == estimate.calibration_inputs(catalog, figure, point.inputs["batch_size"]), "make estimate"
        assert 1 <= point.inputs["batch_size"] <= largest


def test_the_largest_batch_that_fits_is_found_by_doubling_then_bisecting(monkeypatch):
    """The driver (tools/aisimulate_driver.py) with AISimulate's answers stood in: batches up to
    900 fit, 901 and above warn; a batch past the largest asked for is never tried."""
    from gpt_oss_infra.tools import aisimulate_driver as driver

    tried = []

    def answer(request, job):
        batch = job["inputs"]["batch_size"]
        tried.append(batch)
        return {"outputTokensPerSecondPerGpu": float(batch), "warning": None if batch <= 900 else "KV cache too small"}

    monkeypatch.setattr(driver, "_answer", answer)
    found = driver._largest_batch({}, {"system": "x", "inputs": {}, "largest": 2048})
    assert (found["batch"], found["outputTokensPerSecondPerGpu"]) == (900, 900.0)
    assert tried[:11] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] and max(tried) <= 2048
    everything = driver._largest_batch({}, {"system": "x", "inputs": {}, "largest": 600})
    assert everything["batch"] == 600  # fits up to the largest asked for
    monkeypatch.setattr(driver, "_answer", lambda request, job: {"notModelled": "OOM"})
    assert driver._largest_batch({}, {"system": "x", "inputs": {}, "largest": 8}) == {
        "notModelled": "even one sequence per rank does not fit the GPU's memory"
    }


def test_a_dep_layout_is_attention_data_parallel_with_experts_over_every_gpu(catalog):
    b200 = next(f for f in catalog.performance.max_load if f.layout == "DEP2")
    inputs = estimate.calibration_inputs(catalog, b200, 64)
    assert (inputs["tp_size"], inputs["attention_dp_size"], inputs["moe_tp_size"], inputs["moe_ep_size"]) == (
        1,
        2,
        1,
        2,
    )
    assert (inputs["kvcache_quant_mode"], inputs["moe_quant_mode"]) == ("fp8", "w4a8_mxfp4_mxfp8")


def test_a_calibration_point_keeps_the_batch_and_figure_aiconfigurator_found(catalog):
    figure = catalog.performance.max_load[0]
    point = estimate._calibration(
        catalog, figure, "b200_sxm", {"batch": 900, "database": "x", "outputTokensPerSecondPerGpu": 150.0}
    )
    assert (point["inputs"]["batch_size"], point["modelledTokensPerSecondPerGpu"]) == (900, 150.0)
    none = estimate._calibration(catalog, figure, "b200_sxm", {"notModelled": "OOM: does not fit"})
    assert none["notModelled"] == "OOM: does not fit" and "inputs" not in none


def recommend_args(**changes):
    import argparse

    values = {"hardware": "b200", "gpus": 8, "ttft_ms": 2000.0, "tpot_ms": 30.0, "isl": 8192, "osl": 1024} | changes
    return argparse.Namespace(**values)


def search_row(mode, workers, gpus, concurrency):
    from gpt_oss_infra.core.inputs.estimates import SearchRow

    return SearchRow.model_validate(
        {"mode": mode, "workers": workers, "ttftMs": 500, "tpotMs": 25, "tokensPerSecondPerGpu": 3000,
         "tokensPerSecondPerUser": 40, "concurrency": concurrency, "gpus": gpus, "database": "1.3.0rc20"}
    )  # fmt: skip


def test_a_recommended_disaggregated_recipe_has_what_disaggregated_serving_needs_and_plans(catalog, tmp_path):
    """The branch no search here returns at the sizes the tests run: a search row made by hand."""
    import shutil
    from pathlib import Path

    import yaml

    from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR, load_catalog
    from gpt_oss_infra.core.stack import build_stack
    from gpt_oss_infra.tools import recommend

    worker = {"tp": 1, "dp": 1, "moe_tp": 1, "moe_ep": 1, "bs": 1, "memory": 60, "workers": 2}
    decode = {"tp": 1, "dp": 2, "moe_tp": 1, "moe_ep": 2, "bs": 128, "memory": 50, "workers": 2}
    row = search_row("disagg", {"prefill": worker, "decode": decode}, 6, 512)
    content = recommend.recipe(catalog, row, recommend_args(), "0.13.0.dev202610270000000085", [])
    prefill, decode_engine = content["workers"]["prefill"]["engine"], content["workers"]["decode"]["engine"]
    assert prefill["disable_overlap_scheduler"] is True and decode_engine["disable_overlap_scheduler"] is False
    assert prefill["cache_transceiver_config"] == {"backend": "UCX", "max_tokens_in_buffer": 65536}
    assert decode_engine["enable_attention_dp"] is True and content["workers"]["decode"]["gpus"]["default"] == 2
    assert (content["mode"], content["goal"]) == ("disaggregated", "disaggregated")
    assert content["traffic"]["concurrencyPerGpu"] == 85  # 512 over the row's 6 GPUs
    assert "one replica uses 3 GPUs: deploy it with replicas 2 to fill 8" in content["decisions"]
    assert content["workers"]["prefill"]["args"] is not content["workers"]["decode"]["args"]  # no YAML aliases
    configs = Path(shutil.copytree(CONFIG_DIR, tmp_path / "configs"))
    (configs / "recipes" / "b200-recommended.yaml").write_text(yaml.safe_dump(content))
    loaded = load_catalog(configs)  # engine fields checked
    stack = build_stack(recommend._trial_stack("b200-recommended", "b200", 1), loaded, with_hf_token=False)
    assert {w.role for w in stack.deployments[0].workers} == {"prefill", "decode"}


def test_what_a_recipe_cannot_express_is_skipped_with_why():
    from gpt_oss_infra.tools import recommend

    both = search_row("agg", {"worker": {"tp": 2, "dp": 2, "moe_tp": 1, "moe_ep": 4, "bs": 8, "memory": 1}}, 4, 32)
    assert recommend.expressible(both, "CUTLASS") == "worker: tensor and attention data parallel together (tp 2, dp 2)"
    moe_tp = search_row("agg", {"worker": {"tp": 2, "dp": 1, "moe_tp": 2, "moe_ep": 1, "bs": 8, "memory": 1}}, 2, 8)
    assert recommend.expressible(moe_tp, "TRITON") == (
        "worker: MoE tensor parallel 2, which the TRITON MoE backend does not do"
    )
    assert recommend.expressible(moe_tp, "CUTLASS") is None
    unequal = {"tp": 1, "dp": 1, "moe_tp": 1, "moe_ep": 1, "bs": 1, "memory": 1}
    row = search_row("disagg", {"prefill": unequal | {"workers": 1}, "decode": unequal | {"workers": 3}}, 4, 64)
    assert recommend.expressible(row, "CUTLASS") == "unequal prefill and decode worker counts"


@pytest.mark.skipif(
    not yaml.__with_libyaml__, reason="this PyYAML has no LibYAML: the driver leaves safe_load as it is"
)
def test_the_driver_has_aisimulate_read_its_yaml_with_libyaml(monkeypatch):
    """AISimulate's own yaml.safe_load calls, in the driver's process, parse with LibYAML: the same data."""
    from gpt_oss_infra.tools import aisimulate_driver as driver

    monkeypatch.setattr(yaml, "safe_load", yaml.safe_load)  # put back after the test
    text = "system: h100_sxm\ndata_dir: data/h100_sxm\nnode: {num_gpus_per_node: 8, inter_node_bw: 25.0e9}\n"
    pure = yaml.safe_load(text)
    driver.read_yaml_with_libyaml()
    assert yaml.safe_load.keywords == {"Loader": yaml.CSafeLoader}
    assert yaml.safe_load(text) == pure
    # YAML 1.1 as PyYAML resolves it, for either parser: 25.0e9 (no sign in the exponent) is a string.
    assert pure == {
        "system": "h100_sxm",
        "data_dir": "data/h100_sxm",
        "node": {"num_gpus_per_node": 8, "inter_node_bw": "25.0e9"},
    }
