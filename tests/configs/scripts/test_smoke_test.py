"""configs/scripts/smoke_test.py, run here against a local stand-in for the Dynamo frontend: it
passes on an answer with content and fails, saying why, on anything else."""

from __future__ import annotations

import json
import subprocess
import sys

from core.inputs.catalog import CONFIG_DIR
from tests.support import JsonHandler, serving

SCRIPT = CONFIG_DIR / "scripts" / "smoke_test.py"
MODEL = "openai/gpt-oss-120b"


class _Frontend(JsonHandler):
    """Answers like Dynamo's OpenAI-compatible frontend, as the test tells it to, and keeps the
    requests it got for the test to check."""

    models: list[str] = [MODEL]
    answer: dict = {}
    requests: list[dict] = []

    def do_GET(self):
        self.reply({"object": "list", "data": [{"id": model, "object": "model"} for model in self.models]})

    def do_POST(self):
        self.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.reply(self.answer)


def run_script(tmp_path, models, answer, deadline="5", requests=None):
    handler = type(
        "Frontend", (_Frontend,), {"models": models, "answer": answer, "requests": [] if requests is None else requests}
    )
    termination_log = tmp_path / "termination-log"
    with serving(handler) as port:
        env = {
            "ENDPOINT": f"127.0.0.1:{port}",
            "MODEL": MODEL,
            "MAX_TOKENS": "64",
            "DEADLINE_SECONDS": deadline,
            "RETRY_SECONDS": "0.2",
            "TERMINATION_LOG": str(termination_log),
        }
        done = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    return done, termination_log.read_text() if termination_log.exists() else ""


def completion(content, finish="stop"):
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"completion_tokens": 12},
    }


def test_script_passes_on_an_answer_with_content(tmp_path):
    requests = []
    done, termination = run_script(tmp_path, [MODEL], completion("I am ready."), requests=requests)
    assert done.returncode == 0, done.stderr
    (request,) = requests
    assert request["model"] == MODEL and request["max_tokens"] == 64
    assert request["messages"][0]["role"] == "user"
    assert done.stdout.startswith(f"ok: {MODEL} answered in ") and "I am ready." in done.stdout
    assert termination == ""


def test_script_fails_on_an_empty_answer_and_says_why(tmp_path):
    done, termination = run_script(tmp_path, [MODEL], completion("", finish="length"))
    assert done.returncode == 1
    assert termination.startswith("smoke test failed: the answer has no content (finish_reason 'length')")


def test_script_fails_when_the_model_never_appears(tmp_path):
    done, termination = run_script(tmp_path, ["some/other-model"], completion("hi"), deadline="1")
    assert done.returncode == 1
    assert "gave up after 1 s" in termination and "not openai/gpt-oss-120b" in termination


def test_script_fails_when_the_frontend_is_unreachable(tmp_path):
    env = {
        "ENDPOINT": "127.0.0.1:9",  # discard port: nothing listens
        "MODEL": MODEL,
        "MAX_TOKENS": "64",
        "DEADLINE_SECONDS": "1",
        "RETRY_SECONDS": "0.2",
        "TERMINATION_LOG": str(tmp_path / "log"),
    }
    done = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "gave up after 1 s: http://127.0.0.1:9:" in (tmp_path / "log").read_text()


def run_simulated(tmp_path, answer, simulated: bool):
    """The script as the Job of a simulated engine's graph (SIMULATED=1) runs it, or as a real engine's."""
    handler = type("Frontend", (_Frontend,), {"models": [MODEL], "answer": answer, "requests": []})
    with serving(handler) as port:
        env = {
            "ENDPOINT": f"127.0.0.1:{port}",
            "MODEL": MODEL,
            "MAX_TOKENS": "64",
            "DEADLINE_SECONDS": "5",
            "RETRY_SECONDS": "0.2",
            "TERMINATION_LOG": str(tmp_path / "termination-log"),
        } | ({"SIMULATED": "1"} if simulated else {})
        return subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)


def test_a_simulated_engine_may_answer_tokens_without_text_a_real_one_may_not(tmp_path):
    """Dynamo's mocker answers token ids, which may decode to nothing: its completion tokens count instead."""
    tokens_only = completion(None, finish="length")  # 12 completion tokens, content null
    assert run_simulated(tmp_path, tokens_only, simulated=True).returncode == 0
    real = run_simulated(tmp_path, tokens_only, simulated=False)
    assert real.returncode == 1 and "the answer has no content" in real.stderr
    nothing = completion(None, finish="length") | {"usage": {"completion_tokens": 0}}
    assert run_simulated(tmp_path, nothing, simulated=True).returncode == 1  # no tokens: no answer
