"""The explorer's data and page without a browser: every part of a unit is there, taken
from the records; the embedded JSON cannot break out of its script element; hostile names
and answers stay text; report.html links into it; files and sizes stay bounded."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from synthetic_explorer import HOSTILE, JUDGE, make_explorer_inputs, make_explorer_report

from pytest_summarybench.aggregate import ReportInputs, unit_breakdowns
from pytest_summarybench.report.explorer import render_explorer
from pytest_summarybench.report.explorer_data import (
    CODE_CHARS,
    TEXT_CHARS,
    embed_json,
    explorer_data,
)
from pytest_summarybench.report.files import publish
from pytest_summarybench.report.render import render_html, write_reports
from pytest_summarybench.schemas import BenchmarkReport


@pytest.fixture(scope="module")
def run() -> tuple[BenchmarkReport, ReportInputs]:
    inputs = make_explorer_inputs(30)
    return make_explorer_report(inputs), inputs


@pytest.fixture(scope="module")
def data(run: tuple[BenchmarkReport, ReportInputs]) -> dict:
    return explorer_data(*run)


def _unit(data: dict, unit_id: str) -> dict:
    return next(u for u in data["units"] if u["id"] == unit_id)


def test_every_unit_has_its_code_summaries_and_scores(
        run: tuple[BenchmarkReport, ReportInputs], data: dict) -> None:
    report, inputs = run
    assert data["models"] == [r.model_id for r in report.rankings]
    assert [u["id"] for u in data["units"]] == sorted(
        {r.unit_id for r in inputs.records},
        key=lambda i: next((u.path, u.name, u.id) for u in inputs.units if u.id == i))
    unit = _unit(data, "u0003")
    source = next(u for u in inputs.units if u.id == "u0003")
    assert unit["code"] == source.content
    assert (unit["path"], unit["name"], unit["lang"], unit["type"]) == (
        source.path, source.name, source.language, source.type)
    for i, model in enumerate(data["models"]):
        assert unit["sum"][i] == inputs.summaries[("u0003", model)].summary
        assert unit["overall"][i] == pytest.approx(
            report.statistics.unit_scores[model]["u0003"], abs=1e-4)
        # The pointwise score on the unit, normalised as its component is (1-5 -> 0-1).
        rubric = next(r for r in inputs.records if r.unit_id == "u0003"
                      and r.model_id == model and r.evaluator == "judge/pointwise")
        assert unit["scores"]["judge/pointwise"][i] == pytest.approx(
            (rubric.metrics["weighted_average"] - 1) / 4, abs=1e-4)
    # A family of one evaluator scores the unit as that evaluator does, by aggregation's
    # own per-unit breakdown (the paired observations of the report's tests).
    per_unit = unit_breakdowns(inputs.records, inputs.score_spec, data["models"])
    for i, model in enumerate(data["models"]):
        families = per_unit[model]["u0003"].families
        for family, evaluator in (("contrastive", "contrastive/embedding"),
                                  ("retrieval", "retrieval/embedding")):
            assert unit["scores"][evaluator][i] == pytest.approx(families[family], abs=1e-4)


def test_judge_reasoning_and_both_orders_of_each_pair(
        run: tuple[BenchmarkReport, ReportInputs], data: dict) -> None:
    _, inputs = run
    unit = _unit(data, "u0005")
    models = data["models"]
    assert data["judges"] == [JUDGE]
    assert len(unit["pointwise"]) == len(models)
    m, judge, score, criteria, reasoning = unit["pointwise"][0]
    record = next(r for r in inputs.records if r.unit_id == "u0005"
                  and r.model_id == models[m] and r.evaluator == "judge/pointwise")
    assert data["judges"][judge] == JUDGE and reasoning == record.details["reasoning"]
    assert score == pytest.approx(record.metrics["weighted_average"])
    assert dict(zip(data["criteria"], criteria, strict=True)) == {
        k: v for k, v in record.metrics.items() if k != "weighted_average"}
    # Ten pairs of five models, each judged in both orders.
    shown = Counter(frozenset((p[1], p[2])) for p in unit["pairwise"])
    assert len(shown) == 10 and set(shown.values()) == {2}
    assert {(p[1], p[2]) for p in unit["pairwise"]} >= {(0, 1), (1, 0)}
    # Unit 5 has position bias (the first shown wins): the verdict flips for every pair.
    assert all(unit["out"][i] & 32 for i in range(len(models)))
    first = unit["pairwise"][0]
    assert first[3] == first[1] and set(first[6]) == {"A"}


def test_contrastive_options_pick_and_what_fooled_the_embedding(
        run: tuple[BenchmarkReport, ReportInputs], data: dict) -> None:
    _, inputs = run
    misses: Counter[str] = Counter()
    by_model: dict[str, Counter[str]] = {}
    for rec in inputs.records:
        if rec.evaluator == "contrastive/embedding" and rec.metrics["correct"] < 1:
            misses[rec.details["picked"]] += 1
            by_model.setdefault(rec.details["picked"], Counter())[rec.model_id] += 1
    for unit in data["units"]:
        (entry,) = [c for c in unit["contrastive"] if c["ev"] == "contrastive/embedding"]
        for one in entry["byModel"]:
            record = next(r for r in inputs.records if r.unit_id == unit["id"]
                          and r.model_id == data["models"][one["m"]]
                          and r.evaluator == "contrastive/embedding")
            assert entry["options"] == [unit["id"], *record.details["distractorIds"]]
            assert entry["options"][one["picked"]] == record.details["picked"]
            assert one["sims"] == record.details["summarySimilarities"]
            if len(unit["contrastive"]) == 1:  # no contrastive/llm on this unit
                assert bool(unit["out"][one["m"]] & 4) == (record.metrics["correct"] < 1)
    top = [f for f in data["fooled"] if f["ev"] == "contrastive/embedding"]
    assert [f["count"] for f in top] == [n for _, n in misses.most_common(len(top))]
    assert {f["id"] for f in top} <= set(misses)
    # Who was fooled: the picks per model add up to the count; ties are marked.
    counts = Counter(misses.values())
    for f in top:
        assert f["count"] == misses[f["id"]] == sum(f["byModel"])
        assert f["byModel"] == [by_model[f["id"]][m] for m in data["models"]]
        assert f["tied"] == (counts[f["count"]] > 1)
    assert any(f["tied"] for f in top)
    # Each option that beat a target is listed, with its code excerpt.
    for f in top:
        assert f["id"] in {u["id"] for u in data["units"]} or data["refs"][f["id"]]["code"]


def test_retrieval_ranks_downstream_outcomes_and_errors(
        run: tuple[BenchmarkReport, ReportInputs], data: dict) -> None:
    _, inputs = run
    unit = _unit(data, "u0000")
    r = unit["retrieval"]
    assert [q["type"] for q in r["queries"]] == ["keyword", "natural", "task"]
    for one in r["byModel"]:
        record = next(x for x in inputs.records if x.unit_id == "u0000"
                      and x.model_id == data["models"][one["m"]]
                      and x.evaluator == "retrieval/embedding")
        assert one["ranks"] == [q["rank"] for q in record.details["queries"]]
        assert bool(unit["out"][one["m"]] & 8) == any(
            q["rank"] != 1 for q in record.details["queries"])
    tasks = unit["downstream"]
    assert {t["m"] for t in tasks} == set(range(len(data["models"])))
    for t in tasks:
        assert bool(unit["out"][t["m"]] & 16) == (t["metrics"]["success"] == 0)
    # The failed pairwise item of unit 2 is an error of both of its models.
    errors = _unit(data, "u0002")["errors"]
    assert [(e[0], e[1]) for e in errors] == [([0, 1], "judge/pairwise")]
    assert _unit(data, "u0002")["out"][0] & 1 and _unit(data, "u0002")["out"][1] & 1


def test_a_completion_task_without_tests_is_untested_not_passed(data: dict) -> None:
    tasks = [t for u in data["units"] for t in u["downstream"]
             if t["ev"] == "downstream/completion"]
    assert tasks and {t["outcome"] for t in tasks} == {"untested"}
    selection = [t for u in data["units"] for t in u["downstream"]
                 if t["ev"] == "downstream/function_selection"]
    assert {t["outcome"] for t in selection} == {"passed", "failed"}
    for t in selection:
        assert (t["outcome"] == "passed") == (t["metrics"]["success"] == 1)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self._attrs: dict | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        if tag == "script":
            self._attrs = dict(attrs)
            self.scripts.append((self._attrs, ""))

    def handle_endtag(self, tag: str) -> None:
        self._attrs = None

    def handle_data(self, text: str) -> None:
        if self._attrs is not None:
            attrs, before = self.scripts[-1]
            self.scripts[-1] = (attrs, before + text)


def test_the_page_embeds_the_data_once_and_hostile_text_stays_text(
        run: tuple[BenchmarkReport, ReportInputs], data: dict) -> None:
    page = render_explorer(*run)
    parsed = _Page()
    parsed.feed(page)
    # Two script elements: the data (not run) and ours (allowed by its hash alone).
    assert [a.get("type") for a, _ in parsed.scripts] == ["application/json", None]
    (_, blob), (_, code) = parsed.scripts
    assert json.loads(blob) == json.loads(json.dumps(data))
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page
    assert "img" not in parsed.tags and parsed.tags.count("script") == 2
    # The hostile name is in the data, escaped, and in the title as text.
    assert "</script><script>window" not in page and "<!--" not in page
    assert "onerror=\"window" not in page
    assert _unit(json.loads(blob), "u0001")["name"] == HOSTILE
    assert "&lt;/script&gt;&lt;script&gt;window.__xss = 1" in page.split("<body>")[0]
    # The script shows data through textContent only (its comments aside).
    statements = re.sub(r"^\s*//.*$", "", code, flags=re.MULTILINE)
    for sink in (r"innerHTML", r"outerHTML", r"insertAdjacentHTML", r"document\.write",
                 r"\beval\(", r"\bFunction\("):
        assert not re.search(sink, statements), sink


@pytest.mark.parametrize("text", [
    "</script><script>alert(1)</script>", "</SCRIPT >", "<!-- <script>", "a & b > c",
    "\u2028\u2029", "\x1b]52;c;cGF5bG9hZA==\x07", "\ud800 lone surrogate",
])
def test_embedded_json_cannot_close_its_element(text: str) -> None:
    embedded = embed_json({"text": text})
    assert not set("<>&") & set(embedded) and embedded.isascii()
    assert json.loads(embedded) == {"text": text}


def test_long_texts_are_bounded(run: tuple[BenchmarkReport, ReportInputs]) -> None:
    report, inputs = run
    huge = inputs.units[0].model_copy(update={"content": "x = 1\n" * 50_000})
    reason = "why " * 20_000
    records = [r.model_copy(update={"details": {**r.details, "reasoning": reason}})
               if r.evaluator == "judge/pointwise" else r for r in inputs.records]
    bounded = explorer_data(report, ReportInputs(**{
        **inputs.__dict__, "units": [huge, *inputs.units[1:]], "records": records}))
    unit = _unit(bounded, huge.id)
    assert len(unit["code"]) < CODE_CHARS + 100 and "more characters]" in unit["code"]
    assert all(len(p[4]) < TEXT_CHARS + 100 for p in unit["pointwise"])


def test_report_links_into_the_explorer(run: tuple[BenchmarkReport, ReportInputs],
                                        tmp_path: Path) -> None:
    report, inputs = run
    paths = write_reports(report, tmp_path, ["html", "json"],
                          explorer=render_explorer(report, inputs))
    assert paths["explorer"] == tmp_path / "explorer.html" and paths["explorer"].is_file()
    page = paths["html"].read_text()
    links = set(re.findall(r'href="explorer\.html#([^"]*)"', page))
    examples = [(m, e.code_unit_id) for m, fa in report.failures.by_model.items()
                for e in fa.examples]
    assert examples
    for model, unit in examples:  # the failure table
        assert f"unit={unit}&amp;model={model.replace('/', '%2F')}" in links
    top = report.comparisons[0]  # the head-to-head
    assert (f"sort=disagree&amp;a={top.model_a.replace('/', '%2F')}"
            f"&amp;b={top.model_b.replace('/', '%2F')}") in links
    for lang in report.detailed.by_language:  # the heat map
        assert any(link.startswith(f"lang={lang}&amp;model=") for link in links)
    # Without an explorer, no link to one.
    assert "explorer.html" not in render_html(report)
    # The explorer of an earlier session is moved aside with its reports.
    publish(tmp_path, {"results.json": "{}"})
    assert (tmp_path / "explorer.previous.html").is_file()
    assert not (tmp_path / "explorer.html").exists()


def test_nearest_option_prefers_the_target_on_a_tie() -> None:
    from pytest_summarybench.evaluators.contrastive.embedding import _nearest

    assert _nearest([0.5, 0.5, 0.2]) == 0
    assert _nearest([0.5, 0.5 + 5e-7, 0.2]) == 0  # within the tie tolerance
    assert _nearest([0.4, 0.2, 0.6, 0.6]) == 2


def test_the_page_keeps_to_its_size_budget(run: tuple[BenchmarkReport, ReportInputs],
                                           data: dict) -> None:
    """docs/performance.md ("The explorer"): at most 12 KB a unit of 5 models with one judge
    (pairwise verdicts in both orders are most of it) plus 40 KB for the page itself;
    measured 11.5 KB a unit at 100 and 10.9 KB at 1,000 units."""
    page = render_explorer(*run).encode()
    assert len(data["models"]) == 5
    assert len(page) <= 40_000 + 12_000 * len(data["units"]), len(page)


def test_an_explorer_that_cannot_be_built_costs_only_itself(
        run: tuple[BenchmarkReport, ReportInputs], monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_summarybench.engine.finish import explorer_page
    from pytest_summarybench.report import explorer

    def broken(*args: object, **kwargs: object) -> str:
        raise KeyError("judge")

    monkeypatch.setattr(explorer, "render_explorer", broken)
    notes: list[str] = []
    assert explorer_page(*run, notes) is None
    assert notes == ["summarybench: the explorer could not be built (KeyError: 'judge'); "
                     "the reports are written without it"]
