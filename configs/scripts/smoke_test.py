"""Smoke test of a gpt-oss deployment: one chat completion through its Dynamo frontend.

Run by the smoke-test Job (core/render/smoke_test.py) once Pulumi has seen the graph Ready. It waits
until the frontend lists the model, sends one chat completion and checks that the answer has
content. On failure it writes why to the container's termination message, which
pulumi-kubernetes puts in the error of the failed `pulumi up`, and exits 1.

Environment: ENDPOINT (host:port of the frontend), MODEL, MAX_TOKENS, DEADLINE_SECONDS; SIMULATED=1
for a simulated engine (Dynamo's mocker), whose answer is token ids that may decode to no text: its
completion tokens count instead. Standard library only: the Job's image is a plain Python image.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request

TERMINATION_LOG = os.environ.get("TERMINATION_LOG", "/dev/termination-log")
PROMPT = "Reply with one short sentence confirming that you are ready."


def main() -> int:
    """Every request is bounded by the time left, so the script always ends, with its reason,
    by DEADLINE_SECONDS: before the Job's deadline or Pulumi's await could cut it short."""
    base = f"http://{os.environ['ENDPOINT']}"
    model = os.environ["MODEL"]
    deadline = time.monotonic() + float(os.environ["DEADLINE_SECONDS"])
    last_problem = "no answer yet"
    while (left := deadline - time.monotonic()) > 0:
        try:
            listed = [entry.get("id") for entry in _get(f"{base}/v1/models", min(30.0, left)).get("data", [])]
            if model not in listed:
                last_problem = f"{base}/v1/models lists {listed}, not {model}"
            else:
                return _check_answer(base, model, deadline)
        except (OSError, ValueError) as error:  # connection refused, HTTP errors, timeouts, bad JSON
            last_problem = f"{base}: {error}"
        print(f"waiting: {last_problem}", flush=True)
        time.sleep(min(float(os.environ.get("RETRY_SECONDS", "10")), max(deadline - time.monotonic(), 0)))
    return _fail(f"gave up after {os.environ['DEADLINE_SECONDS']} s: {last_problem}")


def _check_answer(base: str, model: str, deadline: float) -> int:
    request = {
        "model": model,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": int(os.environ["MAX_TOKENS"]),
    }
    started = time.monotonic()
    try:
        answer = _post(f"{base}/v1/chat/completions", request, max(deadline - started, 1.0))
    except (OSError, ValueError) as error:
        return _fail(f"POST {base}/v1/chat/completions failed: {error}")
    seconds = time.monotonic() - started
    choices = answer.get("choices") or []
    message = choices[0].get("message", {}) if choices else {}
    content = (message.get("content") or "").strip()
    usage = answer.get("usage") or {}
    tokens = usage.get("completion_tokens") or 0
    if not content and not (os.environ.get("SIMULATED") == "1" and tokens > 0):
        finish = choices[0].get("finish_reason") if choices else None
        return _fail(f"the answer has no content (finish_reason {finish!r}): {json.dumps(answer)[:1500]}")
    print(
        f"ok: {model} answered in {seconds:.1f} s ({tokens or '?'} tokens): {content[:200] or '(no text: simulated)'}"
    )
    return 0


def _get(url: str, timeout: float) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.load(response)


def _post(url: str, body: dict, timeout: float) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)


def _fail(reason: str) -> int:
    print(f"smoke test failed: {reason}", file=sys.stderr, flush=True)
    try:
        with open(TERMINATION_LOG, "w") as log:
            log.write(f"smoke test failed: {reason}"[:4000])
    except OSError:
        pass  # outside Kubernetes
    return 1


if __name__ == "__main__":
    sys.exit(main())
