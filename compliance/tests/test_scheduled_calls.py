"""The LLM classifier's calls go through the session's call scheduler: made before the
tests, ``--sb-parallel`` at once, only for the selected tests, once each, kept for the
session only; a failed call fails its test with the reason, without a second call."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import compliance_project as project
import pytest
from fake_ollama import FakeOllama

TWO_WORKERS = ["-n", "2"]


@pytest.mark.parametrize("mode", [[], TWO_WORKERS], ids=["plain", "xdist"])
def test_calls_run_at_the_parallel_limit(bench: pytest.Pytester,
                                         mode: list[str]) -> None:
    # 10 examples answered after 0.4 s each: one test at a time would keep one call in
    # flight (two with two workers); the scheduler keeps --sb-parallel of them.
    with FakeOllama(delay_s=0.4) as server:
        result = project.run(bench, "--compliance-test-mode", "--compliance-endpoint", server.url,
                      "--sb-parallel", "5", *mode)
        calls, peak = len(server.chat_requests), server.peak
    result.assert_outcomes(passed=20)
    assert calls == 10
    assert peak == 5
    assert project.results(bench.path)["llm_models"]["ollama/air-compliance-v2"]["num_scored"] == 10


@pytest.mark.parametrize("mode", [[], TWO_WORKERS], ids=["plain", "xdist"])
def test_only_selected_tests_are_called(bench: pytest.Pytester,
                                        mode: list[str]) -> None:
    with FakeOllama() as server:
        result = project.run(bench, "--compliance-endpoint", server.url, "-k",
                      "test_llm and art14", *mode)
        asked = [b["messages"][-1]["content"] for b in server.chat_requests]
    outcomes = result.parseoutcomes()
    assert 0 < outcomes["passed"] < 54
    assert len(asked) == outcomes["passed"]
    assert len(set(asked)) == len(asked)


def _store_rows(root: Path) -> dict[str, int]:
    """Rows the sessions left behind, per table, in every store under ``root``."""
    counts = {"compliance answers": 0, "session_items": 0, "call_failures": 0}
    stores = [p for p in root.rglob("*.sqlite") if p.is_file()]
    assert stores, f"no store under {root}"
    for path in stores:
        with sqlite3.connect(path) as conn:
            counts["compliance answers"] += conn.execute(
                "SELECT count(*) FROM llm_cache WHERE tag LIKE 'compliance/%'").fetchone()[0]
            for table in ("session_items", "call_failures"):
                counts[table] += conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return counts


def test_every_run_asks_again_and_leaves_nothing_behind(
        bench: pytest.Pytester) -> None:
    # With two workers, then without (the second session's three processes cost more
    # than the scenario needs; each mode leaves nothing either way).
    with FakeOllama() as server:
        for mode in (TWO_WORKERS, []):
            project.run(bench, "--compliance-test-mode", "--compliance-endpoint", server.url,
                        *mode).assert_outcomes(passed=20)
        calls = len(server.chat_requests)
    assert calls == 20  # a later run measures the classifier again
    assert _store_rows(bench.path) == {"compliance answers": 0, "session_items": 0,
                                       "call_failures": 0}


def test_failed_call_fails_its_test_without_calling_again(
        bench: pytest.Pytester) -> None:
    with FakeOllama(chat_status=500) as server:
        result = project.run(bench, "--compliance-test-mode", "--compliance-endpoint", server.url)
        calls = len(server.chat_requests)
    result.assert_outcomes(passed=10, failed=10)
    # The classifier's two attempts, made by the scheduler only; three calls in a row that
    # gave up on server errors open the model's breaker, so only those and the calls in
    # flight beside them are made (before issue 34: every call, 20 requests).
    assert calls <= 6 * 2 < 10 * 2, calls
    result.stdout.fnmatch_lines(["*_ test_llm[[]*", "*HTTP 500*gave up after 2 attempts*"])
    result.stdout.fnmatch_lines(["*HTTP 500*(failed 3 times in a row; calls now fail at "
                                 "once without being sent)*"])
    result.stdout.no_fnmatch_line("*During handling of the above exception*")
    block = project.results(bench.path)["llm_models"]["ollama/air-compliance-v2"]
    assert len(block["failed"]) == 10
