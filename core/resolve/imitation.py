"""What a mocker recipe imitates: a real recipe's worker at a GPU count, in the numbers a mocker takes.

The trial recipes (configs/recipes/trial-*.yaml) run Dynamo's mocker with the limits of a real
recipe's worker (batch, tokens per iteration, context length, KV cache blocks) and with timing tables
modelled for that worker (configs/mocker-timing/). Both come from here: the KV cache capacity is this
project's own sizing estimate (core/resolve/sizing.py) on the hardware's default instance type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpt_oss_infra.core.backends import EngineView
from gpt_oss_infra.core.inputs.catalog import Catalog, Hardware, Role
from gpt_oss_infra.core.inputs.config import NodePoolConfig
from gpt_oss_infra.core.resolve import sizing
from gpt_oss_infra.core.resolve.recipes import NodePool, Worker, recipe_engine

# TensorRT-LLM's KV cache block (KvCacheConfig.tokens_per_block's default); the mocker's own block size
# with --engine-type trtllm is the same (its start-up log: block_size 32).
TRTLLM_TOKENS_PER_BLOCK = 32


@dataclass(frozen=True)
class ImitatedWorker:
    recipe: str
    role: str
    gpus: int
    hardware: Hardware
    engine: dict[str, Any]  # the recipe's engine config at this GPU count
    env: dict[str, str]
    view: EngineView
    kv_token_capacity: int  # estimated (core/resolve/sizing.py)
    max_seq_len: int

    def mocker_limits(self) -> dict[str, int | bool]:
        """The mocker flags that give it this worker's limits and scheduling."""
        return {
            "enable_prefix_caching": self.view.prefix_caching,
            "enable_chunked_prefill": self.view.chunked_prefill,
            "block_size": TRTLLM_TOKENS_PER_BLOCK,
            "num_gpu_blocks_override": self.kv_token_capacity // TRTLLM_TOKENS_PER_BLOCK,
            "max_num_seqs": self.view.max_batch_size,
            "max_num_batched_tokens": self.view.max_num_tokens,
            "max_model_len": self.max_seq_len,
        }


def imitated_worker(catalog: Catalog, recipe_name: str, role: Role, gpus: int) -> ImitatedWorker:
    recipe = catalog.recipes[recipe_name]
    spec, backend = recipe.workers[role], catalog.backends[recipe.backend]
    hardware = catalog.hardware[recipe.hardware]
    engine = recipe_engine(spec, gpus, backend)
    view = backend.view(engine)
    pool = NodePool(
        name=recipe.hardware,
        config=NodePoolConfig(hardware=recipe.hardware, nodes=1),
        hardware=hardware,
        instance_type=hardware.default_instance_type,
    )
    worker = Worker(role, backend.spec.service_names[role], gpus, 1, engine, dict(spec.env), list(spec.args))
    fit = sizing.worker_fit(worker, pool, catalog.model, recipe.traffic, view)
    return ImitatedWorker(
        recipe=recipe_name,
        role=role,
        gpus=gpus,
        hardware=hardware,
        engine=engine,
        env=dict(spec.env),
        view=view,
        kv_token_capacity=fit.kv_token_capacity,
        max_seq_len=view.max_seq_len or catalog.model.max_position_embeddings,
    )
