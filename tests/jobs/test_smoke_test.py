"""jobs/smoke_test.py, run here against a local stand-in for the Dynamo frontend: it
passes on an answer with content and fails, saying why, on anything else."""

from __future__ import annotations

import json
import subprocess
import sys

from gpt_oss_infra.core.paths import JOB_SCRIPTS_DIR
from tests.support import JsonHandler, serving

SCRIPT = JOB_SCRIPTS_DIR / "smoke_test.py"
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
    assert done.stdout.startswith(f"ok: {MODEL} answered through http://127.0.0.1:") and "I am ready." in done.stdout
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


# --- through the gateway: a stand-in for Envoy (API keys) and one for the Kubernetes API (the NLB's name)

KEY = "test-key-1"


class _Gateway(_Frontend):
    """Answers like the gateway: 401 without the API key, else like the frontend (`open`: answers
    without a key too, a broken SecurityPolicy); the first `unready` requests get 503, as from an NLB
    whose targets are still registering. Keeps each request's Host and Authorization headers."""

    open = False
    unready = 0
    busy_answers = 0  # then the first chat completions with the key get 503 (targets settling)
    seen: list[tuple[str, str | None]] = []

    def _admitted(self) -> bool:
        self.seen.append((self.headers["Host"], self.headers.get("Authorization")))
        if len(self.seen) <= self.unready:
            self.send_error(503)
            return False
        if not self.open and self.headers.get("Authorization") != f"Bearer {KEY}":
            self.send_error(401)
            return False
        return True

    def do_GET(self):
        if self._admitted():
            super().do_GET()

    def do_POST(self):
        if not self._admitted():
            return
        if self.busy_answers > 0:
            type(self).busy_answers -= 1
            self.send_error(503)
            return
        super().do_POST()


def key_file(tmp_path, key):
    path = tmp_path / f"api-key-{key}"
    path.write_text(key + "\n")  # as mounted from the Secret; a trailing newline is not part of the key
    return path


def gateway_env(tmp_path, frontend_port, **gateway):
    return {
        "ENDPOINT": f"127.0.0.1:{frontend_port}",
        "MODEL": MODEL,
        "MAX_TOKENS": "64",
        "DEADLINE_SECONDS": "5",
        "GATEWAY_DEADLINE_SECONDS": "5",
        "GATEWAY_SCHEME": "http",
        "RETRY_SECONDS": "0.2",
        "API_KEY_FILE": str(key_file(tmp_path, KEY)),
        "TERMINATION_LOG": str(tmp_path / "termination-log"),
    } | gateway


def run_with_gateway(tmp_path, gateway_handler, **gateway):
    """The script with a frontend and a gateway in front of it, on its in-cluster path (GATEWAY_ADDRESS)."""
    frontend = type("Frontend", (_Frontend,), {"models": [MODEL], "answer": completion("ready"), "requests": []})
    with serving(frontend) as frontend_port, serving(gateway_handler) as gateway_port:
        env = gateway_env(tmp_path, frontend_port, GATEWAY_ADDRESS="127.0.0.1", GATEWAY_PORT=str(gateway_port))
        done = subprocess.run(
            [sys.executable, str(SCRIPT)], env=env | gateway, capture_output=True, text=True, timeout=60
        )
    log = tmp_path / "termination-log"
    return done, log.read_text() if log.exists() else ""


def gateway(**behaviour):
    return type(
        "Gateway",
        (_Gateway,),
        {"models": [MODEL], "answer": completion("ready"), "requests": [], "seen": []} | behaviour,
    )


def test_through_the_gateway_401_without_a_key_then_an_answer_with_it(tmp_path):
    handler = gateway(unready=2)  # a new NLB: 503 before its targets are healthy
    done, termination = run_with_gateway(tmp_path, handler, GATEWAY_HOST="api.example.test")
    assert done.returncode == 0, done.stderr
    assert termination == ""
    # waited through the 503s, asked without a key (401), then with the key, always as the name clients use
    assert [auth for _, auth in handler.seen] == [None, None, None, f"Bearer {KEY}"]
    assert {host for host, _ in handler.seen} == {"api.example.test"}
    assert "refused a request without an API key (401) and answered with one" in done.stdout


def test_a_busy_answer_with_the_key_is_tried_again_until_the_gateway_answers(tmp_path):
    handler = gateway(busy_answers=2)
    done, _ = run_with_gateway(tmp_path, handler)
    assert done.returncode == 0, done.stderr
    # each try: without a key (401), then the chat completion with it; the first two answered 503
    assert [auth for _, auth in handler.seen] == [None, f"Bearer {KEY}"] * 3
    assert done.stdout.count("waiting: the gateway: HTTP 503") == 2


def test_a_gateway_that_answers_without_a_key_fails_the_smoke_test(tmp_path):
    done, termination = run_with_gateway(tmp_path, gateway(open=True))
    assert done.returncode == 1
    assert "answered 200 to a request without an API key, not 401" in termination


def test_a_gateway_that_refuses_the_key_fails_the_smoke_test(tmp_path):
    done, termination = run_with_gateway(tmp_path, gateway(), API_KEY_FILE=str(key_file(tmp_path, "not-the-key")))
    assert done.returncode == 1
    assert termination.startswith("smoke test failed: through the gateway: POST http://127.0.0.1:")
    assert "HTTP 401" in termination


def test_a_gateway_that_never_comes_up_fails_at_its_deadline(tmp_path):
    done, termination = run_with_gateway(tmp_path, gateway(unready=10**6), GATEWAY_DEADLINE_SECONDS="1")
    assert done.returncode == 1
    assert "the gateway: gave up after 1 s" in termination and "answered 503" in termination


class _KubernetesApi(JsonHandler):
    """The Service read the Job's Role allows: no NLB address at first, then the NLB's DNS name."""

    address = ""
    reads: list[tuple[str, str | None]] = []

    def do_GET(self):
        self.reads.append((self.path, self.headers.get("Authorization")))
        ingress = [{"hostname": self.address}] if len(self.reads) > 1 else []
        self.reply({"kind": "Service", "status": {"loadBalancer": {"ingress": ingress}}})


def test_through_the_nlb_read_from_the_service_status_with_tls_for_the_clients_name(tmp_path):
    """The NLB path: its DNS name read from the Envoy Service's status with the pod's token, then HTTPS
    to it with the name clients use as TLS server name and certificate name (a certificate for that
    name alone, trusted here through SSL_CERT_FILE)."""
    name = "api.example.test"
    key_file, cert_file = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            f"/CN={name}",
            "-addext",
            f"subjectAltName=DNS:{name}",
            "-keyout",
            str(key_file),
            "-out",
            str(cert_file),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text("pod-token\n")
    (account / "ca.crt").write_text(cert_file.read_text())
    api = type("Api", (_KubernetesApi,), {"address": "127.0.0.1", "reads": []})
    handler = gateway()
    frontend = type("Frontend", (_Frontend,), {"models": [MODEL], "answer": completion("ready"), "requests": []})
    with (
        serving(frontend) as frontend_port,
        serving(api) as api_port,
        serving(handler, tls=(cert_file, key_file)) as port,
    ):
        env = gateway_env(
            tmp_path,
            frontend_port,
            GATEWAY_SERVICE="envoy-gateway-system/gpt-oss-dev",
            GATEWAY_PORT=str(port),
            GATEWAY_SCHEME="https",
            GATEWAY_HOST=name,
            KUBERNETES_API=f"http://127.0.0.1:{api_port}",
            SERVICE_ACCOUNT_DIR=str(account),
            SSL_CERT_FILE=str(cert_file),
        )
        done = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert api.reads[0] == ("/api/v1/namespaces/envoy-gateway-system/services/gpt-oss-dev", "Bearer pod-token")
    assert len(api.reads) == 2  # no address at first: read again
    assert [auth for _, auth in handler.seen] == [None, f"Bearer {KEY}"]
    assert f"ok: the gateway at https://{name}:{port} refused" in done.stdout
