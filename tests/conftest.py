"""Shared test fixtures: pytester, and the three run modes of integration scenarios."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    """Import the C-extension modules the statistics load lazily before any test runs:
    the ``pytester`` fixture removes, at its teardown, every module first imported during
    its test, and numpy's extensions cannot be loaded a second time in one process
    ("cannot load module more than once per process"), which failed later tests that
    ran after a pytester test had rebuilt a report in-process."""
    import scipy.stats  # noqa: F401 - imports numpy.fft, numpy.linalg and scipy's own

    # tree-sitter is a C extension too ("argument 1 must be tree_sitter.Query, not
    # tree_sitter.Query" when an in-process session first imported it), and the package's
    # model layer with pydantic was imported before every test by a fixture that reset the
    # process-wide rate limiters (they are the session's now: llm/endpoints.py).
    import tree_sitter  # noqa: F401

    import pytest_summarybench.llm.endpoints  # noqa: F401


#: Integration scenarios run in each mode, like syrupy's ``plugin_args``: plain (no xdist
#: flag at all) and two workers. (``-n 0`` was a third mode until 2026-11-27: with no
#: worker the controller runs the tests itself, as in a plain run, and the mode cost a
#: minute of the suite; ``tests/plugin/test_plugin.py`` still compares -n 0, -n 2 and no xdist.)
RUN_MODES = {"plain": [], "n2": ["-n", "2"]}


@pytest.fixture(params=sorted(RUN_MODES))
def run_mode(request: pytest.FixtureRequest) -> list[str]:
    """Extra pytest arguments for one of the three modes."""
    return RUN_MODES[request.param]


@pytest.fixture(autouse=True)
def _children_keep_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest sessions and CLI commands tests start (186 of them) may write bytecode:
    with ``PYTHONDONTWRITEBYTECODE`` set, as on the machine this suite is run on, every one
    of them (and each of its xdist workers) compiled and assert-rewrote the plugin's ~240
    modules again, about a tenth of the suite's time. What the tests check is the same."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


@pytest.fixture(autouse=True)
def _children_are_not_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``pytest -n 2`` (the README's test command) this process is an xdist worker,
    and xdist's variables (``PYTEST_XDIST_WORKER``, ``PYTEST_XDIST_WORKER_COUNT``, ...)
    would reach the sessions and commands the tests start: a session run with ``-p
    no:xdist`` took itself for a worker (tests/core/test_progress.py). A test's children see the
    environment of a plain run, with or without ``-n``."""
    for key in list(os.environ):
        if key.startswith("PYTEST_XDIST_"):
            monkeypatch.delenv(key)


@pytest.fixture(autouse=True)
def _no_network_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never use real provider keys."""
    for key in list(os.environ):
        if key.endswith("_API_KEY"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """Start ``FakeOpenAIServer(**kwargs)`` on 127.0.0.1; every one is stopped after the
    test."""
    servers: list[FakeOpenAIServer] = []

    def start(**kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(**kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound (so nobody else takes it) but
    not listening, so the kernel answers a connect with a reset."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()
