"""`make recommend`: a new recipe from NVIDIA AIConfigurator's best configuration for a GPU count,
prompt and answer lengths and latency targets.

AIConfigurator searches aggregated and disaggregated layouts (tools/aiconfigurator_driver.py, in
.venv-aic); the best one a recipe can express becomes configs/recipes/<name>.yaml: its layout, batch
and concurrency from the search, the engine settings TensorRT-LLM's gpt-oss guide gives for the
hardware and goal, the Dynamo flags every recipe has, and sources naming the model. The file is then
checked like every recipe (engine fields, the GPUs it fits on) and modelled at its own point
(`make estimate` for it), so it plans, validates and prices like the others.

    python -m gpt_oss_infra.tools.recommend --hardware h200 --gpus 8 --ttft-ms 1000 --tpot-ms 10 \\
        --isl 1024 --osl 1024 [--name NAME]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from gpt_oss_infra.core.errors import ConfigError
from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR, Catalog, load_catalog
from gpt_oss_infra.core.inputs.modelled import SearchRow
from gpt_oss_infra.core.render.figures import describe
from gpt_oss_infra.core.resolve.modelled import AGGREGATED, DISAGGREGATED
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import estimate
from gpt_oss_infra.tools.estimate import AIC_PYTHON, ask

# What TensorRT-LLM's gpt-oss guide says per architecture and goal ([trtllm-gptoss-readme]): TRITON on
# Hopper for latency and throughput; on Blackwell TRTLLM for latency and CUTLASS for throughput.
MOE_BACKEND = {("hopper", True): "TRITON", ("hopper", False): "TRITON", ("blackwell", True): "TRTLLM",
               ("blackwell", False): "CUTLASS"}  # fmt: skip
DYNAMO_FLAGS = ["--dyn-reasoning-parser", "gpt_oss", "--dyn-tool-call-parser", "harmony"]  # [dynamo-gptoss-trtllm]
KV_CACHE_FRACTION = 0.9  # TensorRT-LLM's default free_gpu_memory_fraction


def experiments(catalog: Catalog, hardware: str, gpus: int, ttft: float, tpot: float, isl: int, osl: int) -> dict:
    """cli_exp's two experiments at these GPUs, lengths and targets, with the architecture's MoE quantization."""
    entry = catalog.hardware[hardware]
    quant = {"moe_quant_mode": catalog.aiconfigurator.moe_quantization[entry.architecture]}
    common = {"total_gpus": gpus, "isl": isl, "osl": osl, "ttft": ttft, "tpot": tpot}
    roles = ("prefill", "decode")
    return {
        AGGREGATED: {"serving_mode": AGGREGATED, "system_name": entry.aiconfigurator_system, **common, **quant},
        DISAGGREGATED: {
            "serving_mode": DISAGGREGATED,
            **{f"{role}_system_name": entry.aiconfigurator_system for role in roles},
            **common,
            **{f"{role}_{key}": value for role in roles for key, value in quant.items()},
        },
    }


def expressible(row: SearchRow) -> str | None:
    """Why a recipe cannot express this configuration, or None: TensorRT-LLM's attention data parallel
    spans all of a worker's ranks (AIConfigurator's tp 1), and a recipe's roles have one worker each
    per replica (equal prefill and decode worker counts become replicas)."""
    for role, worker in row.workers.items():
        if worker["tp"] > 1 and worker["dp"] > 1:
            return f"{role}: tensor and attention data parallel together (tp {worker['tp']:g}, dp {worker['dp']:g})"
    counts = {worker.get("workers", 1) for worker in row.workers.values()}
    if len(counts) > 1:
        return "unequal prefill and decode worker counts"
    return None


def recipe(catalog: Catalog, hardware: str, row: SearchRow, args: argparse.Namespace, skipped: list[str]) -> dict:
    """The recipe file's content for one search row."""
    entry = catalog.hardware[hardware]
    latency_goal = args.tpot_ms <= catalog.aiconfigurator.goals["low-latency"].tpot_ms
    goal = "disaggregated" if row.mode == DISAGGREGATED else ("low-latency" if latency_goal else "max-throughput")
    backend = MOE_BACKEND[(entry.architecture, latency_goal)]
    replicas = int(next(iter(row.workers.values())).get("workers", 1))
    workers = {}
    for role, worker in row.workers.items():
        ranks = int(worker["tp"] * worker["dp"])
        batch = int(worker["bs"])
        engine: dict[str, Any] = {
            "enable_attention_dp": worker["dp"] > 1,
            "max_batch_size": batch,
            "cuda_graph_config": {"enable_padding": True, "max_batch_size": batch},
            "moe_config": {"backend": backend},
            "kv_cache_config": {"free_gpu_memory_fraction": KV_CACHE_FRACTION},
            "trust_remote_code": True,
        }
        expert = int(worker["moe_ep"])
        workers[role] = {
            "gpus": {"allowed": [ranks], "default": ranks},
            "parallelism": {"tensor": "gpus", "expert": "gpus" if expert == ranks else expert},
            "engine": engine,
            "args": DYNAMO_FLAGS,
        }
    command = (
        f"make recommend HARDWARE={hardware} GPUS={args.gpus} TTFT_MS={args.ttft_ms:g} TPOT_MS={args.tpot_ms:g} "
        f"ISL={args.isl} OSL={args.osl}"
    )
    decisions = [
        f"moe_config.backend {backend}: [trtllm-gptoss-readme] for {entry.architecture} and "
        f"{'latency' if latency_goal else 'throughput'} (AIConfigurator takes no MoE backend input)",
        f"kv_cache_config.free_gpu_memory_fraction {KV_CACHE_FRACTION}: TensorRT-LLM's default",
        "max_batch_size and the CUDA-graph batch: AIConfigurator's batch per rank",
        "--dyn-reasoning-parser / --dyn-tool-call-parser: as every recipe here, from [dynamo-gptoss-trtllm]",
    ]
    if replicas > 1:
        decisions.append(
            f"the search's {replicas} prefill and {replicas} decode workers: deploy with replicas {replicas}"
        )
    decisions += [f"not the search's better-ranked {reason}" for reason in skipped]
    return {
        "description": f"AIConfigurator's best configuration for {entry.gpu} on {args.gpus} GPUs at "
        f"{args.isl}/{args.osl} tokens, TTFT <= {args.ttft_ms:g} ms and TPOT <= {args.tpot_ms:g} ms: "
        f"{describe(row, args.gpus)}. "
        "Modelled, not measured.",
        "hardware": hardware,
        "mode": "disaggregated" if row.mode == DISAGGREGATED else "aggregated",
        "goal": goal,
        "backend": catalog.aiconfigurator.backend,
        "sources": [
            f"[aiconfigurator] {catalog.estimates.tool.removeprefix('NVIDIA AIConfigurator ')} best configuration of "
            f"`{command}` on {date.today().isoformat()} (database {row.database}): modelled, not measured"
        ],
        "decisions": decisions,
        "traffic": {
            "inputTokens": args.isl,
            "outputTokens": args.osl,
            # The search's concurrency over its GPUs (all the workers of a disaggregated row).
            "concurrencyPerGpu": max(1, round(row.concurrency / row.gpus)),
        },
        "workers": workers,
    }


def checked(name: str, content: dict[str, Any], hardware: str) -> None:
    """The recipe loads like every recipe (its engine fields checked) and its workers fit their GPUs on
    a node pool of its hardware (a stack's own checks); SystemExit naming what fails."""
    with tempfile.TemporaryDirectory() as scratch:
        configs = Path(shutil.copytree(CONFIG_DIR, Path(scratch) / "configs"))
        (configs / "recipes" / f"{name}.yaml").write_text(yaml.safe_dump(content, sort_keys=False))
        try:
            catalog = load_catalog(configs)
            gpus = sum(spec.gpus.default for spec in catalog.recipes[name].workers.values())
            nodes = -(
                -gpus
                // catalog.hardware[hardware]
                .instance_types[catalog.hardware[hardware].default_instance_type]
                .gpus_per_node
            )
            build_stack(_trial_stack(name, hardware, nodes), catalog, with_hf_token=False)
        except ConfigError as error:
            raise SystemExit(f"the recommended recipe does not pass the checks every recipe passes:\n{error}") from None


def _trial_stack(recipe_name: str, hardware: str, nodes: int) -> dict[str, Any]:
    """The smallest stack that places the recipe: an existing cluster with one pool of its hardware."""
    return {
        "environment": "recommend",
        "release": {
            "dynamo": "1.6.1",
            "runtimeImage": "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.6.1",
            "model": "openai/gpt-oss-120b",
            "modelRevision": "b5c939de8f754692c1647ca79fbf85e8c1e70f8a",
        },
        "cluster": {"kind": "existing", "name": "recommend"},
        "nodePools": {"gpu": {"hardware": hardware, "nodes": nodes}},
        "modelCache": {"storage": "existing", "storageClassName": "shared"},
        "deployments": {"gpt-oss": {"recipe": recipe_name, "nodePool": "gpu"}},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", required=True, help="a hardware type of configs/hardware.yaml")
    parser.add_argument("--gpus", type=int, required=True, help="GPUs of one replica")
    parser.add_argument("--ttft-ms", type=float, required=True, help="time-to-first-token target")
    parser.add_argument("--tpot-ms", type=float, required=True, help="time-per-output-token target")
    parser.add_argument("--isl", type=int, required=True, help="prompt tokens")
    parser.add_argument("--osl", type=int, required=True, help="answer tokens")
    parser.add_argument("--name", help="the recipe's name (default: <hardware>-recommended-<mode>-<isl>-<osl>)")
    parser.add_argument("--out-dir", type=Path, default=CONFIG_DIR / "recipes", help="where the recipe is written")
    parser.add_argument("--no-estimate", action="store_true", help="do not model it with make estimate afterwards")
    parser.add_argument("--aic-python", type=Path, default=AIC_PYTHON, help="the Python that has aiconfigurator")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    if args.hardware not in catalog.hardware:
        raise SystemExit(f"unknown hardware {args.hardware}; known: {', '.join(catalog.hardware)}")
    search = experiments(catalog, args.hardware, args.gpus, args.ttft_ms, args.tpot_ms, args.isl, args.osl)
    _, (answer,) = ask([{"kind": "search", "inputs": search, "top": catalog.aiconfigurator.search_top}], catalog,
                       args.aic_python)  # fmt: skip
    if "notModelled" in answer:
        raise SystemExit(f"AIConfigurator found no configuration: {answer['notModelled']}")
    rows = sorted(
        (SearchRow.model_validate(row) for rows in answer["modes"].values() for row in rows),
        key=lambda row: -row.tokens_per_second_per_gpu,
    )
    skipped = []
    for row in rows:
        reason = expressible(row)
        if reason is None:
            break
        skipped.append(f"{describe(row, args.gpus)} ({reason})")
    else:
        raise SystemExit("no configuration AIConfigurator found is one a recipe can express:\n" + "\n".join(skipped))
    mode = "agg" if row.mode == AGGREGATED else "disagg"
    name = args.name or f"{args.hardware}-recommended-{mode}-{args.isl}-{args.osl}"
    content = recipe(catalog, args.hardware, row, args, skipped)
    checked(name, content, args.hardware)
    path = args.out_dir / f"{name}.yaml"
    header = "# Written by `make recommend` (tools/recommend.py) from NVIDIA AIConfigurator's best configuration.\n"
    path.write_text(header + yaml.safe_dump(content, sort_keys=False, width=110))
    print(f"wrote {path}: {describe(row, args.gpus)}", file=sys.stderr)
    if not args.no_estimate:
        estimate.main(["--recipe", name, "--skip-calibration", "--aic-python", str(args.aic_python)])


if __name__ == "__main__":
    main()
