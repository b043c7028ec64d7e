"""How failures surface from the installed litellm and openai, and how they are classified.

Each failure is produced for real, through ``complete`` / ``acomplete`` and litellm: a
refused connection against a local socket that is bound but not listening, a name that
does not resolve (``socket.getaddrinfo`` answers as a resolver would, so no query leaves
the machine), 401, 403, 404, 429, 5xx, timeouts and reset connections from the fake
OpenAI-compatible server. Dead endpoints fail after one attempt with a reason that says
what happened and where; transient failures are retried as before.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import openai
import pytest

from pytest_summarybench.llm import ModelCallError, RetryPolicy, acomplete, complete
from pytest_summarybench.llm.providers import litellm
from pytest_summarybench.llm.retry import classify
from pytest_summarybench.schemas import ModelConfig
from tests.fakes.openai_server import FakeOpenAIServer, faults_from

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
MESSAGES = [{"role": "user", "content": "Summarize: def f(): pass"}]
SENTINEL = "sk-sentinel-" + "0123456789abcdef"
UNRESOLVABLE = "llm.summarybench.invalid"


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(var, SENTINEL)
    litellm()  # imported before any call is timed (seconds, the first time)
    return SENTINEL



@pytest.fixture
def no_such_host(monkeypatch: pytest.MonkeyPatch) -> str:
    """``UNRESOLVABLE`` does not resolve (as a resolver answers an unknown name); other
    names resolve as usual."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in (UNRESOLVABLE, UNRESOLVABLE.encode()):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return UNRESOLVABLE


@pytest.fixture
def retried(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The backoff delays of the retries the model layer decided on (none: it gave up at
    once). "At once" is a count, not a duration: a bound of 5 s on the call failed on a
    loaded machine, where litellm's first call of a provider alone took longer."""
    from pytest_summarybench.llm import client

    delays: list[float] = []
    decide = client._Call.after_failure

    def recording(self: Any, exc: BaseException) -> float:
        delay = decide(self, exc)  # raises when giving up
        delays.append(delay)
        return delay

    monkeypatch.setattr(client._Call, "after_failure", recording)
    return delays


def call(model: ModelConfig, mode: str, policy: RetryPolicy = FAST) -> Any:
    if mode == "sync":
        return complete(model, MESSAGES, retry_policy=policy, timeout=5)
    return asyncio.run(acomplete(model, MESSAGES, retry_policy=policy, timeout=5))


MODES = ["sync", "async"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama", "local"])
def test_a_refused_connection_fails_at_once_naming_the_endpoint(
        key: str, refusing_port: int, mode: str, provider: str, retried: list[float]) -> None:
    base = f"http://127.0.0.1:{refusing_port}" + ("/v1" if provider in ("openai", "local")
                                                  else "")
    model = ModelConfig(provider=provider, model_name="some-model", api_endpoint=base)
    with pytest.raises(ModelCallError) as info:
        call(model, mode, RetryPolicy())  # the default policy: 31 s of backoff over 6 tries
    assert retried == []  # at once: no backoff, no second attempt
    assert str(info.value) == f"{model.id}: connection refused at {base}"  # no "gave up"
    assert not info.value.retryable and info.value.status is None


@pytest.mark.parametrize("mode", MODES)
def test_a_name_that_does_not_resolve_fails_at_once(key: str, no_such_host: str,
                                                    mode: str, retried: list[float]) -> None:
    model = ModelConfig(provider="openai", model_name="gpt-4o",
                        api_endpoint=f"http://{no_such_host}/v1")
    with pytest.raises(ModelCallError) as info:
        call(model, mode, RetryPolicy())
    assert retried == []
    assert str(info.value) == (f"openai/gpt-4o: name resolution failed for host "
                               f"{no_such_host} (Name or service not known)")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("fault", "expected"), [
    ("401", "HTTP 401 unauthorized at {base}: invalid api key"),
    ("403", "HTTP 403 forbidden at {base}: this project does not have access to the model"),
    ("404", "HTTP 404 not found at {base} (unknown model or wrong endpoint): The model does "
            "not exist or you do not have access to it."),
])
def test_rejected_keys_and_unknown_models_are_not_retried(
        key: str, fake_server: Any, mode: str, fault: str, expected: str) -> None:
    server: FakeOpenAIServer = fake_server(faults=lambda n, body: fault)
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    with pytest.raises(ModelCallError) as info:
        call(model, mode)
    assert info.value.reason == expected.format(base=server.base_url)
    assert info.value.status == int(fault) and not info.value.retryable
    assert server.chat_requests == 1
    assert key not in str(info.value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", ["429", "500", "503", "timeout", "reset"])
def test_transient_failures_are_retried(key: str, fake_server: Any, mode: str,
                                        fault: str) -> None:
    server: FakeOpenAIServer = fake_server(faults=faults_from([fault, fault]),
                                           fault_retry_after_s=0.05)
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    policy = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
    timeout = 0.5 if fault == "timeout" else 5
    if mode == "sync":
        done = complete(model, MESSAGES, retry_policy=policy, timeout=timeout)
    else:
        done = asyncio.run(acomplete(model, MESSAGES, retry_policy=policy, timeout=timeout))
    assert done.attempts == 3 and server.faults_served[fault] == 2


def test_a_reset_connection_says_so_when_it_gives_up(key: str, fake_server: Any) -> None:
    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "reset")
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    with pytest.raises(ModelCallError) as info:
        complete(model, MESSAGES, retry_policy=RetryPolicy(max_attempts=2, base_delay_s=0.01))
    assert info.value.reason.startswith(f"connection reset by {server.base_url} "
                                        "(gave up after 2 attempts in ")
    assert info.value.reason.endswith(" s)") and info.value.retryable


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("script", [["timeout"], ["reset"], ["timeout", "reset", "drip"]],
                         ids=["never-answers", "resets", "mixed"])
def test_attempts_without_an_answer_are_retried_twice_at_most(
        key: str, fake_server: Any, mode: str, script: list[str]) -> None:
    """A provider that accepts the connection and never answers (or drops it, or drips
    its answer): the third attempt without an answer ends the call, whatever the mix, and
    the reason says how many attempts and how long (before: six attempts, 6.5 minutes a
    call with the default timeoutS of 60 s). A 429 or a 500 is still retried as before
    (``test_transient_failures_are_retried``, ``test_a_server_error_is_still_retried``)."""
    server: FakeOpenAIServer = fake_server(
        faults=lambda n, body: script[(n - 1) % len(script)])
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    with pytest.raises(ModelCallError) as info:
        if mode == "sync":
            complete(model, MESSAGES, retry_policy=FAST, timeout=0.5)
        else:
            asyncio.run(acomplete(model, MESSAGES, retry_policy=FAST, timeout=0.5))
    assert server.chat_requests == 3, info.value.reason
    assert " (gave up after 3 attempts in " in info.value.reason, info.value.reason
    assert info.value.retryable


def _status_error(cls: type[openai.APIStatusError], status: int, url: str,
                  message: str) -> openai.APIStatusError:
    request = httpx.Request("POST", url)
    response = httpx.Response(status, request=request, json={"error": {"message": message}})
    return cls(message, response=response, body=None)


def test_reasons_carry_no_key_material(key: str) -> None:
    """A provider that echoes the key in its error, and a request URL with the key in its
    query (as some providers take it): neither reaches the reason."""
    url = f"https://llm.example.com/v1/chat/completions?key={key}"
    echoed = _status_error(openai.AuthenticationError, 401, url,
                           f"Incorrect API key provided: {key}")
    failure = classify(echoed)
    assert failure.dead_endpoint and not failure.retryable
    assert failure.reason == ("HTTP 401 unauthorized at https://llm.example.com: "
                              "Incorrect API key provided: ***")
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as inner:
            raise httpx.ConnectError("refused", request=httpx.Request("POST", url)) from inner
    except httpx.ConnectError as exc:
        refused = classify(exc)
    assert refused.reason == "connection refused at https://llm.example.com"
    assert key not in refused.reason + failure.reason


def test_litellm_reports_a_refused_connection_as_http_500(refusing_port: int,
                                                         key: str) -> None:
    """Why the chain is read before the status: litellm's exception for a refused
    connection says 500 "Connection error." (this is what gave "HTTP 500 ... Connection
    error (gave up after 6 attempts)" before)."""
    with pytest.raises(Exception) as info:
        litellm().completion(model="openai/gpt-4o", messages=MESSAGES, max_retries=0,
                             api_base=f"http://127.0.0.1:{refusing_port}/v1", api_key=key)
    assert getattr(info.value, "status_code", None) == 500
    assert "Connection error" in str(info.value)
    assert classify(info.value).dead_endpoint
