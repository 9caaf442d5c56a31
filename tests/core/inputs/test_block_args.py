"""core/inputs/block_args.py: the public blocks' arguments as stack config, and refusals keyed
by argument."""

from __future__ import annotations

from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs import block_args
from tests.support import example_entries

# GPU nodes of a cluster the program did not make, by the label NVIDIA's GPU feature discovery sets: a
# GptOssDeployment names them (node_selector) or a GpuNodePool of the program's (node_pool).
H200_NODES = {"nvidia.com/gpu.product": "NVIDIA-H200"}


def test_the_blocks_default_release_is_the_one_every_shipped_stack_pins():
    release = example_entries("dev")["gpt-oss-infra:release"]
    defaults = block_args.DEFAULTS
    assert (defaults["dynamoRelease"], defaults["model"], defaults["modelRevision"]) == (
        release["dynamo"],
        release["model"],
        release["modelRevision"],
    )


def test_a_deployments_release_takes_the_runtime_its_dynamo_release_publishes_for_the_recipes_backend(catalog):
    mocker, _ = block_args.deployment("trial", {"recipe": "trial-mocker-agg", "dynamo_release": "1.6.1"}, catalog)
    assert mocker.config["release"]["runtimeImage"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1"
    assert mocker.config["nodePools"] == {}  # a cpu recipe takes no pool
    trtllm, _ = block_args.deployment(
        "gpt-oss", {"recipe": "h200-agg-low-latency", "dynamo_release": "1.5.1", "node_selector": H200_NODES}, catalog
    )
    assert trtllm.config["release"]["runtimeImage"] == "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.5.1"


def test_problems_are_keyed_by_the_argument_they_came_from_with_the_rest_of_their_path(catalog):
    fragment, _ = block_args.deployment(
        "gpt-oss", {"recipe": "h200-agg-low-latency", "node_pool": "h200", "node_selector": H200_NODES}, catalog
    )
    error = ConfigError(
        [
            Problem("gpt-oss-infra:deployments.gpt-oss.overrides.kv_cache_config.dtype", "bad"),
            Problem("gpt-oss-infra:nodePools.h200.nodes", "too few"),
            Problem("gpt-oss-infra:release.dynamo", "unknown"),
            Problem("aws:region", "unknown"),
            Problem("gpt-oss-infra:observability.enabled", "never set by a block"),
        ]
    )
    assert [str(problem) for problem in fragment.refusal(error).problems] == [
        "overrides.kv_cache_config.dtype: bad",
        "pool_nodes: too few",
        "dynamo_release: unknown",
        "region: unknown",
        "(derived) observability.enabled: never set by a block",
    ]
    assert fragment.warning("gpt-oss-infra:deployments.gpt-oss: KV for 480 sequences") == "name: KV for 480 sequences"


def test_whole_numbers_from_other_languages_become_ints():
    assert [block_args.whole(value) for value in (4.0, 4, 2.5, None, "4")] == [4, 4, 2.5, None, "4"]
