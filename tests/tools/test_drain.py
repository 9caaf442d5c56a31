"""Scale-down drops no request: a Dynamo 1.6.1 worker sent SIGTERM (what the kubelet sends when the Planner
removes it) finishes the answer it is streaming and only then exits, while the router sends new requests
to the other worker; and the pod of an autoscaled worker gets the time its longest answer needs
(core/resolve/drain.py), where the operator's default 60 s would cut it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpt_oss_infra.core.dynamo_graph import components_by_name
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.resolve.drain import CLEANUP_SECONDS, DISCOVERY_GRACE_SECONDS
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
    # The stopped worker outlived the SIGTERM by the answer it held (more than the release's 5 s grace),
    # exited cleanly, and left the other worker serving.
    held = result["stoppedWorkerExitedAfter"] - result["sigtermAfter"]
    assert held > DISCOVERY_GRACE_SECONDS and result["stoppedWorkerExitCode"] == 0, result
    assert result["otherWorkerRunning"], result


def test_an_autoscaled_workers_pod_has_time_for_its_longest_answer(catalog):
    built = build_stack(namespace_config(example_entries("autoscaling")), catalog, with_hf_token=False)
    (chat,) = [serving for serving in built.serving if serving.deployment.name == "chat"]
    drain = chat.deployment.drain
    # b200-agg-low-latency at 4 GPUs: TensorRT-LLM's default max_seq_len is the model's 131,072-token context,
    # at AIConfigurator's 2.878 ms per output token (configs/estimates.yaml): 378 s, beyond the operator's 60 s.
    assert (drain.longest_tokens, drain.tpot_ms) == (131072, 2.878)
    request_seconds = -(-(drain.ttft_ms + 131072 * 2.878) // 1000)
    assert drain.grace_seconds == DISCOVERY_GRACE_SECONDS + request_seconds + CLEANUP_SECONDS == 413
    worker = components_by_name(chat.graph)["TrtllmWorker"]
    assert worker.pod["terminationGracePeriodSeconds"] == 413
    # Only the workers the Planner stops: the frontend and the Planner keep the operator's default.
    assert "terminationGracePeriodSeconds" not in components_by_name(chat.graph)["Frontend"].pod
