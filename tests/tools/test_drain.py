"""Scale-down drops no request. Two sides, each on real Dynamo 1.6.1 here:
- a worker sent SIGTERM (what the kubelet sends when the Planner removes it) leaves discovery, so the router
  sends new requests to the other worker, and its runtime lets the requests it holds finish: the mocker
  (whose SIGTERM goes straight to the runtime) streams a long answer to the end and only then exits;
- a TensorRT-LLM worker's shutdown (dynamo/common/utils/graceful_shutdown.py, which dynamo/trtllm/main.py
  installs) aborts its generations when it sets its shutdown event (handler_base.py), which it does only
  after DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS: that upstream function, run here, waits exactly that long.
An autoscaled worker gets that grace period for its longest answer, and its pod the time around it
(core/resolve/drain.py), where the release's 5 s and the operator's 60 s would cut it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpt_oss_infra.core.dynamo_graph import components_by_name
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.resolve.drain import GRACE_PERIOD_VARIABLE, PREFILL_DRAIN_SECONDS, STOP_MARGIN_SECONDS
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.trial import PRIVATE_NETWORK, VENV
from tests.support import example_entries

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.end_to_end
def test_a_stopped_worker_finishes_its_answer_and_the_other_takes_new_requests():
    if subprocess.run([*PRIVATE_NETWORK, "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("no private network namespace here: Dynamo's ZMQ publishers would bind every interface")
    assert (VENV / "bin" / "python").exists(), "`make test` makes .venv-trial (requirements-trial.txt)"
    done = subprocess.run(
        [*PRIVATE_NETWORK, sys.executable, "-m", "tests.tools.drain_probe"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    answers = result["answers"]
    # Both long answers, one of them on the stopped worker, streamed every token: none was cut.
    for key in ("first", "second"):
        assert answers[key] == answers[key] | {"tokens": result["answerTokens"], "finishReason": "length"}, result
    assert answers["after"]["finishReason"] == "length" and answers["after"]["tokens"] == 50, result
    # The stopped worker outlived the SIGTERM until its answer ended, exited cleanly, and left the other serving.
    latest_answer = max(answers["first"]["endedAfter"], answers["second"]["endedAfter"])
    assert result["stoppedWorkerExitedAfter"] >= latest_answer - 1 and result["stoppedWorkerExitCode"] == 0, result
    assert result["otherWorkerRunning"], result


GRACE_PROBE = """
import asyncio, json, os, time
os.environ["DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS"] = "2"
from dynamo.common.utils.graceful_shutdown import graceful_shutdown_with_discovery
seen = {}
class Endpoint:
    async def unregister_endpoint_instance(self):
        seen["unregistered"] = time.monotonic()
class Runtime:
    def shutdown(self):
        seen["runtime stopped"] = time.monotonic()
async def main():
    event, start = asyncio.Event(), time.monotonic()
    async def generation():  # what handler_base.py's monitor does: abort when the event is set
        await event.wait()
        seen["generations aborted"] = time.monotonic()
    running = asyncio.create_task(generation())
    await graceful_shutdown_with_discovery(Runtime(), [Endpoint()], shutdown_event=event)
    await running
    print(json.dumps({name: round(at - start, 2) for name, at in seen.items()}))
asyncio.run(main())
"""


@pytest.mark.end_to_end
def test_a_trtllm_workers_generations_run_for_its_grace_period_after_sigterm():
    """Dynamo 1.6.1's own shutdown function: out of discovery at once, generations aborted only after the
    grace period the environment sets (2 s here), then the runtime stopped."""
    done = subprocess.run(
        [str(VENV / "bin" / "python"), "-c", GRACE_PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["unregistered"] < 0.5 <= 2.0 <= seen["generations aborted"] < 3.0, seen
    assert seen["runtime stopped"] >= seen["generations aborted"], seen


def test_an_autoscaled_workers_pod_has_time_for_its_longest_answer(catalog):
    built = build_stack(namespace_config(example_entries("autoscaling")), catalog, with_hf_token=False)
    (chat,) = [serving for serving in built.serving if serving.deployment.name == "chat"]
    drain = chat.deployment.drain
    # b200-agg-low-latency at 4 GPUs: TensorRT-LLM's default max_seq_len is the model's 131,072-token context,
    # at AISimulate's 2.817 ms per output token (configs/estimates.yaml): 370 s, beyond the operator's 60 s.
    assert (drain.longest_tokens, drain.tpot_ms) == (131072, 2.817)
    assert drain.request_seconds == -(-(drain.ttft_ms + 131072 * 2.817) // 1000) == 370
    assert drain.grace_seconds == 370 + PREFILL_DRAIN_SECONDS + STOP_MARGIN_SECONDS == 430
    worker = components_by_name(chat.graph)["TrtllmWorker"]
    assert worker.pod["terminationGracePeriodSeconds"] == 430
    assert {"name": GRACE_PERIOD_VARIABLE, "value": "370"} in worker.main["env"]  # its generations run that long
    # Only the workers the Planner stops: the frontend and the Planner keep the operator's default.
    assert "terminationGracePeriodSeconds" not in components_by_name(chat.graph)["Frontend"].pod
