"""Run by tests/tools/test_trial.py in .venv-trial: Dynamo 1.6.1's Planner perf model for an aggregated worker
(PlannerEnginePerfModel, with AISimulate's regression), fed forward passes as its load scaling feeds them, one a
tick. Reads {"planner_config": ..., "engine": ..., "runs": {name: [pass, ...]}} as JSON on stdin; prints, for each
run (a fresh perf model) and each of its passes, the ITL in ms the Planner would estimate then (null: no estimate),
as JSON {name: [...]}."""

from __future__ import annotations

import json
import sys

from dynamo.common.forward_pass_metrics import ForwardPassMetrics, ScheduledRequestMetrics
from dynamo.planner.config.planner_config import PlannerConfig
from dynamo.planner.core.perf_model.ais_adapter import PlannerEnginePerfModel
from dynamo.planner.core.types import EngineCapabilities


def estimates(request: dict, passes: list[dict]) -> list[float | None]:
    model = PlannerEnginePerfModel(
        worker_type="aggregated",
        config=PlannerConfig(**request["planner_config"]),
        capabilities=EngineCapabilities(**request["engine"]),
    )
    found = []
    for counter, observed in enumerate(passes):
        scheduled = ScheduledRequestMetrics(**observed["scheduled"])
        fpm = ForwardPassMetrics(
            worker_id="w", dp_rank=0, counter_id=counter, wall_time=observed["wall_time"], scheduled_requests=scheduled
        )
        model.add_observations({("w", 0): fpm})
        # As the aggregated load scaling asks it (dynamo.planner.core.load_scaling: _agg_decode_scaling).
        itl = model.estimate_scheduled_decode_itl([fpm], include_queued_decode=True)
        found.append(None if itl is None else round(itl * 1000, 1))
    return found


if __name__ == "__main__":
    request = json.load(sys.stdin)
    print(json.dumps({name: estimates(request, passes) for name, passes in request["runs"].items()}))
