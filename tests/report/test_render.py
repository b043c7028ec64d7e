"""The report object and its renderings on a synthetic run: the JSON shape
(docs/reports.md#the-results-file), the Markdown sections, HTML escaping of untrusted text,
costs, patterns, recommendations."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from synthetic_report import MODELS, make_report, make_units

from pytest_summarybench.aggregate.patterns import detect
from pytest_summarybench.report.details import detail_blocks
from pytest_summarybench.report.render import render, render_html, render_markdown
from pytest_summarybench.report.view import md
from pytest_summarybench.schemas import BenchmarkReport


@pytest.fixture(scope="module")
def report() -> BenchmarkReport:
    return make_report()


def test_json_has_the_full_spec_shape_and_round_trips(report: BenchmarkReport) -> None:
    data = json.loads(render(report, "json"))
    assert set(data) >= {"metadata", "rankings", "detailed", "comparisons", "statistics",
                         "failures", "costs", "evaluatorDetails", "recommendations"}
    assert set(data["metadata"]) >= {"benchmarkId", "name", "runDate", "duration",
                                     "codebase", "configuration"}
    assert set(data["detailed"]) == {"byModel", "byLanguage", "byCodeType"}
    assert set(data["statistics"]) >= {"significanceTests", "correlations"}
    assert set(data["failures"]) >= {"byModel", "commonPatterns"}
    assert set(data["costs"]) == {"byModel", "total"}
    ranking = data["rankings"][0]
    assert set(ranking) >= {"rank", "modelId", "modelName", "overallScore", "scores"}
    assert set(data["comparisons"][0]) >= {"modelA", "modelB", "winner", "scoreDifference",
                                           "significant", "pairwiseRecord", "strengthsA",
                                           "strengthsB"}
    assert set(data["statistics"]["significanceTests"][0]) >= {
        "modelA", "modelB", "metric", "meanDifference", "pValue", "significant",
        "confidenceInterval"}
    assert set(data["failures"]["byModel"]["local/gamma"]) >= {
        "modelId", "weakestMetric", "weakestLanguage", "weakestCodeType", "examples"}
    assert BenchmarkReport.model_validate(data) == report


def test_ranking_statistics_and_family_status(report: BenchmarkReport) -> None:
    assert [r.model_id for r in report.rankings][0] == "openai/alpha"
    assert report.metadata.families_run == ["judge", "contrastive", "retrieval"]
    assert report.metadata.families_skipped == {"downstream": "disabled in the configuration"}
    for r in report.rankings:
        assert r.units == 30 and r.confidence_interval is not None
        low, high = r.confidence_interval
        assert low <= r.overall_score <= high
    tests = report.statistics.significance_tests
    assert {t.metric for t in tests} == {"overall", "judge", "contrastive", "retrieval"}
    assert all(t.minimum_detectable_difference and t.units == 30 for t in tests)
    # gamma is clearly weaker; the group letters must separate it from the leader.
    groups = report.statistics.significance_groups
    assert not set(groups["openai/alpha"]) & set(groups["local/gamma"])
    corr = report.statistics.correlations
    assert corr["judge"]["contrastive"] == corr["contrastive"]["judge"] > 0.5
    assert set(report.statistics.correlations_by_model) == set(MODELS)
    within = report.statistics.unit_correlations["judge"]["contrastive"]
    assert -1.0 <= within <= 1.0


def test_costs_by_phase_per_1k_and_per_quality_point(report: BenchmarkReport) -> None:
    alpha = report.costs.by_model["openai/alpha"]
    # 30 summaries at $0.004, and 30 judge records at $0.002 each.
    assert alpha.by_phase == pytest.approx({"generation": 0.12, "judge": 0.06})
    assert alpha.total == pytest.approx(0.18)
    assert alpha.per_1k_summaries == pytest.approx(6.0)
    overall = report.rankings[0].overall_score
    assert alpha.cost_per_quality_point == pytest.approx(6.0 / (overall * 100))
    assert report.costs.total == pytest.approx(sum(c * 30 * 1.5 for _, c in MODELS.values()))


def test_recommendations_follow_the_data(report: BenchmarkReport) -> None:
    recs = {r.kind: r for r in report.recommendations}
    # alpha and beta share a significance group: no single best, both named
    assert "best_overall" not in recs
    assert recs["no_single_best"].model_id == report.rankings[0].model_id
    # Unequal scores the test cannot tell apart: "not significant", never "tied".
    assert recs["no_single_best"].text.startswith("openai/alpha (0.735) is ahead of "
                                                  "anthropic/beta (0.718, p = ")
    assert "not significant" in recs["no_single_best"].text
    assert "tied" not in recs["no_single_best"].text
    cheapest = min(report.costs.by_model.items(),
                   key=lambda kv: kv[1].cost_per_quality_point or 1e9)[0]
    assert recs["best_value"].model_id == cheapest == "local/gamma"
    assert recs["budget"].model_id == "local/gamma"


def test_failure_analysis_is_computed_from_summaries(report: BenchmarkReport) -> None:
    failures = report.failures
    assert failures.low_scores > 0
    generic = next(p for p in failures.common_patterns if p.category == "generic")
    assert generic.share_of_low_scores > 0.5 and "local/gamma" in generic.models
    gamma = failures.by_model["local/gamma"]
    assert gamma.weakest_metric and gamma.weakest_language in {"python", "go", "typescript"}
    example = gamma.examples[0]
    assert example.summary and example.issue and example.category
    assert example.score is not None and example.score < failures.low_score_threshold


@pytest.mark.parametrize(("summary", "category"), [
    ("Handles various operations on the data.", "generic"),
    ("Loops over the rows and iterates each index, then returns the result of add.",
     "implementation_focus"),
    ("Computes the ledger balance for a row.", "missing_side_effects"),
    ("Saves the ledger row.", "missing_error_handling"),
    ("Calls update_record_0 to save it and raises on errors.", "name_leakage"),
    ("Update record 0 in the ledger.", "copied_docstring"),
    ("Renders the weather forecast widget.", "unrelated"),
    ("Saves.", "too_short"),
])
def test_pattern_detectors(summary: str, category: str) -> None:
    unit = make_units(1)[0]
    assert category in detect(summary, unit)


def test_a_good_summary_shows_no_pattern() -> None:
    unit = make_units(1)[0]
    assert detect("Persist a ledger row to the database and raise a ValueError when "
                  "the row is invalid.", unit) == []


def test_markdown_follows_the_sample_and_escapes_untrusted_text(
        report: BenchmarkReport) -> None:
    text = render_markdown(report)
    headings = re.findall(r"^##+ (.*)$", text, re.M)
    order = ["Overview", "Rankings", "Head-to-Head: Top 2 Models", "By Language",
             "Failure Analysis", "Common Failure Patterns", "Model-Specific Weaknesses",
             "Cost Analysis", "Recommendations"]
    assert [h for h in headings if h in order] == order
    assert "| Rank | Model | Overall |" in text
    assert "- **Skipped downstream**: disabled in the configuration" in text
    assert "**No single best**: openai/alpha (0.735) is ahead of anthropic/beta" in text
    assert "Best overall" not in text
    assert "## Evaluator details: Judges" in text
    # Every "<" of untrusted text is backslash-escaped, so Markdown shows it literally.
    assert not re.search(r"(?<!\\)<", text)
    assert "\\<script\\>window.\\_\\_xss" in text
    assert "Synthetic \\<Bench\\>" in text


def test_markdown_escape() -> None:
    assert md("a|b <i>x</i>\n*y*") == "a\\|b \\<i\\>x\\</i\\> \\*y\\*"


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def test_html_is_self_contained_and_escapes_payloads(report: BenchmarkReport) -> None:
    import base64
    import hashlib

    page = render_html(report)
    parsed = _Elements()
    parsed.feed(page)
    assert parsed.tags.count("script") == 1 and "img" not in parsed.tags
    assert not [a for a in parsed.attrs if a[0].startswith("on")]
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in page
    assert "Synthetic &lt;Bench&gt;" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert set(re.findall(r"https?://[^\"' ]+", page)) == {"http://www.w3.org/2000/svg"}
    digest = base64.b64encode(hashlib.sha256(parsed.scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page
    for anchor in ("chart-scores", "chart-cost", "chart-languages", "rankings-table"):
        assert f'id="{anchor}"' in page
    assert page.count("<svg") == 3
    assert "<script>window" not in page and "onerror=\"window" not in page


def test_evaluator_details_render_generically() -> None:
    blocks = detail_blocks({
        "queries": 12, "byQueryType": {"what": {"mrr": 0.5, "n": 3}, "how": {"mrr": 0.25}},
        "audit": {"position": {"first": 0.6}}, "rows": [{"a": 1}],
        "notes": ["judge x is biased"], "errors": [],
        "agreement": {"fleiss": 0.4, "cohen": [{"kappa": 0.1}]}})
    assert blocks[0].items == [("queries", "12"), ("errors", "none")]
    table = blocks[1]
    assert (table.title, table.headers) == ("byQueryType", ["key", "mrr", "n"])
    assert table.rows == [["what", "0.500", "3"], ["how", "0.250", ""]]
    assert (blocks[2].title, blocks[2].headers) == ("audit", ["key", "first"])
    assert blocks[3].rows == [["1", "1"]]
    assert (blocks[4].title, blocks[4].items) == ("notes", [("", "judge x is biased")])
    assert (blocks[5].title, blocks[5].items) == ("agreement", [("fleiss", "0.400")])
    assert (blocks[6].title, blocks[6].rows) == ("agreement.cohen", [["1", "0.100"]])


def test_a_model_with_no_scored_unit_shows_no_score_anywhere() -> None:
    """Its JSON overallScore stays the spec's number (0.0, with units 0), but no table,
    chart or comparison prints a 0.000 that nothing computed."""
    from synthetic_report import make_inputs

    from pytest_summarybench.aggregate import build_report
    from pytest_summarybench.report.charts import cost_quality, score_bars
    from pytest_summarybench.report.terminal import terminal_lines
    from pytest_summarybench.schemas import ScoreRecord

    inputs = make_inputs(n_units=12)
    broken = "local/broken"
    inputs.model_ids = sorted([*inputs.model_ids, broken])
    inputs.records += [
        ScoreRecord(unit_id=u.id, model_id=broken, evaluator="contrastive/embedding",
                    nodeid=f"bench.py::test[{u.id}-{broken}-c]",
                    error="provider error: 503 Service Unavailable")
        for u in inputs.units]
    report = build_report(inputs)
    last = report.rankings[-1]
    assert (last.model_id, last.units, last.scored_items, last.errors) == (broken, 0, 0, 12)
    assert last.measured_overall is None and last.overall_score == 0.0
    assert report.to_json_dict()["rankings"][-1]["overallScore"] == 0.0
    assert report.rankings[0].measured_overall == report.rankings[0].overall_score > 0

    # (the units line names it too: no unit scored for it)
    row = next(line for line in terminal_lines(report)
               if broken in line and not line.startswith("configuration"))
    assert "0.000" not in row and row.split()[2] == "-"
    md_row = next(line for line in render_markdown(report).splitlines()
                  if line.startswith("|") and broken in line)
    assert md_row.split("|")[3].strip() == "-"
    html_row = next(line for line in render_html(report).splitlines()
                    if line.startswith("<tr>") and f"<td>{broken}</td>" in line)
    assert '<td class="n">-</td>' in html_row and "0.000" not in html_row
    bar = next(b for b in score_bars(report).bars if b.label == broken)
    assert bar.score is None and bar.width == 0
    scatter = cost_quality(report)
    assert broken not in {p.label for p in scatter.points}
    assert f"No score for: {broken}" in scatter.note
    assert all(broken not in (c.model_a, c.model_b) for c in report.comparisons)
    assert all(r.model_id != broken for r in report.recommendations)


def test_retrieval_reference_rows_render_beside_the_models() -> None:
    from pytest_summarybench.report.terminal import reference_lines

    report = make_report()
    vs = {"mrrDifference": 0.096, "interval": [0.041, 0.151], "pValue": 0.001,
          "significant": True, "units": 50}
    report.evaluator_details["retrieval/embedding"] = {
        "kValues": [1, 5], "overall": {"builtin/docstring": {"mrr": 0.603}},
        "references": {
            "code": {"precision@1": 0.38, "precision@5": 0.74, "mrr": 0.531, "queries": 250,
                     "units": 50},
            "code+summary": {"builtin/docstring": {"mrr": 0.628}, "<b>x</b>": {"mrr": 0.1}},
            "versusCode": {"builtin/docstring": {"summary": None, "code+summary": vs}}}}
    lines = reference_lines(report)
    assert lines[0].startswith("retrieval: summaries against indexing the code itself")
    assert any("builtin/docstring" in ln and "0.628" in ln and "+0.096 [+0.041, +0.151]" in ln
               and "not measured" in ln for ln in lines)
    assert "Code alone (the reference, not ranked): MRR 0.531, P@1 0.380, P@5 0.740" in lines[-1]
    markdown = render_markdown(report)
    assert "### Retrieval: summaries against indexing the code itself" in markdown
    assert "| builtin/docstring | 0.603 | not measured | 0.628 | +0.096 \\[+0.041, +0.151\\] |" \
        in markdown
    html = render_html(report)
    assert "Retrieval: summaries against indexing the code itself" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    # Reference rows are not models: the ranking is unchanged.
    assert [r.model_id for r in report.rankings] == [r.model_id for r in make_report().rankings]


def test_no_value_or_budget_advice_when_every_model_is_free() -> None:
    # A new user's pass: the default run (built-in models, free) advised "Best value:
    # builtin/identifiers ($0.0000 per quality point per 1K summaries)" and a budget
    # option at $0.00, under a cost section that said there was no cost to compare.
    from pytest_summarybench.aggregate.recommend import recommendations
    from pytest_summarybench.schemas.report import (
        CostBreakdown,
        Costs,
        FamilyScores,
        ModelRanking,
    )

    def ranking(rank: int, model: str, score: float, group: str) -> ModelRanking:
        return ModelRanking(rank=rank, model_id=model, model_name=model, overall_score=score,
                            scores=FamilyScores(), units=10, significance_group=group)

    rankings = [ranking(1, "builtin/a", 0.8, "a"), ranking(2, "builtin/b", 0.6, "b")]

    def costs(a: float, b: float) -> Costs:
        return Costs(by_model={
            m: CostBreakdown(total=p, per_1k_summaries=p, summaries=10,
                             cost_per_quality_point=p / (s * 100))
            for m, p, s in (("builtin/a", a, 0.8), ("builtin/b", b, 0.6))})

    free = {r.kind for r in recommendations(rankings, costs(0.0, 0.0), {})}
    assert free == {"best_overall"}
    # A priced leader and a cheaper runner-up: both pieces of advice.
    priced = {r.kind: r for r in recommendations(rankings, costs(2.0, 0.5), {})}
    assert priced["best_value"].model_id == priced["budget"].model_id == "builtin/b"
    # The runner-up costs more than the leader: no budget option.
    dearer = {r.kind for r in recommendations(rankings, costs(0.5, 2.0), {})}
    assert "budget" not in dearer and "best_value" in dearer


def test_compare_lists_only_the_units_each_model_wins() -> None:
    # A new user's pass: `compare --detailed` listed, under "units where B does best",
    # units where A still won (+0.250, +0.413) when B won fewer units than it lists.
    from pytest_summarybench.cli.compare import _SHOWN_UNITS, _lines

    report = make_report()
    c = report.comparisons[0]
    scores = report.statistics.unit_scores
    units = sorted(scores[c.model_a])
    # B wins one unit only, A all the others.
    scores[c.model_b] = {u: scores[c.model_a][u] + (0.2 if u == units[0] else -0.1)
                         for u in units}
    lines = _lines(report, c.model_a, c.model_b, True, {})
    listed = {}
    for model in (c.model_a, c.model_b):
        head = next(i for i, line in enumerate(lines)
                    if line.startswith(f"units where {model} does best"))
        shown = []
        for line in lines[head + 1:]:
            if not line.startswith("  "):
                break
            unit, diff = line.strip().rsplit(": ", 1)
            shown.append((unit, float(diff)))
        listed[model] = shown
    assert len(listed[c.model_a]) == _SHOWN_UNITS
    assert all(diff > 0 for _, diff in listed[c.model_a])
    assert listed[c.model_b] == [(units[0], pytest.approx(-0.2))]
