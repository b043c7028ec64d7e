"""A judge whose endpoint refuses connections: the run ends soon, says "connection
refused" and where, the other families still score, and the report counts the errors.

Before issue 20 a refused connection came back from litellm as HTTP 500 "Connection
error.", was retried six times with backoff (about 23 s an item) and the run took
minutes. Now it is not retried, and after three in a row the judge's calls fail at once
(``llm/breaker.py``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml

from tests.fakes.project import session_results, write_bench_module, write_code
from tests.fakes.reliability_project import function_source, run

FUNCTIONS = 12


def _project(pytester: pytest.Pytester, name: str, *, test: list[dict[str, Any]],
             judges: list[dict[str, Any]], judge: dict[str, Any]) -> None:
    """``FUNCTIONS`` functions, the models given, the contrastive family and ``judge``'s
    settings for the judge family."""
    write_code(pytester, {"rules.py": "".join(function_source(i) for i in range(FUNCTIONS))})
    write_bench_module(pytester)
    config = {"name": name, "codebase": {"root": "code", "languages": ["python"]},
              "extraction": {"types": ["function"]},
              "models": {"test": test, "judge": judges},
              "evaluation": {"sampling": "all", "sampleSize": FUNCTIONS, "parallel": 4,
                             "judge": judge,
                             "contrastive": {"enabled": True, "distractors": 3},
                             "retrieval": {"enabled": False},
                             "downstream": {"enabled": False}}}
    pytester.makefile(".yaml", summarybench=yaml.safe_dump(config, sort_keys=False))


def test_a_judge_that_refuses_connections_does_not_hold_up_the_run(
        pytester: pytest.Pytester, refusing_port: int) -> None:
    base = f"http://127.0.0.1:{refusing_port}/v1"
    _project(pytester, "dead-judge",
             test=[{"provider": "builtin", "model": "docstring"},
                   {"provider": "builtin", "model": "identifiers"}],
             judges=[{"provider": "local", "model": "judge-7b", "apiEndpoint": base}],
             judge={"pairwise": False})
    started = time.monotonic()
    result = run(pytester)
    elapsed = time.monotonic() - started
    output = result.stdout.str()
    assert elapsed < 60, output
    outcomes = result.parseoutcomes()
    judged = FUNCTIONS * 2                     # judge/pointwise: 12 units x 2 models
    assert outcomes.get("failed", 0) == judged, output
    assert outcomes.get("passed", 0) >= FUNCTIONS * 2   # contrastive/embedding scored
    assert f"connection refused at {base}" in output
    # One line at the end names the model, where and why (docs/hosts.md "Rate limits and dead
    # endpoints"); before, a judge's dead endpoint was only in its items' failures.
    result.stdout.fnmatch_lines([f"dead endpoint: local/judge-7b: connection refused at "
                                 f"{base} (failed 3 times in a row; calls now fail at once "
                                 "without being sent)"])
    # A judge that gave no verdict makes the run unhealthy (issue 33): it is kept in
    # runs/<id>/, and the output directory gets no results.json of it.
    assert not (pytester.path / "out" / "results.json").exists()
    data: dict[str, Any] = session_results(result)
    assert data["metadata"]["health"]["healthy"] is False
    counted = {(e["modelId"], e["evaluator"]): e["count"] for e in data["errors"]}
    assert sum(counted.values()) == judged
    assert {evaluator for _, evaluator in counted} == {"judge/pointwise"}
    for ranking in data["rankings"]:           # the other family scored every unit
        assert set(ranking["scores"]) == {"contrastive"}
        assert ranking["scoredItems"] == FUNCTIONS and ranking["errors"] == FUNCTIONS


def test_a_model_answering_server_errors_to_everything_stops_being_called(
        pytester: pytest.Pytester, fake_server: Any) -> None:
    """A model under test whose server answers HTTP 500 to every request. Each call is
    retried (six attempts, about 25 s of backoff), and before issue 34 so was every call
    of the model: 12 units, 72 requests, some 80 s 4 at a time (100 units: 600 requests,
    40 minutes one at a time). Three calls in a row that gave up open the model's breaker,
    so at most the calls in flight beside them are still tried; the built-in model is
    scored as usual and one line at the end names the model and why. Counts, not
    durations."""
    server = fake_server(faults=lambda n, body: "500")
    _project(pytester, "broken-model",
             test=[{"provider": "builtin", "model": "docstring"},
                   {"provider": "local", "model": "broken", "apiEndpoint": server.base_url}],
             judges=[], judge={"enabled": False})
    result = run(pytester)
    output = result.stdout.str()
    # Three calls gave up (6 attempts each); the others in flight beside them (parallel 4)
    # end at their next attempt.
    assert server.chat_requests <= 6 * 6 < 6 * FUNCTIONS, (server.chat_requests, output)
    result.stdout.fnmatch_lines([
        f"dead endpoint: local/broken ({server.base_url}): HTTP 500: upstream failure "
        "(gave up after 6 attempts in *) (failed 3 times in a row; calls now fail at once "
        "without being sent)"])
    outcomes = result.parseoutcomes()
    failed = [line for line in output.splitlines() if line.startswith("FAILED ")]
    assert outcomes.get("failed", 0) == len(failed) == FUNCTIONS, output
    assert all("-local/broken-contrastive/embedding]" in line for line in failed), failed
    data: dict[str, Any] = session_results(result)
    rankings = {r["modelId"]: r for r in data["rankings"]}
    assert rankings["builtin/docstring"]["scoredItems"] == FUNCTIONS
    assert rankings["builtin/docstring"]["errors"] == 0
    counted = {(e["modelId"], e["evaluator"]): e["count"] for e in data["errors"]}
    assert counted == {("local/broken", "contrastive/embedding"): FUNCTIONS}, counted
