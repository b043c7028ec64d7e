"""The two judge evaluators on a hand-made run: items, scores, verdicts mapped back to the
true models, judge errors, and the report section, with scripted judges over HTTP."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators import BUILTIN_EVALUATORS, EvaluationError, load_builtin
from pytest_summarybench.evaluators.judge.calling import parse_judge_error
from pytest_summarybench.evaluators.judge.pairwise import JudgePairwise
from pytest_summarybench.evaluators.judge.pointwise import JudgePointwise
from pytest_summarybench.schemas import ScoreRecord
from tests.evaluators.judge.conftest import ContextFactory, judge_entry
from tests.evaluators.judge.scripted import FLAKY, LENGTH, POSITION, ScriptedJudges
from tests.fakes.openai_server import FakeOpenAIServer

GOOD = "builtin/docstring"
BAD = "builtin/shuffled"
GPT = "local/gpt-4o-mini"
SUMMARIES = {
    GOOD: {"u-discount": "Apply a percentage discount to a price, never below zero.",
           "u-email": "Send the welcome email to a new user through the mailer.",
           "u-area": "Circle area from its radius."},
    BAD: {"u-discount": "Circle area from its radius.",
          "u-email": "Apply a percentage discount to a price, never below zero.",
          "u-area": "Send the welcome email to a new user through the mailer."},
    GPT: {"u-discount": "Computes apply, discount, price, pct.",
          "u-email": "Computes send, welcome, email, user, mailer, body, render, template.",
          "u-area": "Computes circle area radius math."},
}


@pytest.fixture
def scripted() -> ScriptedJudges:
    return ScriptedJudges()


@pytest.fixture
def ctx(make_context: ContextFactory, fake_server: Callable[..., FakeOpenAIServer],
        scripted: ScriptedJudges) -> RunContext:
    server = fake_server(respond=scripted)
    models = [{"provider": "builtin", "model": "docstring"},
              {"provider": "builtin", "model": "shuffled"},
              {"provider": "local", "model": "gpt-4o-mini", "apiEndpoint": server.base_url}]
    priced = {"inputCostPerMillion": 1.0, "outputCostPerMillion": 2.0}
    return make_context(SUMMARIES, [judge_entry(server, POSITION, **priced),
                                    judge_entry(server, LENGTH), judge_entry(server, FLAKY)],
                        test_models=models)


def _judge(name: str) -> str:
    return f"local/{name}"


def _run_all(evaluator: Any, ctx: RunContext) -> list[ScoreRecord]:
    """Evaluate every item the way the plugin does: an EvaluationError becomes a failed
    record with the message as its reason."""
    records: list[ScoreRecord] = []
    for item in evaluator.items(ctx):
        try:
            records.extend(evaluator.evaluate(item, ctx))
        except EvaluationError as exc:
            records.append(ScoreRecord.failed(unit_id=item.unit_id, model_id=item.model_id,
                                              evaluator=item.evaluator, reason=str(exc)))
    return records


def test_registered_in_report_order() -> None:
    names = list(BUILTIN_EVALUATORS)
    assert names[:2] == ["judge/pointwise", "judge/pairwise"]
    assert isinstance(load_builtin("judge/pairwise"), JudgePairwise)


def test_items_exclude_own_family_for_models_and_pairs(ctx: RunContext) -> None:
    point = JudgePointwise().items(ctx)
    assert len(point) == 3 * (3 + 3 + 2)  # gpt-4o-mini is not judged by the gpt judge
    assert not [i for i in point if i.model_id == GPT and i.variant == _judge(LENGTH)]
    assert point[0].test_id == "python-pkg/mod.py-apply_discount-builtin/docstring-" \
                               "judge/pointwise-local/claude-position-judge"
    pairs = JudgePairwise().items(ctx)
    assert {i.model_id for i in pairs} == {f"{GOOD}~{BAD}", f"{GOOD}~{GPT}", f"{BAD}~{GPT}"}
    for item in pairs:
        a, b = item.model_id.split("~")
        assert a < b
        if GPT in (a, b):
            assert item.variant != _judge(LENGTH)
    assert len(pairs) == 3 * (3 + 2 + 2)


def test_pointwise_scores_are_computed_by_us(ctx: RunContext) -> None:
    ev = JudgePointwise()
    item = next(i for i in ev.items(ctx) if i.variant == _judge(LENGTH) and i.model_id == GOOD)
    [record] = ev.evaluate(item, ctx)
    assert record.evaluator == "judge/pointwise" and record.model_id == GOOD
    assert set(record.metrics) == {"weighted_average", "accuracy", "completeness",
                                   "semantic_richness", "abstraction", "conciseness"}
    assert record.metrics["weighted_average"] == pytest.approx(
        sum(0.25 * record.metrics[c] if c in ("accuracy", "semantic_richness") else
            0.20 * record.metrics[c] if c == "completeness" else 0.15 * record.metrics[c]
            for c in ("accuracy", "completeness", "semantic_richness", "abstraction",
                      "conciseness")))
    assert record.details["judge"] == _judge(LENGTH)
    assert record.details["responseFormat"] == "json_object"


def test_pairwise_judges_both_orders_and_maps_back(ctx: RunContext,
                                                   scripted: ScriptedJudges) -> None:
    ev = JudgePairwise()
    item = next(i for i in ev.items(ctx) if i.variant == _judge(POSITION)
                and i.model_id == f"{GOOD}~{BAD}")
    records = ev.evaluate(item, ctx)
    assert len(records) == 4
    by = {(r.details["order"], r.model_id): r for r in records}
    # the position judge always picks A: GOOD in order ab, BAD in order ba
    assert by[("ab", GOOD)].metrics["win"] == 1.0 and by[("ab", BAD)].metrics["win"] == 0.0
    assert by[("ba", BAD)].metrics["win"] == 1.0 and by[("ba", GOOD)].metrics["win"] == 0.0
    assert by[("ba", BAD)].details["position"] == "A"
    assert by[("ba", BAD)].details["winner"] == BAD
    assert by[("ba", GOOD)].details["criteria"]["accuracy"] == "loss"
    assert by[("ab", GOOD)].details["criteriaBreakdown"]["clarity"] == "A"
    assert by[("ab", GOOD)].details["length"] == len(SUMMARIES[GOOD]["u-discount"].split())
    # each call's cost is split over the two records it produced
    assert by[("ab", GOOD)].details["cost"] == by[("ab", BAD)].details["cost"] > 0
    shown = [p.summaries for p in scripted.seen[POSITION] if p.kind == "pairwise"]
    assert shown == [(SUMMARIES[GOOD]["u-discount"], SUMMARIES[BAD]["u-discount"]),
                     (SUMMARIES[BAD]["u-discount"], SUMMARIES[GOOD]["u-discount"])]


def test_missing_summary_is_not_a_judge_error(make_context: ContextFactory,
                                              fake_server: Callable[..., FakeOpenAIServer]
                                              ) -> None:
    server = fake_server(respond=ScriptedJudges())
    ctx = make_context({GOOD: SUMMARIES[GOOD], BAD: SUMMARIES[BAD]},
                       [judge_entry(server, POSITION)], missing=(("u-area", BAD),))
    item = next(i for i in JudgePairwise().items(ctx) if i.unit_id == "u-area")
    with pytest.raises(EvaluationError, match="no summary of builtin/shuffled") as caught:
        JudgePairwise().evaluate(item, ctx)
    assert parse_judge_error(str(caught.value)) is None


def test_skip_reasons_say_how_to_configure_a_judge(make_context: ContextFactory) -> None:
    none = make_context({GOOD: SUMMARIES[GOOD], BAD: SUMMARIES[BAD]}, [])
    reason = JudgePointwise().skip_reason(none)
    assert reason is not None
    assert "models.judge in summarybench.yaml" in reason and "--sb-judge" in reason
    builtin = make_context({GOOD: SUMMARIES[GOOD]}, [{"provider": "builtin",
                                                      "model": "docstring"}])
    assert "built-in summarizers cannot judge" in (JudgePointwise().skip_reason(builtin) or "")
    single = make_context({GOOD: SUMMARIES[GOOD]}, [{"provider": "openai", "model": "gpt-4o"}])
    assert "at least two models" in (JudgePairwise().skip_reason(single) or "")
    own = make_context({GOOD: SUMMARIES[GOOD]}, [{"provider": "openai", "model": "gpt-4o"}],
                       test_models=[{"provider": "openai", "model": "gpt-4o-mini"}])
    reason = JudgePointwise().skip_reason(own) or ""
    assert "openai/gpt-4o (openai) may not judge its own family's models" in reason
    assert "--sb-judge anthropic/" in reason and "openai/gpt-4o)" not in reason
    off = make_context({GOOD: SUMMARIES[GOOD], BAD: SUMMARIES[BAD]},
                       [{"provider": "openai", "model": "gpt-4o"}],
                       overrides={"evaluation.judge.pairwise": False})
    assert JudgePairwise().skip_reason(off) == "disabled (evaluation.judge.pairwise is false)"
    assert JudgePointwise().skip_reason(off) is None


def test_report_sections_audit_the_scripted_judges(ctx: RunContext,
                                                   scripted: ScriptedJudges) -> None:
    pairwise = JudgePairwise()
    records = _run_all(pairwise, ctx)
    section = pairwise.summarize(records, ctx)
    judges = section["judges"]
    assert judges[_judge(POSITION)]["position"]["flipRate"] == 1.0
    assert judges[_judge(POSITION)]["position"]["firstPositionWinRate"] == 1.0
    assert judges[_judge(LENGTH)]["length"]["longerWinRate"] == 1.0
    assert set(section["lengthControlledByJudge"]) == {GOOD, BAD, GPT}
    assert set(section["lengthControlledByJudge"][GPT]) == {_judge(POSITION), _judge(FLAKY)}
    # the flaky judge fails an item when either order was garbled
    flaky_items: dict[tuple[str, frozenset[str]], bool] = defaultdict(bool)
    for p in scripted.seen[FLAKY]:
        if p.kind == "pairwise":
            flaky_items[(p.code, frozenset(p.summaries))] |= p.malformed
    expected = sum(flaky_items.values()) / len(flaky_items)
    assert judges[_judge(FLAKY)]["errorRate"] == pytest.approx(expected)
    assert judges[_judge(FLAKY)]["invalidOutput"] == sum(flaky_items.values())
    # the mean of `win` per model is the spec's win rate
    wins: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.error is None:
            wins[r.model_id].append(r.metrics["win"])
    for model, row in section["table"].items():
        assert row["winRate"] == pytest.approx(sum(wins[model]) / len(wins[model]))
    # the position judge's own table is all ties once both orders count
    assert {m: row[_judge(POSITION)] for m, row in section["winRateByJudge"].items()} == {
        GOOD: 0.5, BAD: 0.5, GPT: 0.5}
    assert set(section["bradleyTerry"]) == {GOOD, BAD, GPT}
    assert section["bradleyTerryFit"]["resamples"] == 200
    assert len(section["criteria"]) == 3 * 5
    assert all(row["winRate"] is not None for row in section["criteria"])
    assert any("swapped places" in n for n in section["notes"])

    pointwise = JudgePointwise()
    point_records = _run_all(pointwise, ctx)
    point = pointwise.summarize(point_records, ctx)
    expected_point = [p.malformed for p in scripted.seen[FLAKY] if p.kind == "pointwise"]
    assert point["judges"][_judge(FLAKY)]["errorRate"] == pytest.approx(
        sum(expected_point) / len(expected_point))
    assert point["judges"][_judge(LENGTH)]["length"]["lengthScoreSpearman"] > 0.7
    assert point["judges"][_judge(POSITION)]["meanScore"] == 3.0
    good = point["models"][GOOD]
    assert good["ciLow"] <= good["mean"] <= good["ciHigh"]
    assert {row["criterion"] for row in point["criteria"] if row["model"] == GOOD} == {
        "accuracy", "completeness", "semantic_richness", "abstraction", "conciseness"}
    assert point["byJudge"][GPT].keys() == {_judge(POSITION), _judge(FLAKY)}
    assert point["selection"]["assignments"][GPT]["excluded"] == {
        _judge(LENGTH): f"same family as {GPT} (openai)"}
    failed = [r for r in point_records if r.error]
    assert all("raw output: " in (r.error or "") for r in failed)
