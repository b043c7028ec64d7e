"""What the Markdown and HTML templates show, derived once from a ``BenchmarkReport``.

Both renderings read the same view, so they cannot disagree on a figure; the templates
only lay it out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..aggregate.recommend import language_name
from ..schemas import BenchmarkReport
from ..schemas.report import ModelComparison, SignificanceTest
from ..vocabulary import FAMILIES
from .details import Block, detail_blocks


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
    """Family columns of the rankings table (every family, run or not)."""
    top: ModelComparison | None
    top_tests: list[SignificanceTest]
    overall_tests: list[SignificanceTest]
    family_tests: list[SignificanceTest]
    languages: list[GroupRow]
    code_types: list[GroupRow]
    language_summary: str
    details: dict[str, list[Block]]
    weaknesses: list[tuple[str, str]] = field(default_factory=list)
    recommendations: list[tuple[str, str]] = field(default_factory=list)
    """(title, text) of each recommendation."""
    agreement: list[AgreementRow] = field(default_factory=list)


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


def build_view(report: BenchmarkReport) -> View:
    tests = report.statistics.significance_tests
    top = report.comparisons[0] if report.comparisons else None
    top_tests = ([t for t in tests if (t.model_a, t.model_b) == (top.model_a, top.model_b)]
                 if top else [])
    shares = report.metadata.language_shares
    view = View(
        report=report,
        families=list(FAMILIES),
        top=top,
        top_tests=top_tests,
        overall_tests=[t for t in tests if t.metric == "overall"],
        family_tests=[t for t in tests if t.metric != "overall"],
        languages=_groups(report.detailed.by_language, True),
        code_types=_groups(report.detailed.by_code_type, False),
        language_summary=", ".join(f"{language_name(k)} ({v:.0%})" for k, v in shares.items())
        or ", ".join(language_name(x) for x in report.metadata.codebase.languages),
        details={name: detail_blocks(d) for name, d in sorted(report.evaluator_details.items())},
        weaknesses=_weaknesses(report),
    )
    view.recommendations = [(r.title or r.kind, r.text) for r in report.recommendations]
    view.agreement = _agreement(report)
    return view
