"""Attack (on the wallet): identical requests in flight at once, from coroutines, threads,
xdist workers or two sessions on one output folder, were each paid for (83 of 84 prompts
twice). Now one is made and the others wait for its answer; a dead owner blocks nobody
for long, and a failed call lets the waiters make their own attempt."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.llm import acomplete, complete
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.security_project import KEY_ENV, make_project

MESSAGES = [{"role": "user", "content": "summarize: def f(x): return x + 1"}]


def _model(server: FakeOpenAIServer) -> ModelConfig:
    return ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url)


def test_concurrent_coroutines_make_one_call(fake_server: Any, tmp_path: Path) -> None:
    """Payload: eight coroutines send the same request at once. One call is made."""
    server: FakeOpenAIServer = fake_server(latency_s=0.3)
    store = Store(tmp_path / "s.sqlite")

    async def all_at_once() -> list[Any]:
        return await asyncio.gather(*(acomplete(_model(server), MESSAGES, cache=store)
                                      for _ in range(8)))

    answers = asyncio.run(all_at_once())
    assert server.chat_requests == 1
    assert len({a.text for a in answers}) == 1
    assert sum(not a.cached for a in answers) == 1  # paid once, the others from the cache


def test_concurrent_threads_make_one_call(fake_server: Any, tmp_path: Path) -> None:
    server: FakeOpenAIServer = fake_server(latency_s=0.3)
    store = Store(tmp_path / "s.sqlite")
    answers: list[Any] = []

    def ask() -> None:
        answers.append(complete(_model(server), MESSAGES, cache=store))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(answers) == 6 and server.chat_requests == 1
    assert sum(not a.cached for a in answers) == 1


def test_a_failed_call_is_not_cached_and_the_waiters_try_themselves(tmp_path: Path) -> None:
    from pytest_summarybench.llm.inflight import current_claim, single_flight

    store = Store(tmp_path / "s.sqlite")
    cache: dict[str, str] = {}
    calls: list[int] = []
    lock = threading.Lock()

    def call() -> str:
        with lock:
            calls.append(1)
            first = len(calls) == 1
        time.sleep(0.2)
        if first:
            raise RuntimeError("provider down")
        cache["k"] = "answer"
        return "answer"

    outcomes: list[str] = []

    def ask() -> None:
        try:
            outcomes.append(single_flight(store, "k", call, lambda: cache.get("k")))
        except RuntimeError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == ["answer", "answer", "answer", "provider down"]
    assert len(calls) == 2  # the failure, then one waiter's own attempt; the rest cached
    assert current_claim(store, "k") is None


_OWNER = """
import sys, time
from pytest_summarybench.llm.inflight import try_claim
from pytest_summarybench.store import Store
assert try_claim(Store(sys.argv[1]), "k")
print("claimed", flush=True)
time.sleep(120)
"""


def test_a_killed_owner_blocks_others_only_briefly(tmp_path: Path) -> None:
    """Payload: another process claims a request and is killed (SIGKILL) mid-call. The
    waiter blocks while it lives, and takes over within seconds of its death."""
    from pytest_summarybench.llm.inflight import current_claim, single_flight

    path = tmp_path / "s.sqlite"
    owner = subprocess.Popen([sys.executable, "-c", _OWNER, str(path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "claimed"
        store = Store(path)
        made: list[float] = []

        def mine() -> str:
            made.append(time.monotonic())
            return "mine"

        thread = threading.Thread(target=single_flight,
                                  args=(store, "k", mine, lambda: None))
        thread.start()
        time.sleep(1.0)
        assert thread.is_alive() and not made  # the live owner is waited for
    finally:
        killed_at = time.monotonic()
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    thread.join(20)
    assert not thread.is_alive() and len(made) == 1
    assert made[0] - killed_at < 5.0
    assert current_claim(store, "k") is None


def test_a_silent_owner_elsewhere_is_taken_over_when_stale(tmp_path: Path) -> None:
    """A claim from another host (no pid to check) that stops beating is taken over once
    it is stale, not waited for forever."""
    from pytest_summarybench.llm.inflight import current_claim, single_flight

    store = Store(tmp_path / "s.sqlite")
    current_claim(store, "k")  # creates the table
    with store.transaction() as conn:
        conn.execute("INSERT INTO llm_inflight VALUES ('k', 'elsewhere:1:x', 'elsewhere', 1, ?)",
                     (time.time(),))
    started = time.monotonic()
    assert single_flight(store, "k", lambda: "mine", lambda: None, stale_after_s=1.0) == "mine"
    assert 0.8 < time.monotonic() - started < 5.0


def test_a_live_owner_elsewhere_is_waited_for_and_its_answer_read(tmp_path: Path) -> None:
    from pytest_summarybench.llm.inflight import release, single_flight, try_claim

    store = Store(tmp_path / "s.sqlite")
    assert try_claim(store, "k")
    release(store, "k")
    with store.transaction() as conn:
        conn.execute("INSERT INTO llm_inflight VALUES ('k', 'elsewhere:1:x', 'elsewhere', 1, ?)",
                     (time.time(),))
    cache: dict[str, str] = {}

    def owner_finishes() -> None:
        time.sleep(0.5)
        cache["k"] = "theirs"
        with store.transaction() as conn:
            conn.execute("DELETE FROM llm_inflight WHERE key = 'k'")

    threading.Thread(target=owner_finishes).start()
    assert single_flight(store, "k", lambda: "mine", lambda: cache.get("k")) == "theirs"


def test_two_sessions_on_one_output_folder_pay_each_prompt_once(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload: two pytest sessions started together on one project and output folder
    (each generating summaries and asking the judge). Every prompt is paid once."""
    server: FakeOpenAIServer = fake_server(latency_s=0.4)
    monkeypatch.setenv(KEY_ENV, "sk-test-key-0000000")
    make_project(pytester, server.base_url, functions=4)
    args = [sys.executable, "-m", "pytest", "-p", "summarybench", "-p", "no:cacheprovider",
            "-p", "no:randomly", "--sb-output", "out"]
    sessions = [pytester.popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, cwd=pytester.path, text=True)
                for _ in range(2)]
    # a bound for a hung session, not a timing: two sessions took over 120 s at load 29
    outputs = [s.communicate(timeout=600)[0] for s in sessions]
    for session, output in zip(sessions, outputs, strict=True):
        assert session.returncode == 0, output
        assert "8 passed" in output, output
    paid = dict(server.successes_by_fingerprint)
    assert len(paid) == 8, paid  # 4 summaries and 4 judge prompts
    assert max(paid.values()) == 1, paid
