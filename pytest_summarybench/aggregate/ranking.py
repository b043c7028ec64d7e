"""The ranking and the report object (spec section 10.1) built from score records."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone

from ..schemas import (
    EVAL_FAMILIES,
    BenchmarkReport,
    CodebaseInfo,
    CostBreakdown,
    Costs,
    Detailed,
    ErrorCount,
    FamilyScores,
    GroupScores,
    ModelRanking,
    ReportMetadata,
    ScoreRecord,
)
from ..schemas.config import BenchmarkConfig
from .scores import FamilyBreakdown, family_scores, metric_means


def rank_models(breakdowns: dict[str, FamilyBreakdown]) -> list[ModelRanking]:
    """Models by overall score, highest first; equal scores share a rank (1, 2, 2, 4).

    Models with no score at all come last, unranked order by id.
    """
    ordered = sorted(breakdowns.values(),
                     key=lambda b: (b.overall is None, -(b.overall or 0.0), b.model_id))
    rankings: list[ModelRanking] = []
    previous: float | None = None
    rank = 0
    for position, fb in enumerate(ordered, start=1):
        if fb.overall is None or fb.overall != previous:
            rank = position
        previous = fb.overall
        rankings.append(ModelRanking(
            rank=rank, model_id=fb.model_id, model_name=fb.model_id.partition("/")[2],
            overall_score=fb.overall if fb.overall is not None else 0.0,
            scores=FamilyScores(**fb.families), scored_items=fb.items, errors=fb.errors))
    return rankings


def _group_scores(records: list[ScoreRecord], key_of: dict[str, str], config: BenchmarkConfig,
                  model_ids: list[str]) -> dict[str, GroupScores]:
    groups: dict[str, list[ScoreRecord]] = defaultdict(list)
    for rec in records:
        key = key_of.get(rec.unit_id)
        if key is not None:
            groups[key].append(rec)
    out: dict[str, GroupScores] = {}
    for key in sorted(groups):
        recs = groups[key]
        fbs = family_scores(recs, config, model_ids)
        out[key] = GroupScores(
            units=len({r.unit_id for r in recs}),
            by_model={m: FamilyScores(**fb.families) for m, fb in fbs.items() if fb.families},
            overall_by_model={m: fb.overall for m, fb in fbs.items() if fb.overall is not None},
        )
    return out


def build_report(
    *,
    run_id: str,
    name: str,
    config: BenchmarkConfig,
    codebase: CodebaseInfo,
    records: list[ScoreRecord],
    model_ids: list[str],
    unit_language: dict[str, str],
    unit_type: dict[str, str],
    summary_costs: dict[str, list[float | None]],
    families_skipped: dict[str, str],
    started_at: datetime,
    finished_at: datetime,
) -> BenchmarkReport:
    """Everything ``results.json`` holds for one run of the code-summary benchmark."""
    breakdowns = family_scores(records, config, model_ids)
    rankings = rank_models(breakdowns)
    ran = [f for f in EVAL_FAMILIES if any(f in b.families for b in breakdowns.values())]
    skipped = {f: families_skipped.get(f, "no evaluator of this family recorded a score")
               for f in EVAL_FAMILIES if f not in ran}

    means = metric_means(records)
    by_model = {m: {f"{ev}:{metric}": v for (ev, metric), v in sorted(means.get(m, {}).items())}
                for m in model_ids}

    errors: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rec in records:
        if rec.error is not None:
            errors[(rec.model_id, rec.evaluator)].append(f"{rec.unit_id}: {rec.error}")

    costs = Costs()
    grand: float | None = 0.0
    for model_id in model_ids:
        values = summary_costs.get(model_id, [])
        unknown = sum(1 for v in values if v is None)
        total = None if unknown else float(sum(v for v in values if v is not None))
        costs.by_model[model_id] = CostBreakdown(
            total=total,
            per_1k_summaries=(total / len(values) * 1000) if total is not None and values
            else None,
            by_phase={"generation": total},
            unknown_price_calls=unknown,
        )
        grand = None if grand is None or total is None else grand + total
    costs.total = grand

    duration = finished_at - started_at
    return BenchmarkReport(
        metadata=ReportMetadata(
            benchmark_id=run_id, name=name,
            run_date=finished_at.astimezone(timezone.utc).isoformat(timespec="seconds"),
            duration=f"{duration.total_seconds():.1f}s",
            codebase=codebase, configuration=config,
            families_run=ran, families_skipped=skipped),
        rankings=rankings,
        detailed=Detailed(
            by_model=by_model,
            by_language=_group_scores(records, unit_language, config, model_ids),
            by_code_type=_group_scores(records, unit_type, config, model_ids),
        ),
        costs=costs,
        errors=[ErrorCount(model_id=m, evaluator=e, count=len(msgs), examples=msgs[:3])
                for (m, e), msgs in sorted(errors.items())],
    )
