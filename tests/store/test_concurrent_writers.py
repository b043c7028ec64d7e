"""``-n 4`` against one store: the controller writes records while four workers write
response-cache rows and selections; no row is lost and the store stays readable."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_summarybench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.reliability_project import make_project, run, store_rows

FUNCTIONS = 40


def test_four_workers_lose_no_rows(pytester: pytest.Pytester, fake_server: Any,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    server: FakeOpenAIServer = fake_server()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-concurrency-test")
    make_project(pytester, server.base_url, functions=FUNCTIONS)
    result = run(pytester, "-n", "4")
    items = FUNCTIONS * 2
    result.assert_outcomes(passed=items)

    assert store_rows(pytester, "PRAGMA integrity_check") == [("ok",)]
    # One record per test, one cached answer per distinct request (generation + judge),
    # and the server answered each request exactly once.
    assert store_rows(pytester, "SELECT COUNT(*) FROM records") == [(items,)]
    assert store_rows(pytester, "SELECT COUNT(DISTINCT nodeid) FROM records") == [(items,)]
    assert store_rows(pytester, "SELECT COUNT(*) FROM llm_cache") == [(2 * FUNCTIONS,)]
    assert server.successes == 2 * FUNCTIONS
    assert max(server.successes_by_fingerprint.values()) == 1
    # Readable through the store API as well, records intact.
    store = Store(pytester.path / "out" / "store.sqlite")
    run_id = store.latest_run_id()
    assert run_id is not None
    records = store.load_records(run_id, "summary")
    assert len(records) == items and all(r.error is None for r in records)
    store.close()
