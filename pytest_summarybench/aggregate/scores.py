"""Normalization and weighting of spec section 9.1.

Every family score is a weighted combination of components, each the mean of one metric
of one evaluator over the items it scored, normalized to 0-1. Components that did not run
are left out and the remaining weights renormalized; the same rule combines families into
the overall score, so a run without a judge ranks on the families that ran and says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..schemas import BenchmarkConfig, ScoreRecord
from ..vocabulary import FAMILIES


@dataclass(frozen=True)
class Component:
    """One input of a family score: the mean of ``metric`` over ``evaluator``'s records."""

    family: str
    name: str
    """The weight's key in ``ScoringConfig`` (``pointwise``, ``precision1``...)."""
    evaluator: str
    metric: str
    normalize: Callable[[float], float] = staticmethod(lambda x: x)  # type: ignore[assignment]


def _rubric_to_unit(x: float) -> float:
    """Judge rubric scores are 1-5; spec 9.1 maps them to 0-1 as (x - 1) / 4."""
    return (x - 1.0) / 4.0


#: Spec 9.1: which metric of which evaluator feeds which component of which family.
COMPONENTS: tuple[Component, ...] = (
    Component("judge", "pointwise", "judge/pointwise", "weighted_average", _rubric_to_unit),
    Component("judge", "pairwise", "judge/pairwise", "win"),
    Component("contrastive", "embedding", "contrastive/embedding", "correct"),
    Component("contrastive", "llm", "contrastive/llm", "correct"),
    Component("retrieval", "precision1", "retrieval/embedding", "hit@1"),
    Component("retrieval", "precision5", "retrieval/embedding", "hit@5"),
    Component("retrieval", "mrr", "retrieval/embedding", "reciprocal_rank"),
    Component("downstream", "completion", "downstream/completion", "pass_rate"),
    Component("downstream", "bug_localization", "downstream/bug_localisation", "success"),
    Component("downstream", "function_selection", "downstream/function_selection", "success"),
)


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


def component_weights(config: BenchmarkConfig) -> dict[str, dict[str, float]]:
    """family -> component -> weight, from the config (spec 9.2 defaults)."""
    # ``ScoringConfig`` has one ``<family>Weights`` section per family (spec 9.2).
    return {f: getattr(config.scoring, f"{f}_weights").model_dump() for f in FAMILIES}


def weighted(values: dict[str, float], weights: dict[str, float]) -> float | None:
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


def family_scores(records: list[ScoreRecord], config: BenchmarkConfig,
                  model_ids: Iterable[str]) -> dict[str, FamilyBreakdown]:
    """Per model: components, family scores and the overall score of spec 9.1."""
    return _family_scores(records, component_weights(config), config.weights.model_dump(),
                          model_ids)


def _family_scores(records: list[ScoreRecord], cweights: dict[str, dict[str, float]],
                   fweights: dict[str, float], model_ids: Iterable[str]
                   ) -> dict[str, FamilyBreakdown]:
    means = metric_means(records)
    out: dict[str, FamilyBreakdown] = {}
    for model_id in model_ids:
        fb = FamilyBreakdown(model_id=model_id)
        model_means = means.get(model_id, {})
        for comp in COMPONENTS:
            value = model_means.get((comp.evaluator, comp.metric))
            if value is not None:
                fb.components.setdefault(comp.family, {})[comp.name] = comp.normalize(value)
        for family in FAMILIES:
            comps = fb.components.get(family)
            if comps:
                score = weighted(comps, cweights[family])
                if score is not None:
                    fb.families[family] = score
        out[model_id] = fb
    # Models are compared on the same footing: the overall score combines only the
    # families every scored model has (a model with no eligible judge, say, would
    # otherwise be ranked on other instruments than its neighbours).
    common = shared_families(out.values())
    for fb in out.values():
        fb.overall = weighted({f: v for f, v in fb.families.items() if f in common}, fweights)
    for rec in records:
        # A pairwise item ("a~b") counts for both of its models.
        for model_id in rec.model_id.split("~"):
            if model_id in out:
                if rec.error is None:
                    out[model_id].items += 1
                else:
                    out[model_id].errors += 1
    return out


def unit_breakdowns(records: list[ScoreRecord], config: BenchmarkConfig,
                    model_ids: Iterable[str]) -> dict[str, dict[str, FamilyBreakdown]]:
    """model -> unit -> the spec 9.1 breakdown restricted to that unit's records.

    These are the paired observations of the significance tests: a model's per-unit score
    weighs that unit's components exactly as ``family_scores`` weighs the run's means.
    Units where a model has no score are absent from its mapping.
    """
    models = list(model_ids)
    by_unit: dict[str, list[ScoreRecord]] = defaultdict(list)
    for rec in records:
        by_unit[rec.unit_id].append(rec)
    out: dict[str, dict[str, FamilyBreakdown]] = {m: {} for m in models}
    # The weights once, not once per unit (reading them from the config is not free).
    cweights, fweights = component_weights(config), config.weights.model_dump()
    for unit_id in sorted(by_unit):
        for model_id, fb in _family_scores(by_unit[unit_id], cweights, fweights,
                                           models).items():
            if fb.overall is not None:
                out[model_id][unit_id] = fb
    return out
