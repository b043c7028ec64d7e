"""A run killed with SIGKILL in the middle of generation, then started again, pays for
exactly one successful call per summary."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.generate import run_generation
from pytest_summarybench.schemas import GeneratedSummary
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store

CHILD = Path(__file__).with_name("generation_child.py")
ROOT = Path(__file__).resolve().parents[2]


def start_child(store: Path, base_url: str, key: str) -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_API_KEY": key,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                       os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, str(CHILD), str(store), base_url, "run-1", "4"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def wait_for(condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_generation_then_resume(fake_server, unit_factory, sentinel_key,
                                            tmp_path: Path) -> None:
    units = unit_factory(60)
    store_path = tmp_path / "store.sqlite"
    store = Store(store_path)
    store.save_units("run-1", units, {u.id for u in units})
    server = fake_server(latency_s=0.05)

    child = start_child(store_path, server.base_url, sentinel_key)
    wait_for(lambda: server.successes >= 20 or child.poll() is not None, 60)
    assert child.poll() is None, child.communicate()[0]
    # Hold the answers in flight, give the child a moment to store what it already has,
    # then kill it: the held calls are never delivered, so they are not "successful".
    server.pause()
    time.sleep(0.5)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    server.resume()
    assert child.returncode == -signal.SIGKILL
    before = server.successes
    linked = [v for v in store.run_summaries("run-1").values()
              if isinstance(v, GeneratedSummary)]
    assert 20 <= len(linked) < len(units)
    assert len(linked) == before          # everything delivered was stored before the kill

    # Start again (in this process: a fresh store connection and context, no shared state
    # with the killed run but the store file).
    settings = load_settings(None, {
        "models.test": [{"provider": "openai", "model": "gpt-4o",
                         "apiEndpoint": server.base_url}],
        "output.directory": str(tmp_path / "out")}, base_dir=tmp_path, families=BUILTIN_FAMILIES)
    ctx = RunContext(settings, Store(store_path), "run-1")
    report = run_generation(ctx, parallel=4, progress=False)
    assert (report.calls, report.reused, report.errors) == (len(units) - before, before, 0)
    assert server.successes == len(units)
    assert set(server.successes_by_fingerprint.values()) == {1}
    summaries = store.run_summaries("run-1")
    assert len(summaries) == len(units)
    assert all(isinstance(v, GeneratedSummary) for v in summaries.values())
