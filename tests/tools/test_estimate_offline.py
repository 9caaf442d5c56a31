"""tools/estimate.py without AIConfigurator: the stored calibration is at the published layouts and the
batches the tool tries, and the point's answer is stored as AIConfigurator gave it."""

from __future__ import annotations

from gpt_oss_infra.tools import estimate


def test_each_calibration_point_is_at_its_published_layout_and_a_tried_batch(catalog):
    assert len(catalog.estimates.calibration) == len(catalog.performance.max_load)
    batches = estimate.calibration_batches(catalog.aiconfigurator.calibration.largest_batch)
    assert batches == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
    for figure, point in zip(catalog.performance.max_load, catalog.estimates.calibration, strict=True):
        assert (point.hardware, point.layout, point.input_tokens) == (
            figure.hardware,
            figure.layout,
            figure.input_tokens,
        )
        assert point.inputs == estimate.calibration_inputs(catalog, figure, point.inputs["batch_size"]), "make estimate"
        assert point.inputs["batch_size"] in batches


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


def test_the_largest_batch_without_aiconfigurators_memory_warning_is_kept(catalog):
    figure = catalog.performance.max_load[0]
    fits = {"database": "x", "outputTokensPerSecondPerGpu": 100.0, "warning": None}
    tried = [
        (1, fits),
        (2, fits | {"outputTokensPerSecondPerGpu": 150.0}),
        (4, fits | {"warning": "KV cache too small"}),
        (8, {"notModelled": "OOM: does not fit"}),
    ]
    point = estimate._calibration(catalog, figure, "b200_sxm", tried)
    assert (point["inputs"]["batch_size"], point["modelledTokensPerSecondPerGpu"]) == (2, 150.0)
    none = estimate._calibration(catalog, figure, "b200_sxm", [(8, {"notModelled": "OOM: does not fit"})])
    assert none["notModelled"] == "OOM: does not fit" and "inputs" not in none
