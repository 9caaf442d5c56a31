"""`make recommend`: a new recipe from NVIDIA AISimulate's best configuration for a GPU count,
prompt and answer lengths and latency targets.

AISimulate searches aggregated and disaggregated layouts (tools/aisimulate_driver.py, in
.venv-trial); the best one a recipe can express becomes configs/recipes/<name>.yaml: its layout, batch
and concurrency from the search, the engine settings TensorRT-LLM's gpt-oss guide gives for the
hardware and goal, the Dynamo flags every recipe has, and sources naming the model. The file is then
checked like every recipe (engine fields, the GPUs it fits on) and modelled at its own point
(`make estimate` for it), so it plans, validates and prices like the others.

    python -m gpt_oss_infra recommend --hardware h200 --gpus 8 --ttft-ms 1000 --tpot-ms 10 \\
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
from gpt_oss_infra.core.inputs.estimates import SearchRow
from gpt_oss_infra.core.report.figures import describe
from gpt_oss_infra.core.resolve.modelled import AGGREGATED, DISAGGREGATED, experiments, moe_quant_mode
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import estimate
from gpt_oss_infra.tools.estimate import add_simulator_python, ask

# What TensorRT-LLM's gpt-oss guide says per architecture and goal ([trtllm-gptoss-readme]): TRITON on
# Hopper for latency and throughput; on Blackwell TRTLLM for latency and CUTLASS for throughput.
MOE_BACKEND = {("hopper", True): "TRITON", ("hopper", False): "TRITON", ("blackwell", True): "TRTLLM",
               ("blackwell", False): "CUTLASS"}  # fmt: skip
DYNAMO_FLAGS = ["--dyn-reasoning-parser", "gpt_oss", "--dyn-tool-call-parser", "harmony"]  # [dynamo-gptoss-trtllm]
KV_CACHE_FRACTION = 0.9  # TensorRT-LLM's default free_gpu_memory_fraction


def search_inputs(catalog: Catalog, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The search at the asked GPUs, lengths and targets, with the MoE quantization TensorRT-LLM runs
    with the backend the recipe will take, and TensorRT-LLM's default KV cache fraction."""
    entry = catalog.hardware[args.hardware]
    mode, why_not = moe_quant_mode(catalog, args.hardware, moe_backend(catalog, args), {})
    if mode is None:
        raise SystemExit(why_not)
    settings = {"moe_quant_mode": mode, "free_gpu_memory_fraction": KV_CACHE_FRACTION}
    return experiments(
        entry.aiconfigurator_system, args.gpus, (args.isl, args.osl), (args.ttft_ms, args.tpot_ms), settings
    )


def latency_goal(catalog: Catalog, args: argparse.Namespace) -> bool:
    """Whether the targets are a low-latency goal's (a TPOT target no looser than its)."""
    return args.tpot_ms <= catalog.aiconfigurator.goals["low-latency"].tpot_ms


def moe_backend(catalog: Catalog, args: argparse.Namespace) -> str:
    return MOE_BACKEND[(catalog.hardware[args.hardware].architecture, latency_goal(catalog, args))]


def expressible(row: SearchRow, backend: str) -> str | None:
    """Why a recipe cannot express this configuration, or None: TensorRT-LLM's attention data parallel
    spans all of a worker's ranks (AISimulate's tp 1), TRITON has no MoE tensor parallel, and a
    recipe's roles have one worker each per replica (equal worker counts become replicas)."""
    for role, worker in row.workers.items():
        if worker["tp"] > 1 and worker["dp"] > 1:
            return f"{role}: tensor and attention data parallel together (tp {worker['tp']:g}, dp {worker['dp']:g})"
        if backend == "TRITON" and worker["moe_tp"] > 1:  # [trtllm-gptoss-readme]: TRITON has no MoE TP
            return f"{role}: MoE tensor parallel {worker['moe_tp']:g}, which the TRITON MoE backend does not do"
    counts = {worker.get("workers", 1) for worker in row.workers.values()}
    if len(counts) > 1:
        return "unequal prefill and decode worker counts"
    return None


def recipe(catalog: Catalog, row: SearchRow, args: argparse.Namespace, version: str, skipped: list[str]) -> dict:
    """The recipe file's content for one search row."""
    entry = catalog.hardware[args.hardware]
    latency = latency_goal(catalog, args)
    goal = "disaggregated" if row.mode == DISAGGREGATED else ("low-latency" if latency else "max-throughput")
    backend = moe_backend(catalog, args)
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
        if row.mode == DISAGGREGATED:  # as every disaggregated recipe here and Dynamo's own engine configs
            engine["cache_transceiver_config"] = {"backend": "UCX", "max_tokens_in_buffer": transfer_buffer(args)}
            engine["disable_overlap_scheduler"] = role == "prefill"  # not supported on a prefill-only worker
        expert = int(worker["moe_ep"])
        workers[role] = {
            "gpus": {"allowed": [ranks], "default": ranks},
            "parallelism": {"tensor": "gpus", "expert": "gpus" if expert == ranks else expert},
            "engine": engine,
            "args": list(DYNAMO_FLAGS),
        }
    command = (
        f"make recommend HARDWARE={args.hardware} GPUS={args.gpus} TTFT_MS={args.ttft_ms:g} "
        f"TPOT_MS={args.tpot_ms:g} ISL={args.isl} OSL={args.osl}"
    )
    targets = catalog.aiconfigurator.goals[goal]
    decisions = [
        f"moe_config.backend {backend}: [trtllm-gptoss-readme] for {entry.architecture} and "
        f"{'latency' if latency else 'throughput'} (AISimulate takes no MoE backend input)",
        f"kv_cache_config.free_gpu_memory_fraction {KV_CACHE_FRACTION}: TensorRT-LLM's default, as searched",
        "max_batch_size and the CUDA-graph batch: AISimulate's batch per rank",
        "--dyn-reasoning-parser / --dyn-tool-call-parser: as every recipe here, from [dynamo-gptoss-trtllm]",
        f"goal {goal}: recommended for TTFT <= {args.ttft_ms:g} ms and TPOT <= {args.tpot_ms:g} ms; make estimate "
        f"compares it with the best configuration at its goal's targets (TTFT <= {targets.ttft_ms:g} ms, "
        f"TPOT <= {targets.tpot_ms:g} ms)",
    ]
    per_replica = row.gpus // replicas
    if per_replica < args.gpus:
        decisions.append(
            f"one replica uses {per_replica} GPUs: deploy it with replicas {args.gpus // per_replica} "
            f"to fill {args.gpus}"
        )
    decisions += [f"not the search's better-ranked {reason}" for reason in skipped]
    return {
        "description": f"AISimulate's best configuration for {entry.gpu} on {args.gpus} GPUs at "
        f"{args.isl}/{args.osl} tokens, TTFT <= {args.ttft_ms:g} ms and TPOT <= {args.tpot_ms:g} ms: "
        f"{describe(row, args.gpus)}. Modelled, not measured.",
        "hardware": args.hardware,
        "mode": "disaggregated" if row.mode == DISAGGREGATED else "aggregated",
        "goal": goal,
        "backend": catalog.aiconfigurator.backend,
        "sources": [
            f"[aisimulate] {version} best configuration of `{command}` on {date.today().isoformat()} "
            f"(database {row.database}): modelled, not measured"
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


def transfer_buffer(args: argparse.Namespace) -> int:
    """The KV cache transfer buffer in tokens: a whole sequence, at least the seed recipes' 65536."""
    return max(65536, 1 << (args.isl + args.osl - 1).bit_length())


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
        # the pool as an existing cluster names it: its nodes' own labels (here, the ones ours would carry)
        "nodePools": {"gpu": {"hardware": hardware, "nodes": nodes, "nodeSelector": {"gpt-oss-infra/pool": "gpu"}}},
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
    add_simulator_python(parser)
    args = parser.parse_args(argv)
    catalog = load_catalog()
    if args.hardware not in catalog.hardware:
        raise SystemExit(f"unknown hardware {args.hardware}; known: {', '.join(catalog.hardware)}")
    search = search_inputs(catalog, args)
    job = {"kind": "search", "inputs": search, "top": catalog.aiconfigurator.search_top}
    version, (answer,) = ask([job], catalog, args.simulator_python)
    if "notModelled" in answer:
        raise SystemExit(f"AISimulate found no configuration: {answer['notModelled']}")
    rows = sorted(
        (SearchRow.model_validate(row) for rows in answer["modes"].values() for row in rows),
        key=lambda row: -row.tokens_per_second_per_gpu,
    )
    skipped = []
    backend = moe_backend(catalog, args)
    for row in rows:
        reason = expressible(row, backend)
        if reason is None:
            break
        skipped.append(f"{describe(row, args.gpus)} ({reason})")
    else:
        raise SystemExit("no configuration AISimulate found is one a recipe can express:\n" + "\n".join(skipped))
    mode = "agg" if row.mode == AGGREGATED else "disagg"
    name = args.name or f"{args.hardware}-recommended-{mode}-{args.isl}-{args.osl}"
    content = recipe(catalog, row, args, version, skipped)
    checked(name, content, args.hardware)
    path = args.out_dir / f"{name}.yaml"
    header = "# Written by `make recommend` (tools/recommend.py) from NVIDIA AISimulate's best configuration.\n"
    path.write_text(header + yaml.safe_dump(content, sort_keys=False, width=110))
    print(f"wrote {path}: {describe(row, args.gpus)}", file=sys.stderr)
    if args.no_estimate:
        return
    if args.out_dir.resolve() != (CONFIG_DIR / "recipes").resolve():
        print(f"not modelled: make estimate models the recipes of {CONFIG_DIR / 'recipes'} only", file=sys.stderr)
        return
    estimate.main(["--recipe", name, "--skip-calibration", "--simulator-python", str(args.simulator_python)])


if __name__ == "__main__":
    main()
