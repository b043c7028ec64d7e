"""Normalization and weighting of docs/methods.md#aggregation.

Every family score is a weighted combination of components (``scoring.py``: what the
evaluators declare), each the mean of one metric of one evaluator over the items it
scored, normalized to 0-1. Components that did not run
are left out and the remaining weights renormalized; the same rule combines families into
the overall score, so a run without a judge ranks on the families that ran and says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..schemas import ScoreRecord
from .scoring import ScoreComponent, Scoring


@dataclass
class FamilyBreakdown:
    """One model's scores: components, families and overall, all on 0-1."""

    model_id: str
    components: dict[str, dict[str, float]] = field(default_factory=dict)
    """family -> component -> normalized mean."""
    families: dict[str, float] = field(default_factory=dict)
    """family -> weighted combination of its components that ran."""
    overall: float | None = None
    items: int = 0
    errors: int = 0


def weighted(values: Mapping[str, float], weights: Mapping[str, float]) -> float | None:
    """Weighted mean over the keys present in ``values``, weights renormalized.

    None when nothing with a positive weight is present.
    """
    total = sum(weights.get(k, 0.0) for k in values)
    if total <= 0:
        return None
    return sum(values[k] * weights.get(k, 0.0) for k in sorted(values)) / total


def metric_means(records: Iterable[ScoreRecord]) -> dict[str, dict[tuple[str, str], float]]:
    """model -> (evaluator, metric) -> mean over the model's scored records.

    Records are summed in node id order so that the result is bit-identical whatever
    order xdist delivered them in.
    """
    sums: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    for rec in sorted(records, key=lambda r: (r.nodeid, r.unit_id, r.model_id, r.evaluator)):
        if rec.error is not None:
            continue
        for metric, value in rec.metrics.items():
            sums[rec.model_id][(rec.evaluator, metric)].append(float(value))
    return {m: {k: sum(v) / len(v) for k, v in per.items()} for m, per in sums.items()}


def shared_families(breakdowns: Iterable[FamilyBreakdown]) -> set[str]:
    """The families scored for every model that has any score."""
    scored = [set(fb.families) for fb in breakdowns if fb.families]
    return set.intersection(*scored) if scored else set()


def family_scores(records: list[ScoreRecord], scoring: Scoring,
                  model_ids: Iterable[str]) -> dict[str, FamilyBreakdown]:
    """Per model: components, family scores and the overall score of docs/methods.md#aggregation."""
    means = metric_means(records)
    out: dict[str, FamilyBreakdown] = {}
    for model_id in model_ids:
        fb = FamilyBreakdown(model_id=model_id)
        model_means = means.get(model_id, {})
        for comp in scoring.components:
            value = model_means.get((comp.evaluator, comp.metric))
            if value is not None:
                fb.components.setdefault(comp.family, {})[comp.weight_key] = \
                    comp.normalize(value)
        for family in scoring.families:
            comps = fb.components.get(family)
            if comps:
                score = weighted(comps, scoring.component_weights.get(family, {}))
                if score is not None:
                    fb.families[family] = score
        out[model_id] = fb
    # Models are compared on the same footing: the overall score combines only the
    # families every scored model has (a model with no eligible judge, say, would
    # otherwise be ranked on other instruments than its neighbours).
    common = shared_families(out.values())
    for fb in out.values():
        fb.overall = weighted({f: v for f, v in fb.families.items() if f in common},
                              scoring.family_weights)
    scored: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for rec in records:
        # A pairwise item ("a~b") counts for both of its models; its scores come as one
        # record per model and order, so items are counted by test, not by record.
        for model_id in rec.models:
            if model_id in out:
                if rec.error is None:
                    scored[model_id].add(item_key(rec))
                else:
                    out[model_id].errors += 1
    for model_id, keys in scored.items():
        out[model_id].items = len(keys)
    return out


def item_key(rec: ScoreRecord) -> tuple[str, ...]:
    """The matrix item (test) a record belongs to: its node id, or for a record made
    outside pytest, its unit, evaluator, judge and model or pair."""
    if rec.nodeid:
        return (rec.nodeid,)
    return (rec.unit_id, rec.evaluator, str(rec.details.get("judge", "")),
            str(rec.details.get("pair", rec.model_id)))


def unit_breakdowns(records: list[ScoreRecord], scoring: Scoring,
                    model_ids: Iterable[str]) -> dict[str, dict[str, FamilyBreakdown]]:
    """model -> unit -> the breakdown (docs/methods.md#aggregation) restricted to that unit's
    records.

    These are the paired observations of the significance tests: a model's per-unit score
    weighs that unit's components exactly as ``family_scores`` weighs the run's means.
    Units where a model has no score are absent from its mapping.
    """
    models = list(model_ids)
    by_unit: dict[str, list[ScoreRecord]] = defaultdict(list)
    for rec in records:
        by_unit[rec.unit_id].append(rec)
    out: dict[str, dict[str, FamilyBreakdown]] = {m: {} for m in models}
    for unit_id in sorted(by_unit):
        for model_id, fb in family_scores(by_unit[unit_id], scoring, models).items():
            if fb.overall is not None:
                out[model_id][unit_id] = fb
    return out


def evaluator_unit_scores(records: Iterable[ScoreRecord], scoring: Scoring
                          ) -> dict[tuple[str, str, str], float]:
    """(unit, model, evaluator) -> that evaluator's score on the unit, 0-1: the means of
    its declared components over the unit's records, normalized and weighted within its
    family as ``family_scores`` weighs a model's means (what the explorer shows beside
    each summary). Evaluators that declare no component have none; a pair's records
    (``a~b``, a failed pairwise item) carry no metric."""
    declared: dict[str, list[ScoreComponent]] = {}
    sums: dict[tuple[str, str, str, str], list[float]] = {}
    for rec in records:
        if rec.error is not None:
            continue
        comps = declared.setdefault(rec.evaluator, scoring.of(rec.evaluator))
        for c in comps:
            value = rec.metrics.get(c.metric)
            if value is not None:
                acc = sums.setdefault((rec.unit_id, rec.model_id, rec.evaluator, c.metric),
                                      [0.0, 0])
                acc[0] += value
                acc[1] += 1
    values: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for (unit, model, evaluator, metric), (total, n) in sums.items():
        for c in declared[evaluator]:
            if c.metric == metric:
                values[(unit, model, evaluator)][c.weight_key] = c.normalize(total / n)
    out: dict[tuple[str, str, str], float] = {}
    for item, components in values.items():
        family = declared[item[2]][0].family
        score = weighted(components, scoring.component_weights.get(family, {}))
        if score is not None:
            out[item] = score
    return out
