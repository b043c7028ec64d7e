"""Attack: a summary holding a lone surrogate (``"\\ud800"`` in the provider's JSON), which
decodes to a string no UTF-8 writer accepts. It used to be cached, then crash the summary
save with INTERNALERROR, on that run and on every re-run (0 calls, same crash) until the
store was deleted. Now it is refused before the cache, and a store that already holds such
an entry reads it as a miss.

One pytest session shows the whole path (the refused answer is a generation error naming
its reason, nothing poisoned reaches the store); the cache layer's own tests show the rest
without a session each: a refused answer is never cached and is asked again by the next
call (what a re-run does for that unit), and a poisoned entry an older version cached is a
miss that the next good answer replaces."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.llm import ModelCallError, RetryPolicy, cached_completion, complete
from pytest_summarybench.llm.cache import cache_get, cache_reject
from pytest_summarybench.llm.client import request_key
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.security_project import KEY_ENV, make_project, run

#: What a provider sends: a JSON string whose escape decodes to a lone surrogate.
POISON_JSON = '"Computes \\ud800 a price"'
#: Retries without the default backoff of a second.
FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)


def _completion_body(content_json: str) -> bytes:
    return ('{"id": "x", "object": "chat.completion", "created": 1, "model": "m", '
            '"choices": [{"index": 0, "finish_reason": "stop", "message": '
            '{"role": "assistant", "content": ' + content_json + '}}], '
            '"usage": {"prompt_tokens": 5, "completion_tokens": 5, '
            '"total_tokens": 10}}').encode()


class PoisonRule1:
    """The model under test answers rule_1 with the poison; counts how often."""

    def __init__(self) -> None:
        self.poisoned = 0

    def __call__(self, body: dict[str, Any]) -> str | Reply:
        prompt = body["messages"][-1]["content"]
        if body.get("model") == "gpt-4o-mini" and "def rule_1(" in prompt:
            self.poisoned += 1
            return Reply("", raw=_completion_body(POISON_JSON))
        return "Summary: applies a pricing rule"


def _rows(out: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(out / "store.sqlite")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_lone_surrogate_summary_is_refused_and_never_cached(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload: the model under test answers one unit with ``"\\ud800"`` in its text.
    Afterwards the run completes (that unit is a generation error naming the reason) and
    nothing holding the surrogate is in the store. (That a re-run asks again rather than
    crashing: ``test_a_refused_answer_is_never_cached_and_asked_again``.)"""
    responder = PoisonRule1()
    server: FakeOpenAIServer = fake_server(respond=responder)
    monkeypatch.setenv(KEY_ENV, "sk-unused-key-000000")
    make_project(pytester, server.base_url, functions=3)
    result = run(pytester)
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text, text
    result.stdout.fnmatch_lines(["*error: openai/gpt-4o-mini: rejected answer: the answer "
                                 "is not valid Unicode text (surrogates not allowed*"])
    assert result.parseoutcomes() == {"passed": 4, "failed": 2}
    out = pytester.path / "out"
    cached = [json.loads(t) for (t,) in _rows(out, "SELECT json FROM llm_cache")]
    assert cached and all("\ud800" not in c["text"] for c in cached)
    assert all("\\ud800" not in t for (t,) in _rows(out, "SELECT json FROM summaries"))
    # Asked twice (one retry of a rejected answer), never crashing.
    assert responder.poisoned == 2
    assert server.chat_requests > responder.poisoned


def test_a_refused_answer_is_never_cached_and_asked_again(tmp_path: Path,
                                                         fake_server: Any) -> None:
    """The cache layer under the session above: an answer with a lone surrogate is a
    rejected answer (retried once), nothing is written to the response cache, and the
    next call for the same request (a re-run's) asks the provider again instead of
    reading, or crashing on, a cached poison."""
    server: FakeOpenAIServer = fake_server(
        respond=lambda body: Reply("", raw=_completion_body(POISON_JSON)))
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url)
    store = Store(tmp_path / "s.sqlite")
    messages = [{"role": "user", "content": "Summarize rule_1."}]
    for asked in (2, 4):
        with pytest.raises(ModelCallError, match=r"rejected answer: the answer is not valid "
                           r"Unicode text \(surrogates not allowed"):
            complete(model, messages, cache=store, retry_policy=FAST)
        assert server.chat_requests == asked
        assert store.execute("SELECT COUNT(*) FROM llm_cache") == [(0,)]
        assert cached_completion(model, messages, cache=store) is None


def test_a_poisoned_entry_left_by_an_older_version_is_a_miss(tmp_path: Path,
                                                             fake_server: Any) -> None:
    """Payload: a response cache that already holds a summary with a lone surrogate (as
    written before the check existed, ``json.dumps`` escaping it). It is a miss: the
    request is asked again, and the fresh answer replaces the poisoned entry."""
    server: FakeOpenAIServer = fake_server()
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url)
    store = Store(tmp_path / "s.sqlite")
    messages = [{"role": "user", "content": "Summarize rule_1."}]
    first = complete(model, messages, cache=store)
    key = request_key(model, messages)
    assert cache_get(store, key) is not None and server.chat_requests == 1
    [(text,)] = store.execute("SELECT json FROM llm_cache WHERE key = ?", (key,))
    entry = json.loads(text)
    entry["text"] = entry["text"][:10] + "\ud800" + entry["text"][10:]
    with store.transaction() as conn:
        conn.execute("UPDATE llm_cache SET json = ? WHERE key = ?", (json.dumps(entry), key))

    assert cache_get(store, key) is None
    assert cached_completion(model, messages, cache=store) is None
    again = complete(model, messages, cache=store)
    assert not again.cached and again.text == first.text
    assert server.chat_requests == 2
    [(text,)] = store.execute("SELECT json FROM llm_cache WHERE key = ?", (key,))
    assert "\\ud800" not in text and json.loads(text)["text"] == first.text
    assert complete(model, messages, cache=store).cached and server.chat_requests == 2


def test_unreadable_cache_rows_are_misses(tmp_path: Path, fake_server: Any) -> None:
    """Rows that are not JSON, or JSON of another shape, are misses, not crashes."""
    server: FakeOpenAIServer = fake_server()
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url)
    store = Store(tmp_path / "s.sqlite")  # the store declares llm_cache itself
    wrong_text = json.dumps({"text": 5, "input_tokens": 1, "output_tokens": 1,
                             "latency_ms": 1.0, "cost": None})
    for i, junk in enumerate(["not json", "[1, 2]", '{"text": 5}', '{"unknown": 1}',
                              wrong_text]):
        with store.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO llm_cache VALUES (?, 'm', '', ?, 0)",
                         (f"k{i}", junk))
        assert cache_get(store, f"k{i}") is None
    assert complete(model, [{"role": "user", "content": "hi"}], cache=store).text


def test_an_unusable_answer_is_read_again_by_its_own_session_only(
        tmp_path: Path, fake_server: Any) -> None:
    """An answer its reader could not use (``cache_reject``) is still the answer for the
    session that read it (its tests read what its controller fetched, no second call),
    a miss for any later session (or a caller with no session), and the fresh answer
    that replaces it is a plain cached answer again."""
    server: FakeOpenAIServer = fake_server()
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url)
    store = Store(tmp_path / "s.sqlite")
    messages = [{"role": "user", "content": "Rate this summary as JSON."}]
    key = request_key(model, messages)

    assert not complete(model, messages, cache=store, session="s1").cached
    cache_reject(store, [key], session="s1")
    assert complete(model, messages, cache=store, session="s1").cached
    assert cached_completion(model, messages, cache=store, session="s1") is not None
    assert cached_completion(model, messages, cache=store, session="s2") is None
    assert cached_completion(model, messages, cache=store) is None
    assert server.chat_requests == 1

    assert not complete(model, messages, cache=store, session="s2").cached
    assert server.chat_requests == 2
    for session in ("s2", "s3", ""):
        assert cached_completion(model, messages, cache=store, session=session) is not None
    assert complete(model, messages, cache=store, session="s3").cached
    assert server.chat_requests == 2
