"""The ranking and the report object (docs/reports.md#the-results-file) built from score records."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..schemas import (
    BenchmarkReport,
    CodebaseInfo,
    CodeUnit,
    Detailed,
    ErrorCount,
    FamilyScores,
    GeneratedSummary,
    GroupScores,
    ModelRanking,
    ReportMetadata,
    ScoreRecord,
)
from ..schemas.config import BenchmarkConfig
from ..schemas.report import BaselineComparison, RankingBasis, Statistics
from ..stats.correlation import correlation_matrix, mean_correlation_matrix
from .costs import cost_analysis
from .failures import analyze_failures
from .intervals import overall_interval
from .pairs import compare_all_pairs, groups_from_tests, pair_seed
from .recommend import head_to_head, mean_words, recommendations
from .scores import (
    FamilyBreakdown,
    family_scores,
    item_key,
    metric_means,
    shared_families,
    unit_breakdowns,
)
from .scoring import Scoring, builtin_scoring


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


def ranking_basis(breakdowns: Mapping[str, FamilyBreakdown], scoring: Scoring,
                  means: Mapping[str, Mapping[tuple[str, str], float]]) -> RankingBasis:
    """What the overall scores rest on: the families every scored model has, and the
    evaluators whose components entered those families for some model."""
    common = shared_families(breakdowns.values())
    return RankingBasis(
        families=[f for f in scoring.families if f in common],
        evaluators=sorted({c.evaluator for c in scoring.components if c.family in common
                           and any((c.evaluator, c.metric) in means.get(m, {})
                                   for m in breakdowns)}))


def _group_scores(records: list[ScoreRecord], key_of: dict[str, str], scoring: Scoring,
                  model_ids: list[str]) -> dict[str, GroupScores]:
    groups: dict[str, list[ScoreRecord]] = defaultdict(list)
    for rec in records:
        key = key_of.get(rec.unit_id)
        if key is not None:
            groups[key].append(rec)
    out: dict[str, GroupScores] = {}
    for key in sorted(groups):
        recs = groups[key]
        fbs = family_scores(recs, scoring, model_ids)
        scored: dict[str, set[str]] = defaultdict(set)
        for rec in recs:
            if rec.error is None:
                # A pairwise item ("a~b") is a scored item of both of its models.
                for model_id in rec.models:
                    scored[model_id].add(rec.unit_id)
        out[key] = GroupScores(
            units=len({r.unit_id for r in recs}),
            by_model={m: FamilyScores(**fb.families) for m, fb in fbs.items() if fb.families},
            overall_by_model={m: fb.overall for m, fb in fbs.items() if fb.overall is not None},
            units_by_model={m: len(scored[m]) for m, fb in fbs.items()
                            if fb.overall is not None},
        )
    return out


@dataclass
class ReportInputs:
    """Everything a report is computed from; all of it is in the store, so a report can be
    rebuilt without calling a model."""

    run_id: str
    name: str
    config: BenchmarkConfig
    codebase: CodebaseInfo
    records: list[ScoreRecord]
    model_ids: list[str]
    units: list[CodeUnit]
    """Every extracted unit of the run (language, type, docstring and code of each)."""
    summaries: dict[tuple[str, str], GeneratedSummary]
    """(unit id, model id) -> the summary the run scored."""
    started_at: datetime
    finished_at: datetime
    families_skipped: dict[str, str] = field(default_factory=dict)
    evaluator_details: dict[str, dict[str, Any]] = field(default_factory=dict)
    gate_failures: list[str] = field(default_factory=list)
    """The CI gate's verdict on this run, when it was already judged (a rebuilt report)."""
    baseline: BaselineComparison | None = None
    """The baseline comparison the gate made, when it was already judged."""
    scoring: Scoring | None = None
    """The components and weights the run scored with (``scoring.py``); default: the
    built-in evaluators' under ``config``."""

    @property
    def score_spec(self) -> Scoring:
        return self.scoring if self.scoring is not None else builtin_scoring(self.config)


def _statistics(inputs: ReportInputs, rankings: list[ModelRanking],
                per_unit: Mapping[str, Mapping[str, FamilyBreakdown]],
                breakdowns: Mapping[str, FamilyBreakdown]) -> Statistics:
    seed = inputs.config.seed
    ordered = [r.model_id for r in rankings if per_unit.get(r.model_id)]
    overall = {m: {u: fb.overall for u, fb in units.items() if fb.overall is not None}
               for m, units in per_unit.items()}
    tests = compare_all_pairs(overall, ordered, "overall", seed=seed)
    ran = {f for units in per_unit.values() for fb in units.values() for f in fb.families}
    # With one family the overall score is that family's: its tests would repeat the above.
    for family in (f for f in inputs.score_spec.families if f in ran and len(ran) > 1):
        scores = {m: {u: fb.families[family] for u, fb in units.items()
                      if family in fb.families} for m, units in per_unit.items()}
        if sum(1 for s in scores.values() if s) > 1:
            tests += compare_all_pairs(scores, ordered, family, seed=seed)
    groups = groups_from_tests(ordered, tests)
    by_model: dict[str, list[ScoreRecord]] = defaultdict(list)
    for rec in inputs.records:
        by_model[rec.model_id].append(rec)
    # The interval is of the overall score as ranked: over the families every scored model
    # has (``family_scores``), not over all a model happens to have.
    common = shared_families(breakdowns.values())
    spec = inputs.score_spec
    ranked = dataclasses.replace(spec, components=tuple(
        c for c in spec.components if c.family in common))
    for r in rankings:
        r.units = len(overall.get(r.model_id, {}))
        r.significance_group = groups.get(r.model_id, "")
        if r.units:
            r.confidence_interval = overall_interval(
                by_model[r.model_id], ranked, r.model_id,
                seed=pair_seed(seed, "overall", r.model_id))
    families = list(inputs.score_spec.families)
    return Statistics(
        significance_tests=tests,
        correlations=correlation_matrix(
            [fb.families for units in per_unit.values() for fb in units.values()], families),
        correlations_by_model={
            m: correlation_matrix([fb.families for fb in units.values()], families)
            for m, units in per_unit.items() if units},
        model_correlations=correlation_matrix(
            [breakdowns[m].families for m in ordered], families),
        unit_correlations=mean_correlation_matrix(
            [[per_unit[m][u].families for m in ordered if u in per_unit[m]]
             for u in sorted({u for units in per_unit.values() for u in units})], families),
        significance_groups=groups,
        unit_scores={m: dict(sorted(overall[m].items())) for m in ordered},
    )


def build_report(inputs: ReportInputs) -> BenchmarkReport:
    """Everything ``results.json`` holds for one run of the code-summary benchmark."""
    records, config, model_ids = inputs.records, inputs.config, inputs.model_ids
    scoring = inputs.score_spec
    breakdowns = family_scores(records, scoring, model_ids)
    rankings = rank_models(breakdowns)
    families = scoring.families
    ran = [f for f in families if any(f in b.families for b in breakdowns.values())]
    skipped = {f: inputs.families_skipped.get(f, "no evaluator of this family recorded a score")
               for f in families if f not in ran}
    # An evaluator asked for that could not run, in a family that ran (keyed by its name).
    skipped.update({name: why for name, why in inputs.families_skipped.items()
                    if "/" in name and name.split("/", 1)[0] in ran})
    common = shared_families(breakdowns.values())
    for f in ran:
        if f not in common:
            missing = sorted(m for m, b in breakdowns.items() if b.families and f not in b.families)
            why = inputs.families_skipped.get(f"{f} in overall")
            skipped[f"{f} in overall"] = (
                f"scored for only some models (not for {', '.join(missing)}): shown per "
                f"family, left out of the overall score" + (f"; {why}" if why else ""))

    means = metric_means(records)
    by_model = {m: {f"{ev}:{metric}": v for (ev, metric), v in sorted(means.get(m, {}).items())}
                for m in model_ids}
    errors: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rec in records:
        if rec.error is not None:
            errors[(rec.model_id, rec.evaluator)].append(f"{rec.unit_id}: {rec.error}")

    units = {u.id: u for u in inputs.units}
    by_language = _group_scores(records, {u.id: u.language for u in inputs.units}, scoring,
                                model_ids)
    by_code_type = _group_scores(records, {u.id: u.type for u in inputs.units}, scoring,
                                 model_ids)
    per_unit = unit_breakdowns(records, scoring, model_ids)
    statistics = _statistics(inputs, rankings, per_unit, breakdowns)
    summaries_by_model: dict[str, list[GeneratedSummary]] = {m: [] for m in model_ids}
    for (_, model_id), s in sorted(inputs.summaries.items()):
        if model_id in summaries_by_model:
            summaries_by_model[model_id].append(s)
    failures = analyze_failures(
        model_ids=model_ids, units=units, summaries=inputs.summaries, unit_scores=per_unit,
        breakdowns=breakdowns, records=records, by_language=by_language,
        by_code_type=by_code_type, scoring=scoring)
    costs = cost_analysis(model_ids, summaries_by_model, records,
                          {m: fb.overall for m, fb in breakdowns.items()})

    sampled = [units[u] for u in {r.unit_id for r in records} if u in units]
    langs = Counter(u.language for u in sampled)
    duration = inputs.finished_at - inputs.started_at
    report = BenchmarkReport(
        metadata=ReportMetadata(
            benchmark_id=inputs.run_id, name=inputs.name,
            run_date=inputs.finished_at.astimezone(timezone.utc).isoformat(timespec="seconds"),
            duration=f"{duration.total_seconds():.1f}s",
            codebase=inputs.codebase, configuration=config,
            families_run=ran, families_skipped=skipped,
            language_shares={k: n / len(sampled) for k, n in
                             sorted(langs.items(), key=lambda kv: (-kv[1], kv[0]))},
            scored_items=len({item_key(r) for r in records if r.error is None}),
            error_items=len({item_key(r) for r in records if r.error is not None})),
        rankings=rankings,
        detailed=Detailed(by_model=by_model, by_language=by_language,
                          by_code_type=by_code_type),
        comparisons=head_to_head(rankings, statistics.significance_tests,
                                 statistics.unit_scores, records, breakdowns=breakdowns,
                                 by_language=by_language, by_code_type=by_code_type,
                                 scoring=scoring, summary_words={m: mean_words(s)
                                                for m, s in summaries_by_model.items()},
                                 failures=failures),
        statistics=statistics,
        failures=failures,
        costs=costs,
        errors=[ErrorCount(model_id=m, evaluator=e, count=len(msgs), examples=msgs[:3])
                for (m, e), msgs in sorted(errors.items())],
        evaluator_details=dict(inputs.evaluator_details),
        recommendations=recommendations(rankings, costs, by_language,
                                        statistics.significance_tests),
        baseline=inputs.baseline,
        gate_failures=list(inputs.gate_failures),
        basis=ranking_basis(breakdowns, scoring, means),
    )
    if inputs.baseline is not None:
        for r in report.rankings:
            r.delta_from_baseline = inputs.baseline.deltas.get(r.model_id)
    return report
