"""core/render/benchmark.py: the benchmark's traffic shape."""

from __future__ import annotations

from gpt_oss_infra.core.stack import build_stack


def test_benchmark_can_use_the_dynamo_guide_long_context_shape(dev_raw, catalog):
    dev_raw["deployments"]["gpt-oss"]["benchmark"] = {"enabled": True, "inputTokens": 32000, "outputTokens": 256}
    job = build_stack(dev_raw, catalog, with_hf_token=False).serving[0].benchmark.job
    env = {item["name"]: item["value"] for item in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (env["ISL"], env["OSL"], env["CONCURRENCY"]) == ("32000", "256", str(2 * 8))
