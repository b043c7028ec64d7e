"""Ctrl-C while the controller makes the session's model calls stops the run at once, in
every mode, and keeps what was paid for.

A terminal sends SIGINT to the whole process group. It reaches only the main thread of
each process, while the calls are made by the controller's call thread (``plan.CallRun``):
the controller, interrupted while it waited for them, used to wait again for every
planned call before the session could end (a user's ``-n 2`` run went on calling for a
minute, until a second Ctrl-C). Now the first Ctrl-C cancels the calls: none starts
after it, the session ends as interrupted within seconds, and a re-run reuses every
answer received before it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.project import write_bench_module, write_code
from tests.fakes.reliability_project import function_source
from tests.fakes.scripted_provider import ScriptedProvider

UNITS = 8
LATENCY_S = 0.5
#: Answers received before the Ctrl-C, of 16 summaries, 16 pointwise and 16 pairwise
#: verdicts (one call at a time per model: the judge's alone take 16 s at this latency).
ANSWERED_BEFORE = 6
#: The interrupted session must be gone this long after SIGINT. It took about 3 s plain
#: and 5 s with -n 2 (interpreter and worker shutdown) on a quiet machine, 10.2 s with -n 2
#: inside the suite under ``pytest -n 2`` at a load average of 17 (a bound of 10 s failed
#: there, with 0 requests after the Ctrl-C). Before the fix the session ran as long as the
#: remaining calls (here over 15 s), and a session that carries on calling is caught by
#: the count of requests after the Ctrl-C, which does not depend on load; this bound only
#: catches a session that hangs without calling.
EXIT_WITHIN_S = 30.0


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(respond=ScriptedProvider(), latency_s=LATENCY_S) as fake:
        yield fake


def _project(pytester: pytest.Pytester, base_url: str) -> None:
    write_code(pytester, {"rules.py": "".join(function_source(i) for i in range(UNITS))})
    write_bench_module(pytester)
    model = "{{provider: local, model: {name}, apiEndpoint: '{url}', family: {family}}}"
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: interrupt
        codebase: {{root: code, languages: [python]}}
        extraction: {{types: [function]}}
        models:
          test:
            - {model.format(name="alpha-7b", url=base_url, family="alpha")}
            - {model.format(name="beta-7b", url=base_url, family="beta")}
          judge:
            - {model.format(name="gamma-judge", url=base_url, family="gamma")}
        evaluation:
          sampling: all
          sampleSize: {UNITS}
          parallel: 1
          judge: {{enabled: true}}
          contrastive: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        """))


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "summarybench", "-p", "no:cacheprovider",
            "-p", "no:randomly", "--sb-output", "out", *args]


def _wait_for(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def _start(command: list[str], cwd: Path, out: IO[Any]) -> subprocess.Popen[bytes]:
    """The session in a process group of its own, with SIGINT's default action. A shell
    starts a background job with SIGINT ignored, the ignoring is inherited through exec,
    and Python then installs no KeyboardInterrupt handler: this suite, run in the
    background (`bash .ci/run &`), would give the session a Ctrl-C it cannot receive.
    Any handler (not ignored) in this process at the fork is reset to the default at
    exec."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("run_mode", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_the_first_ctrl_c_stops_the_calls_and_a_rerun_reuses_the_answers(
        pytester: pytest.Pytester, server: FakeOpenAIServer, run_mode: list[str]) -> None:
    # Plain and two workers (-n 0 takes the plain path: the controller makes the calls).
    _project(pytester, server.base_url)
    log = pytester.path / "interrupted.log"
    with log.open("w") as out:
        # A session of its own: SIGINT to its process group is what a terminal's Ctrl-C
        # sends (the controller and its xdist workers alike).
        proc = _start(_command(*run_mode), pytester.path, out)
        try:
            assert _wait_for(lambda: server.successes >= ANSWERED_BEFORE
                             or proc.poll() is not None, 60), "no answer within 60 s"
            assert proc.poll() is None, log.read_text()
            # Hold the answers on their way, so that every answer the client has is one
            # it received (and cached) before the Ctrl-C; then let them go, so that a
            # session that does not stop carries on calling.
            server.pause()
            time.sleep(0.3)
            answered = {key for key, n in server.successes_by_fingerprint.items() if n}
            requests_before = server.chat_requests
            os.killpg(proc.pid, signal.SIGINT)
            interrupted = time.monotonic()
            time.sleep(0.2)
            server.resume()
            try:
                proc.wait(timeout=EXIT_WITHIN_S)
            except subprocess.TimeoutExpired:
                pass
            took = time.monotonic() - interrupted
            requests_after = server.chat_requests - requests_before
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    output = log.read_text()
    assert took < EXIT_WITHIN_S, (f"still running {took:.1f} s after Ctrl-C, "
                                  f"{requests_after} requests after it\n{output}")
    assert requests_after == 0, output  # no call started after the Ctrl-C
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output
    assert "(interrupted)" in output  # the session says why it has no results

    # The re-run asks for nothing that was answered before the Ctrl-C (the store is the
    # same in every mode: the re-run is plain).
    server.latency_s = 0.0
    rerun = pytester.run(*_command(), timeout=600)  # a hung session, not a timing
    rerun.assert_outcomes(passed=UNITS * 2 + UNITS)  # pointwise per model, pairwise
    assert len(answered) >= ANSWERED_BEFORE
    assert {key: server.successes_by_fingerprint[key] for key in answered} == \
        dict.fromkeys(answered, 1)


def _interrupt(proc: subprocess.Popen[bytes]) -> float:
    """Ctrl-C to the session's process group; the seconds until it ended (or until
    ``EXIT_WITHIN_S``, if it did not)."""
    os.killpg(proc.pid, signal.SIGINT)
    interrupted = time.monotonic()
    try:
        proc.wait(timeout=EXIT_WITHIN_S)
    except subprocess.TimeoutExpired:
        pass
    return time.monotonic() - interrupted


@contextlib.contextmanager
def _held_by_a_slow_answer(pytester: pytest.Pytester, fault: str,
                           config_text: str) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """A session whose ``alpha`` model is served by a provider that holds its answer
    (``fault``: ``drip`` or ``stall``) with a ``timeoutS`` of 10 minutes, started in a
    process group of its own and yielded once a call reads the slow answer; killed on
    the way out if it still runs. Yields the process and its log."""
    with FakeOpenAIServer(faults=lambda n, body: fault) as slow:
        pytester.path.joinpath("summarybench.yaml").write_text(
            re.sub(r"apiEndpoint: '[^']*', family: alpha}",
                   f"apiEndpoint: '{slow.base_url}', family: alpha, timeoutS: 600}}",
                   config_text))
        log = pytester.path / f"{fault}.log"
        with log.open("w") as out:
            proc = _start(_command(), pytester.path, out)
            try:
                assert _wait_for(lambda: slow.chat_requests >= 1 or proc.poll() is not None,
                                 120), "no call within 120 s"
                time.sleep(1.0)  # the call is reading the slow body
                assert proc.poll() is None, log.read_text()
                yield proc, log
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


@pytest.mark.parametrize("fault", ["drip", "stall"])
def test_the_first_ctrl_c_stops_a_session_held_by_a_slow_answer(
        pytester: pytest.Pytester, fault: str) -> None:
    """A provider that drips its answer a byte at a time (or promises more bytes than it
    sends and goes quiet), with a ``timeoutS`` of 10 minutes: the first Ctrl-C ends the
    session within seconds, not when the call's attempts have run out."""
    _project(pytester, "http://127.0.0.1:9/v1")
    config = (pytester.path / "summarybench.yaml").read_text()
    with _held_by_a_slow_answer(pytester, fault, config) as (proc, log):
        took = _interrupt(proc)
    output = log.read_text()
    assert took < EXIT_WITHIN_S, f"still running {took:.1f} s after Ctrl-C\n{output}"
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output


def test_a_session_killed_while_it_waits_leaves_the_previous_results_in_place(
        pytester: pytest.Pytester, server: FakeOpenAIServer) -> None:
    """A session killed (SIGKILL) while a provider stalls its answer: the output folder
    keeps the previous session's results.json, reports and explorer (they were renamed to
    ``*.previous.*`` when evaluation started, and the folder was left without results),
    and the next session runs as usual past the dead one's working folder and lock."""
    server.latency_s = 0.0
    _project(pytester, server.base_url)
    first = pytester.run(*_command(), timeout=300)
    first.assert_outcomes(passed=UNITS * 2 + UNITS)
    out = pytester.path / "out"
    names = ["results.json", "report.md", "report.html", "explorer.html"]
    before = {name: (out / name).read_bytes() for name in names}
    config = pytester.path / "summarybench.yaml"
    healthy = config.read_text()
    with _held_by_a_slow_answer(pytester, "stall", healthy) as (proc, _log):
        left = sorted(p.name for p in out.iterdir())
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not [n for n in left if ".previous." in n], left
    assert {name: (out / name).read_bytes() for name in names} == before
    assert not list(out.glob("*.previous.*"))
    dead = [p for p in (out / "work").rglob("*") if p.is_dir() and p.parent.parent.name
            == "work"]
    assert dead, "the killed session's working folder"

    config.write_text(healthy)
    rerun = pytester.run(*_command(), timeout=300)
    rerun.assert_outcomes(passed=UNITS * 2 + UNITS)
    assert json.loads((out / "results.previous.json").read_bytes()) == \
        json.loads(before["results.json"])
    assert not [p for p in dead if p.exists()]  # the dead session's folder is gone


LONG_UNITS = 12
"""Files of one long function each: 24 units of some 2,000 word pieces (8 windows) for the
default embedding model, seconds of embedding on a 2-CPU machine."""


def _long_function(n: int) -> str:
    words = [f"name{(n * 7919 + i * 104729) % 99991}" for i in range(1500)]
    body = "".join(f"    x{i} = a + {i}  # {' '.join(words[i * 10:i * 10 + 10])}\n"
                   for i in range(150))
    return f"def long{n}(a):\n{body}    return x149\n"


def test_a_ctrl_c_during_embedding_exits_as_interrupted_not_by_abort(
        pytester: pytest.Pytester) -> None:
    """Ctrl-C while the default model (builtin/minilm, onnxruntime) embeds code in the
    warm-up thread: the session exits as interrupted (exit code 2). It used to die by
    abort (signal 6, "terminate called without an active exception"): the Ctrl-C cut the
    controller's wait for the thread, the session's last wait then returned at once, and
    the interpreter shut down with the thread inside onnxruntime. Offline: the builtin
    baselines are the models."""
    write_code(pytester, {f"m{n}.py": _long_function(n) for n in range(LONG_UNITS)})
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent("""
        name: interrupt-embedding
        codebase: {root: code, languages: [python]}
        extraction: {types: [function, file]}
        evaluation:
          sampleSize: 2
          judge: {enabled: false}
          retrieval: {enabled: false}
          downstream: {enabled: false}
        """))
    log = pytester.path / "embedding.log"
    done = re.compile(r"embedding code \(builtin/minilm\):\s+\d+% ([1-9]\d*)/(\d+)")
    with log.open("w") as out:
        proc = _start(_command(), pytester.path, out)
        try:
            # The embedding line, not a fixed sleep: start-up takes seconds more on a
            # loaded machine. Two texts done: the controller is waiting for the thread.
            assert _wait_for(lambda: any(int(m[1]) >= 2 and int(m[1]) < int(m[2])
                                         for m in done.finditer(log.read_text()))
                             or proc.poll() is not None, 300), log.read_text()
            assert proc.poll() is None, log.read_text()
            took = _interrupt(proc)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    output = log.read_text()
    assert took < EXIT_WITHIN_S, f"still running {took:.1f} s after Ctrl-C\n{output}"
    assert "terminate called" not in output, output
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, (proc.returncode, output[-3000:])
    assert "(interrupted)" in output
