"""Readable reports (issue 21, items 8 and 9): every count says what it counts, alike in
the terminal, the Markdown and the HTML; win-loss-tie records are labelled; charts with
no data are left out; every language cell has its n, low n marked; the judges' details
are sections with plain headers; the key findings (judge biases, agreement, validity
flags) come first everywhere; no "best" where the top group ties."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from synthetic_report import make_inputs, make_report

from pytest_summarybench.aggregate import build_report
from pytest_summarybench.report.charts import language_heatmap
from pytest_summarybench.report.render import render_html, render_markdown
from pytest_summarybench.report.terminal import terminal_lines
from pytest_summarybench.report.wording import COLUMNS_LEGEND, record_text
from pytest_summarybench.schemas import BenchmarkReport, ScoreRecord
from pytest_summarybench.schemas.report import (
    ModelComparison,
    PairwiseRecord,
    ValiditySection,
)

POSITION, LENGTH = "local/position-judge", "local/length-judge"

#: The shape ``judge/pairwise`` summarizes into (evaluators/judge/pairwise.py), small.
PAIRWISE: dict[str, Any] = {
    "promptVersion": "judge-1-test",
    "table": {"openai/alpha": {"wins": 20, "losses": 8, "ties": 2, "total": 30,
                               "winRate": 0.7},
              "anthropic/beta": {"wins": 8, "losses": 20, "ties": 2, "total": 30,
                                 "winRate": 0.3}},
    "bradleyTerry": {"openai/alpha": {"strength": 0.4, "ciLow": 0.1, "ciHigh": 0.7},
                     "anthropic/beta": {"strength": -0.4, "ciLow": -0.7, "ciHigh": -0.1}},
    "bradleyTerryFit": {"estimator": "mle", "level": 0.95, "resamples": 200},
    "lengthControlled": {"openai/alpha": {"verdicts": 30, "winRate": 0.7,
                                          "lengthControlledWinRate": 0.66}},
    "headToHead": {"anthropic/beta~openai/alpha": {"anthropic/beta": 8, "openai/alpha": 20,
                                                   "ties": 2}},
    "criteria": [{"model": "openai/alpha", "criterion": "accuracy", "wins": 20,
                  "losses": 8, "ties": 2, "winRate": 0.7}],
    "judges": {
        POSITION: {"items": 15, "errors": 0, "invalidOutput": 0, "callFailed": 0,
                   "errorRate": 0.0,
                   "position": {"verdicts": 30, "swappedPairs": 15, "flips": 15,
                                "flipRate": 1.0, "firstPositionWinRate": 1.0,
                                "tieRate": 0.0, "positionCoefficient": 3.4},
                   "length": {"comparedLengths": 30, "longerWinRate": 0.5,
                              "lengthVerdictCorrelation": None, "lengthCoefficient": 0.1,
                              "lengthScale": 3.0}},
        LENGTH: {"items": 15, "errors": 3, "invalidOutput": 3, "callFailed": 0,
                 "errorRate": 0.2,
                 "position": {"verdicts": 24, "swappedPairs": 12, "flips": 0,
                              "flipRate": 0.0, "firstPositionWinRate": 0.5, "tieRate": 0.1},
                 "length": {"comparedLengths": 20, "longerWinRate": 1.0,
                            "lengthVerdictCorrelation": 0.85}}},
    "winRateByJudge": {"openai/alpha": {POSITION: 0.5, LENGTH: 0.9},
                       "anthropic/beta": {POSITION: 0.5}},
    "agreement": {"weights": "none",
                  "cohen": [{"judges": [POSITION, LENGTH], "items": 12, "kappa": 0.0}],
                  "fleiss": {"items": 0, "raters": 0, "kappa": None}},
    "selection": {"minJudges": 2, "maxJudges": 3, "allowFewer": True,
                  "families": {"openai/alpha": ["openai"], "validate/l1-twin": ["builtin"]},
                  "assignments": {
                      "anthropic/beta~openai/alpha": {
                          "judges": [POSITION, LENGTH], "eligible": 2,
                          "excluded": {"local/gpt-judge": "same family as openai/alpha "
                                                          "(openai)"},
                          "shortfall": None}},
                  "shortfalls": []},
    "otherErrors": [],
    "notes": [f"{POSITION} changed 100% of its verdicts when the two summaries swapped "
              "places (position bias); the swap cancels it in the win rates",
              f"{LENGTH} preferred the longer summary 100% of the time (length-verdict "
              "correlation +0.85); see the length-controlled win rates"],
}


def _with_details(details: dict[str, dict[str, Any]], n_units: int = 30) -> BenchmarkReport:
    inputs = make_inputs(n_units)
    inputs.evaluator_details = details
    return build_report(inputs)


@pytest.fixture(scope="module")
def judged() -> BenchmarkReport:
    return _with_details({"judge/pairwise": PAIRWISE})


# -- counts -----------------------------------------------------------------------------

def test_every_rendering_says_what_units_and_items_count() -> None:
    report = make_report(n_units=12)
    meta = report.metadata
    assert (meta.scored_items, meta.error_items) == (12 * 3 * 3, 0)
    units = "48 units extracted, 12 sampled for this run, 12 scored for every model"
    terminal = "\n".join(terminal_lines(report))
    markdown, page = render_markdown(report), render_html(report)
    for text in (terminal, markdown, page):
        assert units in text
        assert "108 scored, 0 ended in an error" in text
    assert COLUMNS_LEGEND in markdown and COLUMNS_LEGEND in page
    assert "units: sampled units with at least one scored item for the model" in terminal
    header = next(line for line in terminal_lines(report) if line.startswith("rank"))
    assert header.split()[-3:] == ["units", "items", "errors"]
    assert "| Units | Items | Errors |" in markdown
    assert "<th class=\"n\">Units</th><th class=\"n\">Items</th>" in page


def test_sampled_units_without_a_score_are_explained() -> None:
    inputs = make_inputs(12)
    unscored = {"u000", "u001"}
    inputs.records = [r for r in inputs.records if r.unit_id not in unscored]
    line = "\n".join(terminal_lines(build_report(inputs)))
    assert "12 sampled for this run, 10 scored for every model; 2 sampled units have no " \
           "score" in line


def test_a_pairwise_item_counts_once_per_model_whatever_its_records() -> None:
    """A pairwise test records one score per model and order: four records, one item for
    each of its two models."""
    inputs = make_inputs(6)
    node = "bench.py::test[u000-a~b-judge/pairwise-j1]"
    for order in ("ab", "ba"):
        for model in ("openai/alpha", "anthropic/beta"):
            inputs.records.append(ScoreRecord(
                unit_id="u000", model_id=model, evaluator="judge/pairwise", nodeid=node,
                metrics={"win": 1.0 if model == "openai/alpha" else 0.0},
                details={"judge": "j1", "order": order,
                         "pair": "anthropic/beta~openai/alpha"}))
    report = build_report(inputs)
    items = {r.model_id: r.scored_items for r in report.rankings}
    assert items == {"openai/alpha": 6 * 3 + 1, "anthropic/beta": 6 * 3 + 1,
                     "local/gamma": 6 * 3}
    assert report.metadata.scored_items == 6 * 3 * 3 + 1


# -- wins, losses and ties ----------------------------------------------------------------

def test_records_are_labelled_in_every_rendering() -> None:
    report = make_report()
    c = report.comparisons[0]
    text = record_text(c)
    r = c.pairwise_record
    assert text == (f"{c.model_a}: {r.a_wins} wins, {r.b_wins} losses, {r.ties} ties against "
                    f"{c.model_b} on {c.units} units (per-unit scores)")
    assert any(line.endswith(text) for line in terminal_lines(report))
    assert f"- **Pairwise record**: {text}" in render_markdown(report).replace("\\", "")
    assert f"<strong>Pairwise record</strong>: {text}" in render_html(report)
    judge = ModelComparison(model_a="a", model_b="b", winner="a", score_difference=0.1,
                            significant=True, units=10, pairwise_source="judge/pairwise",
                            pairwise_record=PairwiseRecord(a_wins=24, b_wins=1, ties=0))
    assert record_text(judge) == ("a: 24 wins, 1 loss, 0 ties in 25 pairwise judge verdicts "
                                  "against b (10 units)")


# -- charts and costs ---------------------------------------------------------------------

def _priced(report: BenchmarkReport, price: float | None) -> BenchmarkReport:
    for c in report.costs.by_model.values():
        c.per_1k_summaries = c.total = c.cost_per_quality_point = price
        c.by_phase = {"generation": price}
        c.unknown_price_calls = 30 if price is None else 0
    report.costs.total = price
    return report


@pytest.mark.parametrize(("price", "line"), [
    (None, "Costs unknown: no model's calls have a known price (90 calls without a price)"),
    (0.0, "Costs: every call was free ($0.00 for every model)"),
])
def test_no_cost_chart_or_table_without_costs(price: float | None, line: str) -> None:
    report = _priced(make_report(), price)
    page, markdown = render_html(report), render_markdown(report)
    assert 'id="chart-cost"' not in page and page.count("<svg") == 2
    assert line in html.unescape(page) and line in markdown
    assert "Cost/1K summaries" not in page and "Cost/1K summaries" not in markdown


def test_costs_that_are_known_keep_their_chart_and_table() -> None:
    page = render_html(make_report())
    assert 'id="chart-cost"' in page and "Cost/1K summaries" in page


def test_every_heatmap_cell_has_its_n_and_low_n_is_marked() -> None:
    small = make_report(n_units=9)  # three units per language
    chart = language_heatmap(small)
    assert chart is not None
    assert {c.n for c in chart.cells} == {3} and all(c.low_n for c in chart.cells)
    assert {c.n_text for c in chart.cells} == {"n=3*"}
    assert small.detailed.by_language["go"].units_by_model == {
        "anthropic/beta": 3, "local/gamma": 3, "openai/alpha": 3}
    page = render_html(small)
    assert page.count('stroke-dasharray="4 3"') == 9
    assert "Faded cells with a dashed border and * have n &lt; 5" in page
    assert "| Python | 3\\* |" in render_markdown(small)

    big = language_heatmap(make_report(n_units=30))
    assert big is not None and {c.n_text for c in big.cells} == {"n=10"}
    page = render_html(make_report(n_units=30))
    assert "n=10" in page and "Faded cells" not in page


# -- evaluator details ----------------------------------------------------------------------

def test_judge_details_are_sections_with_plain_headers(judged: BenchmarkReport) -> None:
    page, markdown = render_html(judged), render_markdown(judged)
    for text in (page, markdown):
        assert "Evaluator details: Judges" in text
        for internal in ("bradleyTerryFit", "selection.families", "positionCoefficient",
                         "validate/l1-twin", "null", "kappa: None"):
            assert internal not in text, internal
    assert "<h3>Pairwise judges: errors and biases</h3>" in page
    row = re.search(rf"<tr><td>{POSITION}</td>(.*?)</tr>", page)
    assert row is not None
    assert row.group(1) == ('<td>15</td><td>0% (0)</td><td>100% (15 of 15 pairs)</td>'
                            '<td>100%</td><td>50%</td><td>not measured</td>')
    assert "local/gpt-judge does not judge anthropic/beta vs openai/alpha: same family as " \
           "openai/alpha (openai)" in page
    assert "no better than chance" in page
    # Every table of the section stays narrow enough to read without scrolling sideways.
    section = page[page.index("Evaluator details: Judges"):]
    for header in re.findall(r"<thead><tr>(.*?)</tr></thead>", section):
        assert header.count("<th>") <= 7


def test_details_of_another_shape_fall_back_to_words() -> None:
    report = _with_details({"custom/thing": {"meanLatency": 0.5, "lastError": None,
                                             "byQueryType": {"what": {"mrr": 0.5}}}})
    markdown = render_markdown(report)
    assert "## Evaluator details: custom" in markdown
    assert "- mean latency: 0.500" in markdown and "- last error: not measured" in markdown
    assert "### custom/thing: by query type" in markdown


# -- key findings ---------------------------------------------------------------------------

def test_key_findings_lead_every_rendering(judged: BenchmarkReport) -> None:
    flip = f"judge/pairwise: {POSITION} changed 100% of its verdicts"
    markdown, page = render_markdown(judged), render_html(judged)
    assert markdown.index("## Key findings") < markdown.index("## Overview")
    assert markdown.index(flip) < markdown.index("## Overview")
    assert page.index('<section id="findings">') < page.index('id="overview"')
    assert f'<li class="warn">{flip}' in page
    lines = terminal_lines(judged)
    table_end = next(i for i, line in enumerate(lines) if line.startswith("group:"))
    found = [i for i, line in enumerate(lines) if flip in line]
    assert found and found[0] > table_end and lines[found[0]].startswith("  ! ")
    assert any("preferred the longer summary 100%" in line for line in lines)
    assert any("judge agreement on pairwise verdicts: Cohen's kappa as low as +0.00 (no "
               "better than chance)" in line for line in lines)


def test_validity_flags_are_findings_at_the_top() -> None:
    report = make_report()
    report.validity = ValiditySection(flagged=[f"judge {POSITION}: 100% of its ladder "
                                                "verdicts flipped"])
    markdown = render_markdown(report)
    top = markdown[:markdown.index("## Overview")]
    assert f"**Distrust judge {POSITION}: 100% of its ladder verdicts flipped**" in top
    lines = terminal_lines(report)
    # The terminal's DISTRUST lines stay with the validity table; the findings point there.
    assert "  ! instrument validity: 1 DISTRUST flag, listed after the validity table " \
           "below" in lines


def test_unbiased_judges_are_a_finding_too() -> None:
    calm = {k: v for k, v in PAIRWISE.items() if k != "notes"}
    calm["judges"] = {LENGTH: {**PAIRWISE["judges"][LENGTH], "length": {
        "longerWinRate": 0.5, "lengthVerdictCorrelation": 0.1}}}
    lines = terminal_lines(_with_details({"judge/pairwise": calm}))
    assert any("judge/pairwise: no judge showed position or length bias" in line
               for line in lines)


# -- no single best -------------------------------------------------------------------------

def test_no_best_when_the_top_scores_are_identical() -> None:
    inputs = make_inputs(12)
    twin = "openai/alpha-twin"
    inputs.records = [r for r in inputs.records if r.model_id != "anthropic/beta"]
    inputs.model_ids = sorted([twin, "local/gamma", "openai/alpha"])
    inputs.records += [r.model_copy(update={"model_id": twin,
                                            "nodeid": r.nodeid.replace("alpha", "twin")})
                       for r in inputs.records if r.model_id == "openai/alpha"]
    report = build_report(inputs)
    (rec,) = [r for r in report.recommendations if r.kind == "no_single_best"]
    assert "openai/alpha and openai/alpha-twin are tied: the same overall score" in rec.text
    assert not [r for r in report.recommendations if r.kind == "best_overall"]
    for text in (render_markdown(report), render_html(report),
                 "\n".join(terminal_lines(report))):
        assert "Best overall" not in text
        assert "No single best" in text


def test_a_clear_leader_is_still_best_overall() -> None:
    inputs = make_inputs(30)
    inputs.records = [r for r in inputs.records if r.model_id != "anthropic/beta"]
    inputs.model_ids = [m for m in inputs.model_ids if m != "anthropic/beta"]
    report = build_report(inputs)
    assert report.recommendations[0].kind == "best_overall"
    assert "- Best overall: openai/alpha" in render_markdown(report)
