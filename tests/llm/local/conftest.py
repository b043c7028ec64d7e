"""Fixtures for the offline local provider: GGUF models served by a fake llama server in
a real subprocess, and the skip of ``local_llm`` tests where the extra is missing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.llm import local
from pytest_summarybench.llm.local_supervisor import Status

ROOT = Path(__file__).resolve().parents[3]
FAKE_MODULE = "tests.llm.local.fake_llama_server"
#: The weights the real-model tests use: the ones the ``local`` extra installs.
REAL_MODEL = "smollm2-135m-instruct"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("local_llm") is not None:
        reason = local.unavailable_reason(REAL_MODEL)
        if reason is not None:
            pytest.skip(f"local_llm: needs the 'local' extra ({reason})")


@dataclass
class FakeLlama:
    """A fake-served GGUF model: its file, the request log and the state directory."""

    weights: Path
    log: Path
    state_dir: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def states(self) -> list[local.ServerState]:
        found = (local.ServerState.read(p) for p in sorted(self.state_dir.glob("*.json"))
                 if not p.name.endswith(".status.json"))
        return [s for s in found if s is not None]

    def statuses(self) -> list[Status]:
        found = (Status.read(p) for p in sorted(self.state_dir.glob("*.status.json")))
        return [s for s in found if s is not None]

    def server_pid(self) -> int:
        """The pid of the one server process (the supervisor's child)."""
        [status] = self.statuses()
        return status.server_pid


@pytest.fixture
def fake_llama(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLlama]:
    """``local/<tmp>/tiny-model.gguf`` served by ``fake_llama_server``; every server this
    process started is stopped after the test."""
    weights = tmp_path / "tiny-model.gguf"
    weights.write_bytes(b"GGUF\x03\x00\x00\x00")
    state_dir = tmp_path / "state"
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv(local.SERVER_MODULE_ENV, FAKE_MODULE)
    monkeypatch.setenv(local.STATE_DIR_ENV, str(state_dir))
    monkeypatch.setenv(local.START_TIMEOUT_ENV, "30")
    monkeypatch.setenv("FAKE_LLAMA_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    fake = FakeLlama(weights=weights, log=log, state_dir=state_dir)
    try:
        yield fake
    finally:
        local.stop_servers()
