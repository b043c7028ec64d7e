"""What the Markdown and HTML templates show, derived once from a ``BenchmarkReport``.

Both renderings read the same view, so they cannot disagree on a figure; the templates
only lay it out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..aggregate.recommend import language_name
from ..schemas import BenchmarkReport
from ..schemas.report import ModelComparison, SignificanceTest
from .findings import Finding, evidence_caveat, key_findings, unhealthy
from .sections import Section, sections
from .wording import (
    COLUMNS_LEGEND,
    DIFFERENCES_NOTE,
    difference_text,
    items_line,
    record_text,
    units_line,
)

if TYPE_CHECKING:
    from ..core.family import Family

#: A heat-map cell or group row with fewer units than this is marked as too few to compare.
LOW_N = 5


def num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:+.{digits}f}"


def usd(value: float | None, digits: int = 2) -> str:
    """Dollars; amounts below a cent keep four decimals so that they do not read as $0.00."""
    if value is None:
        return "unknown"
    if 0 < value < 0.01:
        digits = max(digits, 4)
    return f"${value:,.{digits}f}"


def pvalue(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def interval(ci: tuple[float, float] | None, digits: int = 3) -> str:
    return "-" if ci is None else f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")


def md(text: object) -> str:
    """Untrusted text as one line of Markdown that shows literally (in a table cell too):
    whitespace collapsed, Markdown and HTML metacharacters backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


@dataclass
class GroupRow:
    key: str
    label: str
    units: int
    best: tuple[str, float] | None
    runner_up: tuple[str, float] | None

    @property
    def low_n(self) -> bool:
        return self.units < LOW_N


@dataclass
class AgreementRow:
    """Two families and how alike they rank, at each level the report measures."""

    pair: str
    pooled: float | None
    """Over every scored unit-model pair."""
    across_models: float | None
    """Across the models' family scores."""
    within_units: float | None
    """Mean over units of the rho across the models on that unit."""
    by_model: dict[str, float | None]
    """Per model, across its units."""


def _agreement(report: BenchmarkReport) -> list[AgreementRow]:
    st = report.statistics
    names = list(st.correlations)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            rows.append(AgreementRow(
                pair=f"{a} ~ {b}", pooled=st.correlations.get(a, {}).get(b),
                across_models=st.model_correlations.get(a, {}).get(b),
                within_units=st.unit_correlations.get(a, {}).get(b),
                by_model={m: c.get(a, {}).get(b) for m, c in st.correlations_by_model.items()}))
    return rows


@dataclass
class View:
    report: BenchmarkReport
    families: list[str]
    """Family columns of the rankings table: the report's families, run or skipped."""
    top: ModelComparison | None
    top_tests: list[SignificanceTest]
    overall_tests: list[SignificanceTest]
    family_tests: list[SignificanceTest]
    languages: list[GroupRow]
    code_types: list[GroupRow]
    language_summary: str
    sections: list[Section]
    """Evaluator details, one section per family."""
    findings: list[Finding] = field(default_factory=list)
    units_text: str = ""
    items_text: str = ""
    columns_legend: str = COLUMNS_LEGEND
    record: str = ""
    """The top pair's head-to-head record in words."""
    cost_note: str = ""
    """One line instead of the cost table and chart when no cost is known, or every call
    was free; empty when there are costs to show."""
    low_n: int = LOW_N
    weaknesses: list[tuple[str, str]] = field(default_factory=list)
    recommendations: list[tuple[str, str]] = field(default_factory=list)
    """(title, text) of each recommendation."""
    agreement: list[AgreementRow] = field(default_factory=list)
    unhealthy: bool = False
    """The run failed its health check (``metadata.health`` lists why)."""
    caveat: str = ""
    """What the ranking rests on, when a reader must know it first (``findings``)."""
    difference: str = ""
    """The top pair's two differences, named (``wording.difference_text``)."""
    differences_note: str = DIFFERENCES_NOTE


def _groups(groups: dict, label: bool) -> list[GroupRow]:
    rows = []
    for key, g in groups.items():
        ranked = sorted(g.overall_by_model.items(), key=lambda kv: (-kv[1], kv[0]))
        rows.append(GroupRow(key=key, label=language_name(key) if label else key,
                             units=g.units, best=ranked[0] if ranked else None,
                             runner_up=ranked[1] if len(ranked) > 1 else None))
    return sorted(rows, key=lambda r: (-r.units, r.key))


def _weaknesses(report: BenchmarkReport) -> list[tuple[str, str]]:
    out = []
    for model_id, fa in report.failures.by_model.items():
        parts = []
        if fa.weakest_metric:
            parts.append(f"weakest metric {fa.weakest_metric}")
        if fa.weakest_language:
            parts.append(f"weakest on {language_name(fa.weakest_language)}")
        if fa.weakest_code_type:
            parts.append(f"weakest code type {fa.weakest_code_type}")
        if fa.patterns:
            category, count = next(iter(fa.patterns.items()))
            parts.append(f"most often {category.replace('_', ' ')} "
                         f"({count} of {fa.low_scores} low scores)")
        elif fa.low_scores:
            parts.append(f"{fa.low_scores} low scores, no pattern detected")
        if parts:
            out.append((model_id, "; ".join(parts)))
    return out


def cost_note(report: BenchmarkReport) -> str:
    """"" when some model has a known, non-zero cost (the table and chart show it);
    otherwise the one line the reports print instead of an empty table and chart."""
    ranked = [r.model_id for r in report.rankings if r.units]
    costs = [report.costs.by_model[m] for m in ranked if m in report.costs.by_model]
    known = [c.per_1k_summaries for c in costs if c.per_1k_summaries is not None]
    if not known:
        calls = sum(c.unknown_price_calls for c in costs)
        return ("Costs unknown: no model's calls have a known price"
                + (f" ({calls:,} calls without a price)" if calls else "")
                + "; set inputCostPerMillion and outputCostPerMillion on a model's entry to "
                  "compare cost.")
    if all(k == 0 for k in known) and len(known) == len(costs):
        return "Costs: every call was free ($0.00 for every model), so there is no cost to compare."
    return ""


def build_view(report: BenchmarkReport, families: Iterable[Family] = ()) -> View:
    """What the templates show of ``report``; ``families``: the run's own families (a
    plugin's), for their titles and layouts, next to the built-in ones."""
    tests = report.statistics.significance_tests
    top = report.comparisons[0] if report.comparisons else None
    top_tests = ([t for t in tests if (t.model_a, t.model_b) == (top.model_a, top.model_b)]
                 if top else [])
    shares = report.metadata.language_shares
    view = View(
        report=report,
        families=report.families,
        top=top,
        top_tests=top_tests,
        overall_tests=[t for t in tests if t.metric == "overall"],
        family_tests=[t for t in tests if t.metric != "overall"],
        languages=_groups(report.detailed.by_language, True),
        code_types=_groups(report.detailed.by_code_type, False),
        language_summary=", ".join(f"{language_name(k)} ({v:.0%})" for k, v in shares.items())
        or ", ".join(language_name(x) for x in report.metadata.codebase.languages),
        sections=sections(report.evaluator_details, families),
        findings=key_findings(report),
        units_text=units_line(report),
        items_text=items_line(report),
        record=record_text(top) if top else "",
        cost_note=cost_note(report),
        weaknesses=_weaknesses(report),
    )
    view.recommendations = [(r.title or r.kind, r.text) for r in report.recommendations]
    view.unhealthy = unhealthy(report)
    view.caveat = evidence_caveat(report) or ""
    view.difference = difference_text(top) if top else ""
    view.agreement = _agreement(report)
    return view
