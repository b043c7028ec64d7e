"""Fixtures for the downstream tests: the bundled task set and a scripted task model."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Make ``tests.fakes`` importable however pytest was started.
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

CODEBASE = _ROOT / "fixtures" / "sample_codebase"
TASKS = _ROOT / "fixtures" / "tasks" / "sample_codebase"


@pytest.fixture
def fake_server() -> Iterator[Callable[..., Any]]:
    """Start ``FakeOpenAIServer(**kwargs)``; every server is stopped after the test."""
    from tests.fakes.openai_server import FakeOpenAIServer

    servers: list[FakeOpenAIServer] = []

    def start(**kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(**kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
