"""Smoke test of a gpt-oss deployment: one chat completion through its Dynamo frontend, then, when
it has a gateway, through the gateway as a client calls it.

Run by the smoke-test Job (core/render/smoke_test_job.py) once Pulumi has seen the graph Ready. It waits
until the frontend lists the model, sends one chat completion and checks that the answer has
content. With a gateway, it then checks that a request without an API key gets 401 and that one with
the key gets an answer. On failure it writes why to the container's termination message, which
pulumi-kubernetes puts in the error of the failed `pulumi up`, and exits 1.

Environment: ENDPOINT (host:port of the frontend), MODEL, MAX_TOKENS, DEADLINE_SECONDS; SIMULATED=1
for a simulated engine (Dynamo's mocker), whose answer is token ids that may decode to no text: its
completion tokens count instead. The gateway: GATEWAY_SERVICE (namespace/name of the Service whose
status holds the NLB's DNS name, read with the pod's token) or GATEWAY_ADDRESS (a host name),
GATEWAY_PORT, GATEWAY_SCHEME, GATEWAY_HOST (the name clients use: Host header and TLS server name),
GATEWAY_DEADLINE_SECONDS, API_KEY_FILE (the client's key, from the API-key Secret), SERVICE_ACCOUNT_DIR
(the token and CA to read the Service with). Standard library only: the Job's image is a plain Python image.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import sys
import time
import urllib.parse
import urllib.request

TERMINATION_LOG = os.environ.get("TERMINATION_LOG", "/dev/termination-log")
PROMPT = "Reply with one short sentence confirming that you are ready."
KUBERNETES_API = os.environ.get("KUBERNETES_API", "https://kubernetes.default.svc")
# Answers worth waiting through while a new NLB comes up: its targets registering, the route not programmed
# yet, the rate limit of an earlier attempt.
RETRIED_STATUSES = {404, 429, 500, 502, 503, 504}


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
                problem = _answer_problem(base, model, deadline, {})
                if problem:
                    return _fail(problem)
                return _check_gateway(model) if _gateway_given() else 0
        except (OSError, ValueError) as error:  # connection refused, HTTP errors, timeouts, bad JSON
            last_problem = f"{base}: {error}"
        _wait(last_problem, deadline)
    return _fail(f"gave up after {os.environ['DEADLINE_SECONDS']} s: {last_problem}")


def _gateway_given() -> bool:
    return "GATEWAY_SERVICE" in os.environ or "GATEWAY_ADDRESS" in os.environ


def _check_gateway(model: str) -> int:
    """The way clients come in: 401 without a key, then an answer with one. Connection failures,
    unresolved names and the answers in RETRIED_STATUSES are retried until the gateway's deadline."""
    deadline = time.monotonic() + float(os.environ["GATEWAY_DEADLINE_SECONDS"])
    # The name clients use, where one is set: the route matches it (the URL may name the NLB's port).
    host = {"Host": os.environ["GATEWAY_HOST"]} if "GATEWAY_HOST" in os.environ else {}
    last_problem = "no answer yet"
    while (left := deadline - time.monotonic()) > 0:
        try:
            base, connect_to = _gateway_base(min(30.0, left))
            status = _status(f"{base}/v1/models", host, connect_to, min(30.0, left))
            if status == 401:
                key = host | {"Authorization": f"Bearer {_read(os.environ['API_KEY_FILE'])}"}
                problem = _answer_problem(base, model, deadline, key, connect_to, retried=RETRIED_STATUSES)
                if problem:
                    return _fail(f"through the gateway: {problem}")
                print(f"ok: the gateway at {base} refused a request without an API key (401) and answered with one")
                return 0
            if status not in RETRIED_STATUSES:  # an answer without a key above all
                return _fail(f"the gateway at {base} answered {status} to a request without an API key, not 401")
            last_problem = f"{base}/v1/models answered {status}"
        except (OSError, ValueError) as error:  # not resolvable yet, refused, timeouts, TLS, bad JSON
            last_problem = f"the gateway: {error}"
        _wait(last_problem, deadline)
    return _fail(f"the gateway: gave up after {os.environ['GATEWAY_DEADLINE_SECONDS']} s: {last_problem}")


def _gateway_base(timeout: float) -> tuple[str, str]:
    """The URL clients use (their host name, where one is set) and the address to connect to."""
    address = os.environ.get("GATEWAY_ADDRESS") or _load_balancer_address(os.environ["GATEWAY_SERVICE"], timeout)
    host = os.environ.get("GATEWAY_HOST") or address
    return f"{os.environ['GATEWAY_SCHEME']}://{host}:{os.environ['GATEWAY_PORT']}", address


def _load_balancer_address(service: str, timeout: float) -> str:
    """The NLB's DNS name from the Service's status, read with the pod's own token."""
    namespace, name = service.split("/")
    account = os.environ["SERVICE_ACCOUNT_DIR"]
    request = urllib.request.Request(
        f"{KUBERNETES_API}/api/v1/namespaces/{namespace}/services/{name}",
        headers={"Authorization": f"Bearer {_read(f'{account}/token')}"},
    )
    context = ssl.create_default_context(cafile=f"{account}/ca.crt")
    with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
        ingress = (json.load(response).get("status", {}).get("loadBalancer", {}).get("ingress")) or []
    if not ingress:
        raise OSError(f"Service {service} has no load balancer address yet")
    return ingress[0].get("hostname") or ingress[0]["ip"]


def _answer_problem(
    base: str,
    model: str,
    deadline: float,
    headers: dict[str, str],
    connect_to: str | None = None,
    retried: frozenset[int] | set[int] = frozenset(),
) -> str | None:
    """Why one chat completion's answer is not good, or None (and the answer printed). An answer
    with a status in `retried` is raised (HttpStatus) for the caller to try again."""
    request = {
        "model": model,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": int(os.environ["MAX_TOKENS"]),
    }
    started = time.monotonic()
    try:
        answer = _post(f"{base}/v1/chat/completions", request, max(deadline - started, 1.0), headers, connect_to)
    except HttpStatus as error:
        if error.status in retried:
            raise
        return f"POST {base}/v1/chat/completions failed: {error}"
    except (OSError, ValueError) as error:
        return f"POST {base}/v1/chat/completions failed: {error}"
    seconds = time.monotonic() - started
    choices = answer.get("choices") or []
    message = choices[0].get("message", {}) if choices else {}
    content = (message.get("content") or "").strip()
    usage = answer.get("usage") or {}
    tokens = usage.get("completion_tokens") or 0
    if not content and not (os.environ.get("SIMULATED") == "1" and tokens > 0):
        finish = choices[0].get("finish_reason") if choices else None
        return f"the answer has no content (finish_reason {finish!r}): {json.dumps(answer)[:1500]}"
    print(
        f"ok: {model} answered through {base} in {seconds:.1f} s ({tokens or '?'} tokens): "
        f"{content[:200] or '(no text: simulated)'}"
    )
    return None


def _wait(problem: str, deadline: float) -> None:
    print(f"waiting: {problem}", flush=True)
    time.sleep(min(float(os.environ.get("RETRY_SECONDS", "10")), max(deadline - time.monotonic(), 0)))


def _get(url: str, timeout: float) -> dict:
    return _json(*_request("GET", url, timeout, {}, None))


def _post(url: str, body: dict, timeout: float, headers: dict[str, str], connect_to: str | None) -> dict:
    return _json(*_request("POST", url, timeout, headers, connect_to, json.dumps(body).encode()))


class HttpStatus(OSError):
    """An HTTP error answer: an OSError, retried like a refused connection where the caller retries."""

    def __init__(self, status: int, text: str):
        super().__init__(f"HTTP {status}: {text[:500]}")
        self.status = status


def _json(status: int, text: str) -> dict:
    if status >= 400:
        raise HttpStatus(status, text)
    return json.loads(text)


def _status(url: str, headers: dict[str, str], connect_to: str | None, timeout: float) -> int:
    return _request("GET", url, timeout, headers, connect_to)[0]


def _request(
    method: str, url: str, timeout: float, headers: dict[str, str], connect_to: str | None, body: bytes | None = None
) -> tuple[int, str]:
    """One request to `url`'s host (TLS server name and certificate check) over a connection to
    `connect_to` (the NLB, before DNS has the name clients use)."""
    parsed = urllib.parse.urlsplit(url)
    address = connect_to or parsed.hostname
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    if parsed.scheme == "https":
        connection = _TlsConnection(address, port, parsed.hostname, timeout)
    else:
        connection = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        connection.request(
            method,
            parsed.path,
            body=body,
            headers={"Host": parsed.netloc, "Content-Type": "application/json", **headers},
        )
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()


class _TlsConnection(http.client.HTTPSConnection):
    """HTTPS to one address, with the server name and certificate check of another (the name clients use)."""

    def __init__(self, address: str, port: int, server_name: str, timeout: float):
        super().__init__(address, port, timeout=timeout)
        self.server_name = server_name
        self.tls = ssl.create_default_context()

    def connect(self) -> None:
        self.sock = self.tls.wrap_socket(
            socket.create_connection((self.host, self.port), self.timeout), server_hostname=self.server_name
        )


def _read(path: str) -> str:
    with open(path) as file:
        return file.read().strip()


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
