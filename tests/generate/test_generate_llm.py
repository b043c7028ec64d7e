"""The shared model layer against a real local HTTP server: cache, retries, cost, errors."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_summarybench.llm import (
    Endpoints,
    ModelCallError,
    RetryPolicy,
    acomplete,
    call_cost,
    complete,
    litellm_model_name,
    redact,
    required_env_var,
    token_prices,
)
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.fakes.openai_server import Reply, faults_from

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
MESSAGES = [{"role": "system", "content": "Summarize."},
            {"role": "user", "content": "def add(a, b):\n    return a + b\n"}]


def model_for(server, name: str = "gpt-4o", **extra) -> ModelConfig:
    return ModelConfig(provider="openai", model_name=name, api_endpoint=server.base_url,
                       **extra)


def test_a_call_returns_text_tokens_cost_and_version(fake_server, sentinel_key) -> None:
    server = fake_server(respond=lambda body: Reply("Adds two numbers.", 120, 7,
                                                    "gpt-4o-2024-08-06"))
    done = complete(model_for(server), MESSAGES)
    assert done.text == "Adds two numbers."
    assert (done.input_tokens, done.output_tokens) == (120, 7)
    assert done.model_version == "gpt-4o-2024-08-06"
    assert done.cost == pytest.approx(120 * 2.5e-6 + 7 * 1e-5)
    assert done.latency_ms > 0 and not done.cached and done.attempts == 1
    assert server.successes == 1
    assert server.authorizations == {f"Bearer {sentinel_key}"}


def test_the_cache_answers_repeats_and_misses_on_any_change(fake_server, sentinel_key,
                                                            tmp_path) -> None:
    server = fake_server()
    store = Store(tmp_path / "s.sqlite")
    model = model_for(server)
    first = complete(model, MESSAGES, cache=store, cache_tag="p1")
    again = complete(model, MESSAGES, cache=store, cache_tag="p1")
    assert again.cached and again.text == first.text and again.cost == first.cost
    assert server.successes == 1
    complete(model, MESSAGES, cache=store, cache_tag="p2")                     # prompt version
    complete(model, MESSAGES, cache=store, cache_tag="p1", temperature=0.0)    # parameters
    complete(model, [*MESSAGES[:1], {"role": "user", "content": "x"}], cache=store,
             cache_tag="p1")                                                   # prompt text
    complete(model_for(server, "gpt-4o-mini"), MESSAGES, cache=store, cache_tag="p1")
    assert server.successes == 5
    # A new Store object on the same file sees the cache (it is persistent).
    assert complete(model, MESSAGES, cache=Store(tmp_path / "s.sqlite"), cache_tag="p1").cached


@pytest.mark.parametrize("fault", ["429", "500", "503"])
def test_transient_failures_are_retried(fake_server, sentinel_key, fault) -> None:
    server = fake_server(faults=faults_from([fault, fault]), fault_retry_after_s=0.05)
    done = complete(model_for(server), MESSAGES, retry_policy=FAST)
    assert done.attempts == 3 and done.text
    assert server.faults_served[fault] == 2 and server.successes == 1


@pytest.mark.parametrize("fault", ["malformed", "empty"])
def test_an_unreadable_200_is_asked_once_more_then_given_up(fake_server, sentinel_key,
                                                            fault) -> None:
    """A 200 that cannot be read is no server error: it is asked once more (a second
    answer may be whole), not retried with the server errors' budget."""
    server = fake_server(faults=faults_from([fault]), fault_retry_after_s=0.05)
    done = complete(model_for(server), MESSAGES, retry_policy=FAST)
    assert done.attempts == 2 and done.text
    assert server.faults_served[fault] == 1 and server.successes == 1
    again = fake_server(faults=faults_from([fault] * 5), fault_retry_after_s=0.05)
    with pytest.raises(ModelCallError, match="gave up after 2 attempts"):
        complete(model_for(again), MESSAGES, retry_policy=FAST)
    assert again.faults_served[fault] == 2 and again.successes == 0


def test_retry_after_is_honoured(fake_server, sentinel_key) -> None:
    server = fake_server(faults=faults_from(["429"]))   # Retry-After: 1, retry-after-ms: 1000
    started = time.monotonic()
    complete(model_for(server), MESSAGES, retry_policy=FAST)
    assert time.monotonic() - started >= 1.0
    assert server.statuses[429] == 1 and server.successes == 1


def test_timeouts_are_retried_with_a_per_call_timeout(fake_server, sentinel_key) -> None:
    server = fake_server(faults=faults_from(["timeout"]))
    started = time.monotonic()
    done = complete(model_for(server), MESSAGES, timeout=0.5, retry_policy=FAST)
    assert done.attempts == 2
    assert 0.5 <= time.monotonic() - started < 5


def test_giving_up_raises_one_line_and_caches_nothing(fake_server, sentinel_key,
                                                      tmp_path) -> None:
    server = fake_server(faults=lambda n, body: "500")
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(ModelCallError) as info:
        complete(model_for(server), MESSAGES, cache=store, retry_policy=FAST)
    message = str(info.value)
    assert "\n" not in message and message.startswith("openai/gpt-4o: HTTP 500")
    assert "gave up after 6 attempts" in message and info.value.retryable
    assert sentinel_key not in message
    assert server.chat_requests == 6
    server.faults = None
    assert not complete(model_for(server), MESSAGES, cache=store).cached


@pytest.mark.parametrize("fault", ["400", "401"])
def test_client_errors_are_not_retried(fake_server, sentinel_key, fault) -> None:
    server = fake_server(faults=lambda n, body: fault)
    with pytest.raises(ModelCallError) as info:
        complete(model_for(server), MESSAGES, retry_policy=FAST)
    assert str(info.value).startswith("openai/gpt-4o: ")
    assert not info.value.retryable and info.value.status == int(fault)
    assert server.chat_requests == 1


def test_missing_key_names_the_variable(monkeypatch, fake_server) -> None:
    """A loopback endpoint needs no key unless apiKeyEnv names one (docs/configuration.md);
    a named variable that is not set is one line naming it, and nothing is sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = fake_server()
    with pytest.raises(ModelCallError, match="OPENAI_API_KEY is not set"):
        complete(model_for(server, api_key_env="OPENAI_API_KEY"), MESSAGES)
    assert server.chat_requests == 0


def test_local_endpoint_needs_no_key(monkeypatch, fake_server) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = fake_server()
    model = ModelConfig(provider="local", model_name="qwen2.5-coder",
                        api_endpoint=server.base_url)
    done = complete(model, MESSAGES)
    assert done.text and done.cost is None           # unmapped: unknown, not $0
    with pytest.raises(ModelCallError, match="needs apiEndpoint"):
        complete(ModelConfig(provider="local", model_name="x"), MESSAGES)


def test_acomplete_and_threads(fake_server, sentinel_key, tmp_path) -> None:
    server = fake_server(latency_s=0.05)
    model = model_for(server)
    store = Store(tmp_path / "s.sqlite")

    async def many() -> list[str]:
        return [c.text for c in await asyncio.gather(*(
            acomplete(model, [{"role": "user", "content": f"a{i}"}], cache=store)
            for i in range(10)))]

    assert len(set(asyncio.run(many()))) == 10
    with ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(lambda i: complete(model, [{"role": "user",
                                                           "content": f"t{i}"}],
                                                 cache=store).text, range(16)))
    assert len(set(texts)) == 16 and server.successes == 26
    assert asyncio.run(many()) and server.successes == 26   # all cached now


def test_client_side_rate_limit_paces_requests(fake_server, sentinel_key) -> None:
    server = fake_server()
    model = model_for(server, requests_per_minute=600)       # one request per 100 ms
    session = Endpoints()  # the session's limiter, which the six calls share

    async def burst() -> None:
        await asyncio.gather(*(acomplete(model, [{"role": "user", "content": str(i)}],
                                         endpoints=session) for i in range(6)))

    started = time.monotonic()
    asyncio.run(burst())
    assert time.monotonic() - started >= 0.5


def test_names_keys_and_prices() -> None:
    assert litellm_model_name(ModelConfig.parse("google/gemini-2.0-flash")) == (
        "gemini/gemini-2.0-flash")
    assert litellm_model_name(ModelConfig.parse("ollama/llama3")) == "ollama_chat/llama3"
    assert litellm_model_name(ModelConfig.parse("openrouter/anthropic/claude-3.5-sonnet")) \
        == "openrouter/anthropic/claude-3.5-sonnet"
    assert required_env_var(ModelConfig.parse("anthropic/claude-sonnet-4-5")) == (
        "ANTHROPIC_API_KEY")
    assert required_env_var(ModelConfig.parse("google/gemini-2.5-pro")) == "GEMINI_API_KEY"
    assert required_env_var(ModelConfig.parse("openrouter/x/y")) == "OPENROUTER_API_KEY"
    assert required_env_var(ModelConfig.parse("ollama/llama3")) is None
    assert token_prices(ModelConfig.parse("openai/gpt-4o")) == (2.5e-6, 1e-5)
    assert token_prices(ModelConfig.parse("builtin/docstring")) == (0.0, 0.0)
    assert call_cost(ModelConfig.parse("ollama/llama3"), 100, 10) is None   # priced 0.0
    assert call_cost(ModelConfig.parse("openai/not-a-model-xyz"), 100, 10) is None
    override = ModelConfig(provider="openai", model_name="not-a-model-xyz",
                           input_cost_per_million=1.0, output_cost_per_million=2.0)
    assert call_cost(override, 1_000_000, 500_000) == pytest.approx(2.0)
    free = ModelConfig(provider="ollama", model_name="llama3", input_cost_per_million=0.0,
                       output_cost_per_million=0.0)
    assert call_cost(free, 100, 10) == 0.0


def test_redact(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-secret-value-123")
    text = redact("bad key ant-secret-value-123, Bearer abc.def sk-proj-AbCdEf123456 "
                  "api_key='xyz123'")
    assert "ant-secret" not in text and "abc.def" not in text and "AbCdEf" not in text
    assert "xyz123" not in text


def test_lazy_litellm_import_that_never_touches_the_network() -> None:
    code = """
import socket, sys
import pytest_summarybench.llm, pytest_summarybench.generate
print("litellm" in sys.modules, "tqdm" in sys.modules)
def refuse(*args, **kwargs):
    raise AssertionError(f"network access: {args[:1]}")
socket.getaddrinfo = refuse
socket.socket.connect = refuse
from pytest_summarybench.llm import token_prices
from pytest_summarybench.llm.providers import litellm
from pytest_summarybench.schemas import ModelConfig
litellm()
print(token_prices(ModelConfig.parse("openai/gpt-4o")))
"""
    # Even a user's LITELLM_LOCAL_MODEL_COST_MAP=False must not make the import fetch.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2],
                         env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "False"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == ["False False", "(2.5e-06, 1e-05)"]
    assert "Failed to fetch remote model cost map" not in out.stderr
