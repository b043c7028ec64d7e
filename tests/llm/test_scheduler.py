"""The call scheduler (``llm/scheduler.py``): its slots per model and what it does
around the model layer, against the fake OpenAI server.

The plugin-level behaviour (calls ahead of the tests, ``-k``, the dry run, xdist) is in
``tests/plugin/test_call_scheduling.py``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

import pytest

from pytest_summarybench.llm import RetryPolicy
from pytest_summarybench.llm.providers import litellm
from pytest_summarybench.llm.requests import ModelRequest
from pytest_summarybench.llm.scheduler import Scheduler, run_coroutine, settle
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Reply

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-scheduler-test-key")
    litellm()
    return "sk-fake-scheduler-test-key"


def _run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coroutine)


# -- Scheduler ----------------------------------------------------------------------------------
def _request(model: ModelConfig, text: str) -> ModelRequest:
    return ModelRequest.chat(model, [{"role": "user", "content": text}], role="judge",
                             phase="judge/pointwise", tag="scheduler-test")


def test_each_model_gets_its_parallel_slots_independently(fake_server: Any, key: str) -> None:
    server: FakeOpenAIServer = fake_server(latency_s=0.2)
    models = [ModelConfig(provider="openai", model_name=name, api_endpoint=server.base_url)
              for name in ("judge-a", "judge-b")]
    scheduler = Scheduler(None, parallel=3, retry_policy=FAST)
    requests = [_request(m, f"unit {i}") for m in models for i in range(9)]
    results = run_coroutine(lambda: settle([scheduler.call(r) for r in requests]))
    assert all(not isinstance(r, BaseException) for r in results)
    assert dict(server.peak) == {"judge-a": 3, "judge-b": 3}
    assert scheduler.totals()["judge/pointwise"].calls == 18


def test_identical_requests_are_made_once(fake_server: Any, key: str, tmp_path: Any) -> None:
    server: FakeOpenAIServer = fake_server(latency_s=0.2)
    model = ModelConfig(provider="openai", model_name="judge-a", api_endpoint=server.base_url)
    store = Store(tmp_path / "store.sqlite")
    scheduler = Scheduler(store, parallel=1, retry_policy=FAST)
    same = [_request(model, "the same prompt") for _ in range(5)]
    other = _request(model, "another prompt")
    results = run_coroutine(lambda: settle([scheduler.call(r) for r in [*same, other]]))
    assert server.chat_requests == 2
    assert {r.text for r in results[:5]} == {results[0].text}  # type: ignore[union-attr]
    # A later call of the same request is a cache hit: no call at all.
    again = run_coroutine(lambda: settle([scheduler.call(same[0])]))
    assert server.chat_requests == 2 and again[0].cached  # type: ignore[union-attr]


def test_a_failure_is_recorded_for_the_session_and_not_repeated(
        fake_server: Any, key: str, tmp_path: Any) -> None:
    server: FakeOpenAIServer = fake_server(respond=lambda body: Reply("bad", status=400))
    model = ModelConfig(provider="openai", model_name="judge-a", api_endpoint=server.base_url)
    store = Store(tmp_path / "store.sqlite")
    scheduler = Scheduler(store, parallel=2, retry_policy=FAST, session="token-1")
    request = _request(model, "refused prompt")
    results = run_coroutine(lambda: settle([scheduler.call(request)]))
    assert "400" in str(results[0])
    assert store.call_failures.reason("token-1", request.key) is not None
    from pytest_summarybench.llm.scheduler import fetch

    calls = server.chat_requests
    with pytest.raises(Exception, match="400"):
        fetch(request, store, "token-1")   # what a test does: reads the failure
    assert server.chat_requests == calls


def test_the_scheduler_runs_from_a_thread_of_its_own(fake_server: Any, key: str) -> None:
    # The controller runs its loop in a thread while pytest's main thread goes on.
    server: FakeOpenAIServer = fake_server()
    model = ModelConfig(provider="openai", model_name="judge-a", api_endpoint=server.base_url)
    scheduler = Scheduler(None, parallel=2, retry_policy=FAST)
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.extend(run_coroutine(
        lambda: settle([scheduler.call(_request(model, f"u{i}")) for i in range(4)]))))
    thread.start()
    thread.join(30)
    assert len(out) == 4 and server.chat_requests == 4
