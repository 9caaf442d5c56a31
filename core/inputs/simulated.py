"""configs/simulated.yaml: what `make simulate` (tools/simulate.py) found by replaying each shipped deployment's
traffic through Dynamo's offline replay. Simulated figures, each entry with what it was replayed for (`match`),
which the plan summary compares with a deployment to quote the entry (core/report/simulated.py)."""

from __future__ import annotations

from pydantic import NonNegativeFloat, NonNegativeInt

from gpt_oss_infra.core.schema import StrictModel


class SimulatedAutoscaling(StrictModel):
    ttft_ms: float
    itl_ms: float
    bounds: dict[str, tuple[int, int]]  # role -> [minReplicas, maxReplicas]


class SimulatedMatch(StrictModel):
    """What the replay stood in for: a deployment of this recipe, these GPUs per worker, on a pool of these nodes,
    with this autoscaling (None: the deployment has none, and the replay's is a what-if)."""

    recipe: str
    gpus: dict[str, int]  # role -> GPUs per worker
    instance_type: str
    nodes: int
    autoscaling: SimulatedAutoscaling | None


class SimulatedRun(StrictModel):
    requests: NonNegativeInt
    completed: NonNegativeInt
    within_sla: NonNegativeInt
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    itl_p50_ms: float | None
    itl_p99_ms: float | None
    gpu_hours: NonNegativeFloat | None = None  # per day (the day trace) or per hour (steady); none for shared
    usd: NonNegativeFloat | None = None  # the same, at the pool's On-Demand price per GPU
    scaling_events: NonNegativeInt | None = None  # the Planner's
    sizes: list[str] | None = None  # the oracle's, interval by interval
    unmet_intervals: NonNegativeInt | None = None  # the oracle's intervals not even the largest size met


class Capacity(StrictModel):
    requests_per_second: float  # the highest rate the peak size serves within the SLA, found by replay
    of_modelled_rate: float
    modelled_rate: str  # what the modelled rate it was found from is


class SimulatedDeployment(StrictModel):
    match: SimulatedMatch
    what_if: bool  # the autoscaling is the tool's (1 to what the pool holds), not the stack's
    bounds: dict[str, tuple[int, int]]  # role -> [minReplicas, maxReplicas] replayed; the static runs at the maxima
    router: str
    sla: dict[str, float]  # ttftMs, itlMs
    usd_per_gpu_hour: float | None
    start_delay_minutes: float  # what the delayed Planner run's new workers waited (configs/durations.yaml)
    requests: dict[str, int]  # trace -> requests
    trace_sha256: dict[str, str]
    fingerprint: str  # tools/simulate.py: fingerprint(); tests compare it with the inputs of today
    capacity: Capacity
    runs: dict[str, SimulatedRun]


class Simulated(StrictModel):
    tool: str
    deployments: dict[str, SimulatedDeployment] = {}  # "<stack>/<deployment>" -> its replay
    not_simulated: dict[str, str] = {}  # "<stack>/<deployment>" -> why not
