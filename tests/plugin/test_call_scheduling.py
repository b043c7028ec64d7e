"""The session's model calls, end to end through the plugin (issue 20): made by the
controller ahead of the tests, ``--sb-parallel`` at once per model in the evaluation
phase too, only for what ``-k`` selected, each once, and the same records with and
without xdist.

Two models under test and a judge of another family on the fake provider (each answer
after ``LATENCY_S``), judge pointwise and pairwise on ``UNITS`` functions. Before the
scheduler the judge's calls were made by the tests, one at a time (a peak of 1).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.project import write_bench_module, write_code
from tests.fakes.reliability_project import function_source
from tests.fakes.scripted_provider import ScriptedProvider

UNITS = 6
PARALLEL = 3
LATENCY_S = 0.3
MODELS = ("alpha-7b", "beta-7b")
JUDGE = "gamma-judge"
GENERATION = UNITS * len(MODELS)
POINTWISE = UNITS * len(MODELS)
PAIRWISE = UNITS * 2                      # one pair of models, both orders
ITEMS = POINTWISE + UNITS                 # pointwise items + one pairwise item per unit


@pytest.fixture
def provider() -> Iterator[tuple[FakeOpenAIServer, ScriptedProvider]]:
    script = ScriptedProvider()
    with FakeOpenAIServer(respond=script, latency_s=LATENCY_S) as server:
        yield server, script


def _project(pytester: pytest.Pytester, base_url: str) -> None:
    write_code(pytester, {"rules.py": "".join(function_source(i) for i in range(UNITS))})
    write_bench_module(pytester)
    model = "{{provider: local, model: {name}, apiEndpoint: '{url}', family: {family}}}"
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: scheduling
        codebase: {{root: code, languages: [python]}}
        extraction: {{types: [function]}}
        models:
          test:
            - {model.format(name=MODELS[0], url=base_url, family="alpha")}
            - {model.format(name=MODELS[1], url=base_url, family="beta")}
          judge:
            - {model.format(name=JUDGE, url=base_url, family="gamma")}
        evaluation:
          sampling: all
          sampleSize: {UNITS}
          parallel: {PARALLEL}
          judge: {{enabled: true}}
          contrastive: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        """))


def _run(pytester: pytest.Pytester, out: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "-p", "no:randomly", "--sb-output", out, *args)


def _scores(pytester: pytest.Pytester, out: str) -> dict[str, Any]:
    """What results.json says of the models (no timings, no run ids)."""
    data: dict[str, Any] = json.loads((pytester.path / out / "results.json").read_text())
    return {key: data[key] for key in ("rankings", "detailed", "comparisons",
                                       "evaluatorDetails")}


# The dry run counts the calls the run makes: tests/engine/test_estimate.py, on the
# engine's plan (it was a scenario of two sessions here); ``--sb-dry-run`` and its closing
# line: tests/plugin/test_output_hygiene.py.


def test_only_the_selected_items_are_called(
        pytester: pytest.Pytester,
        provider: tuple[FakeOpenAIServer, ScriptedProvider]) -> None:
    server, script = provider
    _project(pytester, server.base_url)
    result = _run(pytester, "out", "-k", "pointwise and alpha")
    result.assert_outcomes(passed=UNITS)
    counts = script.counts()
    assert counts["judge/pairwise"] == 0
    assert counts["judge/pointwise"] == UNITS
    assert counts["generation"] == UNITS       # beta's summaries are read by no item


def test_every_call_is_made_once_ahead_of_the_tests_and_alike_with_two_workers(
        pytester: pytest.Pytester,
        provider: tuple[FakeOpenAIServer, ScriptedProvider]) -> None:
    """One plain session (every call once, at the parallel limit), then the same project
    with two workers and a fresh store: the same calls again and the same records. (Two
    tests until 2026-11-29, each starting the same plain session.)"""
    server, script = provider
    _project(pytester, server.base_url)
    _run(pytester, "one").assert_outcomes(passed=ITEMS)
    assert script.counts()["generation"] == GENERATION
    assert script.counts()["judge/pointwise"] == POINTWISE
    assert script.counts()["judge/pairwise"] == PAIRWISE
    assert set(server.successes_by_fingerprint.values()) == {1}  # no prompt paid twice
    # The judge's calls run --sb-parallel at once (one at a time when tests made them);
    # never more than that, in any phase.
    assert server.peak[JUDGE] == PARALLEL
    assert all(server.peak[m] <= PARALLEL for m in MODELS)
    calls = sum(script.counts().values())
    _run(pytester, "two", "-n", "2", "--sb-store", str(Path("two") / "store.sqlite")
         ).assert_outcomes(passed=ITEMS)
    # A fresh store: every call again, each made once, by the controller.
    assert sum(script.counts().values()) == 2 * calls
    assert set(server.successes_by_fingerprint.values()) == {2}
    assert _scores(pytester, "one") == _scores(pytester, "two")


def test_each_phase_reports_its_own_time(pytester: pytest.Pytester,
                                         provider: tuple[FakeOpenAIServer, ScriptedProvider]
                                         ) -> None:
    """Issue 33: "generation ... in 160.8s" for about 10 s of calls: the generation line
    gave the time of every phase's calls. Built-in summaries take no time; the judge's
    calls, one at a time at LATENCY_S each, take the time."""
    server, _ = provider
    write_code(pytester, {"rules.py": "".join(function_source(i) for i in range(UNITS))})
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: phase-times
        codebase: {{root: code, languages: [python]}}
        extraction: {{types: [function]}}
        models:
          test: [{{provider: builtin, model: docstring}}, {{provider: builtin, model: lead}}]
          judge:
            - {{provider: local, model: {JUDGE}, apiEndpoint: '{server.base_url}'}}
        evaluation:
          sampling: all
          sampleSize: {UNITS}
          parallel: 1
          judge: {{enabled: true, pairwise: false}}
          contrastive: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        """))
    result = _run(pytester, "out")
    text = result.stdout.str()
    generation = re.search(r"^summarybench generation: .* in ([\d.]+)s$", text, re.M)
    judged = re.search(r"^summarybench judge/pointwise: (\d+) calls, .* in ([\d.]+)s$",
                       text, re.M)
    assert generation and judged, text
    calls, judge_s = int(judged.group(1)), float(judged.group(2))
    assert calls == UNITS * 2
    assert judge_s >= calls * LATENCY_S * 0.9          # one at a time
    assert float(generation.group(1)) < judge_s / 2, text  # not the judge's time
