"""Failure analysis of docs/reports.md#the-results-file: where each model is weakest, example
failures with the unit, summary and reason, and the failure patterns common among low scores."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping

from ..schemas import CodeUnit, GeneratedSummary, ScoreRecord
from ..schemas.report import (
    FailureAnalysis,
    FailureExample,
    FailurePattern,
    Failures,
    GroupScores,
)
from .patterns import PATTERN_DESCRIPTIONS, PATTERNS, detect
from .recommend import MIN_GROUP_UNITS
from .scores import FamilyBreakdown
from .scoring import Scoring

#: A unit-model pair whose per-unit overall score is below this is a low score.
LOW_SCORE = 0.5
EXAMPLES_PER_MODEL = 3
_QUOTE_CHARS = 160


def _quote(text: str, limit: int = _QUOTE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def issue_of(records: list[ScoreRecord], scoring: Scoring) -> str:
    """What went wrong for one unit-model pair, in the evaluators' own terms: every
    component below 0.5 (worst first), errors, and a judge's reasoning when there is one."""
    parts: list[tuple[float, str]] = []
    for rec in records:
        if rec.error is not None:
            parts.append((-1.0, f"{rec.evaluator} error: {_quote(rec.error, 80)}"))
            continue
        for comp in scoring.of(rec.evaluator):
            if comp.metric in rec.metrics:
                value = comp.normalize(float(rec.metrics[comp.metric]))
                if value < 0.5:
                    parts.append((value, f"{rec.evaluator} {comp.metric}="
                                         f"{rec.metrics[comp.metric]:.2f}"))
        reasoning = rec.details.get("reasoning")
        if isinstance(reasoning, str) and reasoning.strip():
            parts.append((2.0, f"judge: {_quote(reasoning, 100)}"))
    parts.sort(key=lambda p: (p[0], p[1]))
    # A pairwise item has a record per model and order, a panel a verdict per judge: the
    # same text many times over said once, with how often.
    seen: dict[str, int] = {}
    for _, text in parts:
        seen[text] = seen.get(text, 0) + 1
    return "; ".join(text if n == 1 else f"{text} (x{n})" for text, n in seen.items()) \
        or "low combined score"


def _weakest_group(groups: Mapping[str, GroupScores], model_id: str) -> str | None:
    """The model's lowest-scoring group among those large enough to single out (all of
    them when fewer than two are); None when there is nothing to compare."""
    scored = [(g.overall_by_model[model_id], key, g.units) for key, g in groups.items()
              if model_id in g.overall_by_model]
    large = [x for x in scored if x[2] >= MIN_GROUP_UNITS]
    pool = large if len(large) > 1 else scored
    return min(pool)[1] if len(pool) > 1 else None


def analyze_failures(*, model_ids: list[str],
                     units: Mapping[str, CodeUnit],
                     summaries: Mapping[tuple[str, str], GeneratedSummary],
                     unit_scores: Mapping[str, Mapping[str, FamilyBreakdown]],
                     breakdowns: Mapping[str, FamilyBreakdown],
                     records: list[ScoreRecord],
                     by_language: Mapping[str, GroupScores],
                     by_code_type: Mapping[str, GroupScores],
                     scoring: Scoring, threshold: float = LOW_SCORE) -> Failures:
    """Failures of the run, computed from per-unit scores and the summaries' text."""
    recs: dict[tuple[str, str], list[ScoreRecord]] = defaultdict(list)
    for rec in records:
        recs[(rec.unit_id, rec.model_id)].append(rec)

    low: list[tuple[str, str, float, list[str]]] = []  # model, unit, score, categories
    for model_id in model_ids:
        for unit_id, fb in sorted(unit_scores.get(model_id, {}).items()):
            if fb.overall is None or fb.overall >= threshold:
                continue
            summary = summaries.get((unit_id, model_id))
            unit = units.get(unit_id)
            cats = detect(summary.summary, unit) if summary and unit else []
            low.append((model_id, unit_id, fb.overall, cats))

    out = Failures(low_score_threshold=threshold, low_scores=len(low))
    for model_id in model_ids:
        model_fb = breakdowns.get(model_id)
        mine = sorted((x for x in low if x[0] == model_id), key=lambda x: (x[2], x[1]))
        comps = [(v, f"{fam}/{name}")
                 for fam, cs in (model_fb.components.items() if model_fb else [])
                 for name, v in cs.items()]
        analysis = FailureAnalysis(
            model_id=model_id,
            weakest_metric=min(comps)[1] if comps else None,
            weakest_language=_weakest_group(by_language, model_id),
            weakest_code_type=_weakest_group(by_code_type, model_id),
            low_scores=len(mine),
            patterns=dict(Counter(c for x in mine for c in x[3]).most_common()),
        )
        for _, unit_id, score, cats in mine[:EXAMPLES_PER_MODEL]:
            summary = summaries.get((unit_id, model_id))
            unit = units.get(unit_id)
            analysis.examples.append(FailureExample(
                code_unit_id=unit_id,
                unit_name=unit.name if unit else "",
                language=unit.language if unit else "",
                summary=summary.summary if summary else "",
                issue=issue_of(recs.get((unit_id, model_id), []), scoring),
                category=cats[0] if cats else "other",
                score=score))
        out.by_model[model_id] = analysis

    for pattern in PATTERNS:
        hits = [x for x in low if pattern.category in x[3]]
        if not hits:
            continue
        where = Counter((units[u].type, units[u].language) for _, u, _, _ in hits if u in units)
        (kind, language), count = where.most_common(1)[0] if where else (("", ""), 0)
        model_id, unit_id = hits[0][0], hits[0][1]
        summary = summaries.get((unit_id, model_id))
        out.common_patterns.append(FailurePattern(
            category=pattern.category,
            description=PATTERN_DESCRIPTIONS[pattern.category],
            share_of_low_scores=len(hits) / len(low),
            models=dict(Counter(m for m, _, _, _ in hits).most_common()),
            where=(f"most common in {language} {kind} units ({count} of {len(hits)})"
                   if count else ""),
            example=_quote(summary.summary, 100) if summary else ""))
    out.common_patterns.sort(key=lambda p: (-p.share_of_low_scores, p.category))
    return out
