"""Attacks on the machine through the local model server (issue 18, item 12).

The server of a ``local/<name>`` GGUF model runs on the user's machine, often a shared
one. Its memory must stay under a limit (the kernel's OOM killer otherwise picks victims,
other people's processes among them), and a server that dies must be reported as such,
not started again behind the run's back for every next call.

Each test drives the real supervisor and a fake server process
(``tests/llm/local/fake_server.py``) that can grow, crash or be killed like the real
one, and states its payload and what must hold afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_summarybench.llm import ModelCallError, complete, local
from pytest_summarybench.llm.local import pid_alive
from pytest_summarybench.llm.retry import RetryPolicy
from pytest_summarybench.schemas import ModelConfig
from tests.llm.local.conftest import FAKE_MODULE, ROOT, FakeLlama

#: Retries as the default policy takes them, but quickly: a test waits seconds, not a minute.
QUICK = RetryPolicy(max_attempts=6, base_delay_s=0.2, max_delay_s=1.0)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLlama]:
    """``local/<tmp>/tiny-model.gguf`` served by the fake server (as tests/local's
    ``fake``); every server this process joined is left after the test."""
    weights = tmp_path / "tiny-model.gguf"
    weights.write_bytes(b"GGUF\x03\x00\x00\x00")
    monkeypatch.setenv(local.SERVER_MODULE_ENV, FAKE_MODULE)
    monkeypatch.setenv(local.STATE_DIR_ENV, str(tmp_path / "state"))
    monkeypatch.setenv(local.START_TIMEOUT_ENV, "30")
    monkeypatch.setenv("FAKE_LLAMA_LOG", str(tmp_path / "requests.jsonl"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    try:
        yield FakeLlama(weights=weights, log=tmp_path / "requests.jsonl",
                        state_dir=tmp_path / "state")
    finally:
        local.stop_servers()


def _model(fake: FakeLlama) -> ModelConfig:
    return ModelConfig.parse(f"local/{fake.weights}")


def _call(fake: FakeLlama, text: str = "unit") -> str:
    return complete(_model(fake), [{"role": "user", "content": text}], retry_policy=QUICK,
                    timeout=30).text


def _server_pids(fake: FakeLlama) -> set[int]:
    """Every server process that answered a request (the fake logs its pid)."""
    return {r["pid"] for r in fake.requests()}


def _wait_gone(pid: int, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):  # a zombie child of ours counts as gone
            return True
        time.sleep(0.05)
    return False


def test_a_server_growing_past_its_memory_limit_is_stopped_with_a_reason(
        fake: FakeLlama, monkeypatch: pytest.MonkeyPatch) -> None:
    # payload: every request leaves 80 MiB more resident in the server, as llama-cpp-
    # python's prompt cache did (1.4 GB a judge request), under a limit of 200 MiB
    monkeypatch.setenv("FAKE_LLAMA_GROW_MB", "80")
    monkeypatch.setenv("SUMMARYBENCH_LOCAL_MAX_RSS_MB", "200")
    # Each answer waits 1 s after its growth: four of the supervisor's reads (one every
    # 0.25 s), so the size a request reached is seen before the next request can add to
    # it, on a loaded machine too (the supervisor would have to miss four reads in a row).
    monkeypatch.setenv("FAKE_LLAMA_DELAY_S", "1")
    answered = 0
    with pytest.raises(ModelCallError) as info:
        for n in range(8):  # 640 MiB if nothing stops it
            _call(fake, f"unit {n}")
            answered += 1
    message = str(info.value)
    # stopped, with a one-line reason naming the model, the limit and the measured size
    assert f"local model server {fake.weights} was stopped" in message
    assert "went over the limit of 200 MiB" in message
    assert "SUMMARYBENCH_LOCAL_MAX_RSS_MB" in message and "\n" not in message
    measured = int(message.split("its resident size ")[1].split(" MiB")[0].replace(",", ""))
    # The server (a Python process of some 20 to 30 MiB) holds 80 MiB more per request:
    # under the limit after two requests, over it during the third, which the supervisor
    # stops in its 1 s wait, long before the 640 MiB that 8 requests would hold. One
    # request more is room for a supervisor that missed every read of that second.
    assert 200 < measured < 200 + 3 * 80
    assert 2 <= answered <= 3
    [server] = _server_pids(fake)
    assert _wait_gone(server)
    # and it stays stopped: the next call says why, and no new server is started
    with pytest.raises(ModelCallError, match="went over the limit of 200 MiB"):
        _call(fake, "after the stop")
    assert _server_pids(fake) == {server}


def test_a_killed_server_is_reported_not_restarted(fake: FakeLlama) -> None:
    assert _call(fake).startswith("A summary")
    [server] = _server_pids(fake)
    # payload: the server is killed with SIGKILL, as the kernel's OOM killer does
    os.kill(server, signal.SIGKILL)
    assert _wait_gone(server)
    for _ in range(2):  # neither this call nor the next starts a new server
        with pytest.raises(ModelCallError) as info:
            _call(fake, "after the kill")
        message = str(info.value)
        assert f"local model server {fake.weights} died (signal 9 (SIGKILL)" in message
        assert "last lines of its log: fake llama server on 127.0.0.1:" in message
    assert _server_pids(fake) == {server}


def test_a_server_that_crashes_is_reported_with_its_exit_code_and_log(
        fake: FakeLlama, monkeypatch: pytest.MonkeyPatch) -> None:
    # payload: a request that makes the server abort (as a failed GGML_ASSERT does)
    monkeypatch.setenv("FAKE_LLAMA_EXIT_ON", "CRASH-ME")
    assert _call(fake, "fine").startswith("A summary")
    with pytest.raises(ModelCallError) as info:
        _call(fake, "CRASH-ME")
    assert "died (exit 3;" in str(info.value)
    assert "GGML_ASSERT failed: fake crash on CRASH-ME" in str(info.value)
    with pytest.raises(ModelCallError, match=r"died \(exit 3;"):
        _call(fake, "fine again")
    assert len(_server_pids(fake)) == 1


OTHER_USER = """
import sys
from pytest_summarybench.llm.local import server_base_url
from pytest_summarybench.schemas import ModelConfig
try:
    print(server_base_url(ModelConfig.parse("local/" + sys.argv[1])), flush=True)
except ValueError as exc:
    print("ERROR", exc, flush=True)
"""


def test_another_process_of_the_run_does_not_restart_a_dead_server(
        fake: FakeLlama) -> None:
    assert _call(fake).startswith("A summary")
    [server] = _server_pids(fake)
    os.kill(server, signal.SIGKILL)  # payload: the server is killed mid-run
    assert all(_wait_gone(pid) for pid in {server, *(s.pid for s in fake.states())})
    # an xdist worker of the same run (same process group) asks for the server next
    other = subprocess.run([sys.executable, "-c", OTHER_USER, str(fake.weights)],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert other.stdout.startswith("ERROR local model server"), other.stdout + other.stderr
    assert "died (signal 9 (SIGKILL)" in other.stdout
    time.sleep(0.5)
    assert not any(pid_alive(s.pid) for s in fake.states())  # nothing new started


def test_a_busy_server_is_not_replaced_by_a_process_joining_it(
        fake: FakeLlama, monkeypatch: pytest.MonkeyPatch) -> None:
    # payload: a request that keeps the server busy for 4 s (it answers /v1/models only
    # between requests, as llama-cpp-python's does) while another process joins it
    monkeypatch.setenv("FAKE_LLAMA_DELAY_S", "4")
    first: list[str] = []
    assert _call(fake, "start").startswith("A summary")
    busy = threading.Thread(target=lambda: first.append(_call(fake, "long request")))
    busy.start()
    time.sleep(0.5)
    joiner = subprocess.run([sys.executable, "-c", OTHER_USER, str(fake.weights)],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    busy.join(30)
    # the joiner gets the same server; the request in flight is answered, not cut off
    assert joiner.stdout.startswith("http://127.0.0.1:"), joiner.stdout + joiner.stderr
    assert first and first[0].startswith("A summary")
    assert len(_server_pids(fake)) == 1
