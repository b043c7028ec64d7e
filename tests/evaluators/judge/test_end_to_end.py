"""End to end: ``pytest -p summarybench`` on a small codebase with three scripted judges
on the local fake server (see ``scripted.py``): one that always prefers position A, one
that always prefers the longer summary, one that garbles a third of its answers.

The report must show a flip rate of 100% for the first, a strong length correlation for
the second and exactly the error rate the third's script implies; the ranking must stay
right where the truth is known (the shuffled negative control below the true docstrings;
the position judge's bias cancelled by the swap); no model may be judged by its own
family; and a re-run with two xdist workers must call no model but to ask again what could
not be used, and rank identically.
"""

from __future__ import annotations

import json
import textwrap
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from tests.evaluators.judge.scripted import (
    FLAKY,
    LENGTH,
    MODEL_UNDER_TEST,
    POSITION,
    ScriptedJudges,
)
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.project import write_bench_module, write_code

CODE = {
    "shop/pricing.py": '''
        def apply_discount(price: float, pct: float) -> float:
            """Apply a percentage discount to the price, never going below zero."""
            cut = price * pct / 100
            return max(price - cut, 0.0)
        ''',
    "mail/welcome.py": '''
        def send_welcome_email(user, mailer):
            """Send the welcome email to a user through the mailer."""
            body = render_template("welcome", user)
            mailer.send(user.email, body)
            return body
        ''',
    "geometry/shapes.py": '''
        def circle_area(radius: float) -> float:
            """Area of a circle from its radius."""
            return math.pi * radius ** 2
        ''',
    "config/parser.py": '''
        def parse_config_line(line: str) -> tuple[str, str]:
            """Parse one key value line of a config file."""
            key, value = line.split("=", 1)
            return key.strip(), value.strip()
        ''',
}

DOCSTRING, SHUFFLED = "builtin/docstring", "builtin/shuffled"
GPT = f"local/{MODEL_UNDER_TEST}"


def _project(pytester: pytest.Pytester, server: FakeOpenAIServer) -> None:
    write_code(pytester, CODE)
    write_bench_module(pytester)
    url = server.base_url
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: judge-e2e
        codebase:
          root: code
          languages: [python]
        extraction:
          types: [function]
          minLines: 2
        models:
          test:
            - {{provider: builtin, model: docstring}}
            - {{provider: builtin, model: shuffled}}
            - {{provider: local, model: {MODEL_UNDER_TEST}, apiEndpoint: "{url}"}}
          judge:
            - {{provider: local, model: {POSITION}, apiEndpoint: "{url}"}}
            - {{provider: local, model: {LENGTH}, apiEndpoint: "{url}"}}
            - {{provider: local, model: {FLAKY}, apiEndpoint: "{url}"}}
        evaluation:
          sampling: all
          judge:
            bootstrapSamples: 200
          contrastive: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        """))


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", *args)
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    return result, data


def _judge(name: str) -> str:
    return f"local/{name}"


def test_scripted_judges_end_to_end(pytester: pytest.Pytester,
                                    fake_server: Callable[..., FakeOpenAIServer]) -> None:
    scripted = ScriptedJudges()
    server = fake_server(respond=scripted)
    _project(pytester, server)
    result, data = _run(pytester)
    outcomes = result.parseoutcomes()

    # -- every judged item is a test; judge errors fail their test and the run goes on --
    pointwise_items = 4 * (2 * 3 + 1 * 2)  # the gpt judge never scores gpt-4o-mini
    pairwise_items = 4 * (1 * 3 + 2 * 2)  # nor any pair that has gpt-4o-mini in it
    assert outcomes["passed"] + outcomes.get("failed", 0) == pointwise_items + pairwise_items
    point_seen = [p for p in scripted.seen[FLAKY] if p.kind == "pointwise"]
    assert len(point_seen) == 4 * 3
    point_errors = sum(p.malformed for p in point_seen)
    pair_items: dict[tuple[str, frozenset[str]], bool] = defaultdict(bool)
    for p in scripted.seen[FLAKY]:
        if p.kind == "pairwise":
            pair_items[(p.code, frozenset(p.summaries))] |= p.malformed
    assert len(pair_items) == 4 * 3
    pair_errors = sum(pair_items.values())
    assert outcomes.get("failed", 0) == point_errors + pair_errors > 0
    result.stdout.fnmatch_lines([
        f"*judge/p*wise could not score *: judge {_judge(FLAKY)} invalid_output: "
        f"no valid verdict in 2 answers*raw output: *"])
    assert scripted.retries[FLAKY] >= point_errors + pair_errors

    details = data["evaluatorDetails"]
    pairwise, pointwise = details["judge/pairwise"], details["judge/pointwise"]

    # -- the position judge: flips every verdict, and the swap cancels its bias ---------
    position = pairwise["judges"][_judge(POSITION)]
    assert position["position"]["flipRate"] == 1.0
    assert position["position"]["firstPositionWinRate"] == 1.0
    assert {row[_judge(POSITION)] for row in pairwise["winRateByJudge"].values()} == {0.5}

    # -- the length judge: a strong length correlation, in both evaluations -------------
    length = pairwise["judges"][_judge(LENGTH)]["length"]
    assert length["longerWinRate"] == 1.0
    assert length["lengthVerdictCorrelation"] > 0.5
    assert length["lengthCoefficient"] > 1.0
    assert pointwise["judges"][_judge(LENGTH)]["length"]["lengthScoreSpearman"] > 0.8

    # -- the flaky judge: exactly the error rate its script implies ----------------------
    flaky_pair = pairwise["judges"][_judge(FLAKY)]
    assert flaky_pair["errorRate"] == pytest.approx(pair_errors / len(pair_items))
    assert flaky_pair["invalidOutput"] == pair_errors and flaky_pair["callFailed"] == 0
    flaky_point = pointwise["judges"][_judge(FLAKY)]
    assert flaky_point["errorRate"] == pytest.approx(point_errors / len(point_seen))
    assert 0.1 < flaky_point["errorRate"] < 0.6
    for other in (POSITION, LENGTH):
        assert pointwise["judges"][_judge(other)]["errorRate"] == 0.0

    # -- rankings stay right where the truth is known -----------------------------------
    competent = {m: row[_judge(FLAKY)] for m, row in pairwise["winRateByJudge"].items()}
    assert min(competent, key=lambda m: competent[m]) == SHUFFLED
    ranking = [r["modelId"] for r in data["rankings"]]
    assert ranking.index(DOCSTRING) < ranking.index(SHUFFLED)
    strengths = pairwise["bradleyTerry"]
    assert strengths[DOCSTRING]["strength"] > strengths[SHUFFLED]["strength"]
    for row in strengths.values():
        assert row["ciLow"] <= row["strength"] <= row["ciHigh"]
    table = pairwise["table"]
    assert sum(r["wins"] for r in table.values()) == sum(r["losses"] for r in table.values())

    # -- no model is judged by its own family ---------------------------------------------
    gpt_texts = {p.summaries[0] for p in scripted.seen[FLAKY] if p.kind == "pointwise"
                 and p.summaries[0].startswith("Computes ")}
    assert len(gpt_texts) == 4
    for p in scripted.seen[LENGTH]:
        assert not gpt_texts & set(p.summaries)
    assert pointwise["selection"]["assignments"][GPT]["judges"] == [
        _judge(POSITION), _judge(FLAKY)]
    assert pointwise["selection"]["shortfalls"] == []

    # -- a re-run with two workers is served from the cache and ranks the same; only the
    # flaky judge's unreadable answers (two per failed item: the ask and the re-ask) are
    # asked again, since an answer that could not be used is no final answer -----------
    calls = server.chat_requests
    again, data2 = _run(pytester, "-n", "2")
    assert again.parseoutcomes() == outcomes
    assert server.chat_requests == calls + 2 * (point_errors + pair_errors)
    assert data2["rankings"] == data["rankings"]
    assert data2["evaluatorDetails"] == data["evaluatorDetails"]
