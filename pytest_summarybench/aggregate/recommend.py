"""Head-to-head comparisons and the report's recommendations, derived from the run's
figures: each sentence carries the numbers that support it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..schemas import GeneratedSummary, ScoreRecord
from ..schemas.report import (
    Costs,
    Failures,
    GroupScores,
    ModelComparison,
    ModelRanking,
    Recommendation,
    SignificanceTest,
)
from .pairs import PairData, judge_record
from .patterns import word_count
from .scores import FamilyBreakdown
from .scoring import Scoring

LANGUAGE_NAMES: dict[str, str] = {
    "typescript": "TypeScript", "javascript": "JavaScript", "python": "Python", "go": "Go",
    "java": "Java", "rust": "Rust", "csharp": "C#", "ruby": "Ruby", "php": "PHP",
    "kotlin": "Kotlin",
}
#: Differences smaller than this are not called a strength.
MIN_MARGIN = 0.01
#: A language or code type with fewer units is too small to single out in the text (it
#: stays in the tables): one unit more or less would flip the claim.
MIN_GROUP_UNITS = 3
MAX_STRENGTHS = 5


def language_name(key: str) -> str:
    return LANGUAGE_NAMES.get(key, key)


def mean_words(summaries: Sequence[GeneratedSummary]) -> float | None:
    # An int sum divided once: the same float statistics.mean gives, without its
    # exact-fraction arithmetic (a tenth of a second per 10,000 summaries).
    return sum(word_count(s.summary) for s in summaries) / len(summaries) if summaries \
        else None


def strengths(a: str, b: str, *, scoring: Scoring, breakdowns: Mapping[str, FamilyBreakdown],
              by_language: Mapping[str, GroupScores], by_code_type: Mapping[str, GroupScores],
              summary_words: Mapping[str, float | None], failures: Failures) -> list[str]:
    """Where ``a`` does better than ``b``, largest margins first (``summary_words``: each
    model's mean summary length in words)."""
    found: list[tuple[float, str]] = []
    fa, fb = breakdowns[a], breakdowns[b]
    for family, comps in fa.components.items():
        for name, va in comps.items():
            vb = fb.components.get(family, {}).get(name)
            if vb is not None and va - vb >= MIN_MARGIN:
                label = scoring.label(family, name)
                found.append((va - vb, f"Better {label} ({va:.2f} vs {vb:.2f}, "
                                       f"+{va - vb:.2f})"))
    for groups, what in ((by_language, "language"), (by_code_type, "type")):
        for key, g in groups.items():
            if g.units < MIN_GROUP_UNITS:
                continue
            ga, gb = g.overall_by_model.get(a), g.overall_by_model.get(b)
            if ga is not None and gb is not None and ga - gb >= MIN_MARGIN:
                where = (f"{language_name(key)} code" if what == "language" else f"{key} units")
                found.append((ga - gb, f"Stronger on {where} ({ga:.2f} vs {gb:.2f})"))
    wa, wb = summary_words.get(a), summary_words.get(b)
    if wa is not None and wb is not None and wa <= 0.85 * wb:
        found.append(((wb - wa) / wb / 10, f"More concise summaries ({wa:.0f} vs {wb:.0f} "
                                           "words on average)"))
    pa = failures.by_model.get(a)
    pb = failures.by_model.get(b)
    if pa is not None and pb is not None:
        for category in sorted(set(pb.patterns)):
            na, nb = pa.patterns.get(category, 0), pb.patterns[category]
            if nb - na >= 2:
                label = category.replace("_", " ")
                found.append(((nb - na) / 1000, f"Fewer low scores with {label} "
                                                f"({na} vs {nb} units)"))
    found.sort(key=lambda f: (-f[0], f[1]))
    return [text for _, text in found[:MAX_STRENGTHS]]


def head_to_head(rankings: Sequence[ModelRanking], tests: Sequence[SignificanceTest],
                 unit_overall: Mapping[str, Mapping[str, float]],
                 records: Sequence[ScoreRecord], **figures: object) -> list[ModelComparison]:
    """A comparison for every pair of ranked models (higher-ranked as A), from the
    overall-score tests; ``figures`` are the keyword arguments of ``strengths``."""
    by_pair = {(t.model_a, t.model_b): t for t in tests if t.metric == "overall"}
    overall = {r.model_id: r.overall_score for r in rankings}
    out: list[ModelComparison] = []
    ordered = [r.model_id for r in rankings if r.units]
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            test = by_pair.get((a, b))
            data = PairData.shared(unit_overall.get(a, {}), unit_overall.get(b, {}))
            verdicts = judge_record(records, a, b)
            diff = overall[a] - overall[b]
            out.append(ModelComparison(
                model_a=a, model_b=b,
                winner=a if diff > 0 else b if diff < 0 else "tie",
                score_difference=diff,
                mean_unit_difference=test.mean_difference if test else None,
                significant=bool(test and test.significant),
                p_value=test.p_adjusted if test else None,
                confidence_interval=test.confidence_interval if test else None,
                units=len(data.units),
                pairwise_record=verdicts or data.record(),
                pairwise_source="judge/pairwise" if verdicts else "units",
                strengths_a=strengths(a, b, **figures),  # type: ignore[arg-type]
                strengths_b=strengths(b, a, **figures),  # type: ignore[arg-type]
            ))
    return out


def _best_overall(best: ModelRanking, others: Sequence[ModelRanking],
                  tests: Sequence[SignificanceTest] = ()) -> Recommendation:
    """The highest-quality model, or, when the top group ties, no single best: a model
    with the same overall score or sharing a significance group with the leader cannot be
    told apart from it, and recommending one of them would be reading noise. Only equal
    scores are called tied; a difference the test cannot confirm is "not significant",
    with its p-value."""
    peers = [r for r in others if r.overall_score == best.overall_score
             or set(r.significance_group) & set(best.significance_group)]
    against = _reversed(best, others, tests)
    if against is not None:
        # The ranking's overall scores and the paired test on per-unit scores disagree in
        # direction (the two are averaged over different items): name no best.
        other, test = against
        per_unit = (test.mean_difference if test.model_a == best.model_id
                    else -test.mean_difference)
        return Recommendation(
            kind="no_single_best", title="No single best", model_id=best.model_id,
            text=f"{best.model_id} ranks first on the overall score "
                 f"({best.overall_score:.3f} against {other.overall_score:.3f}), but "
                 f"{other.model_id} scores higher unit by unit (mean per-unit difference "
                 f"{per_unit:+.3f}, p = {test.p_adjusted:.3g}, significant): the two "
                 "measures disagree, so neither is named best")
    if not peers:
        return Recommendation(kind="best_overall", title="Best overall", model_id=best.model_id,
                              text=f"{best.model_id} for highest quality "
                                   f"(overall {best.overall_score:.3f})")
    tied = [r for r in peers if r.overall_score == best.overall_score]
    close = [r for r in peers if r.overall_score != best.overall_score]
    p_of = {(t.model_a, t.model_b): t.p_adjusted for t in tests if t.metric == "overall"}
    parts = []
    if tied:
        names = ", ".join(r.model_id for r in [best, *tied][:-1]) + f" and {tied[-1].model_id}"
        parts.append(f"{names} are tied: the same overall score, {best.overall_score:.3f}")
    if close:
        behind = []
        for r in close:
            p = p_of.get((best.model_id, r.model_id), p_of.get((r.model_id, best.model_id)))
            figure = f"{r.overall_score:.3f}" + (f", p = {p:.3g}" if p is not None else "")
            behind.append(f"{r.model_id} ({figure})")
        parts.append(f"{best.model_id} ({best.overall_score:.3f}) is ahead of "
                     f"{', '.join(behind)} by a difference that is not significant (paired "
                     "t-tests on per-unit overall scores, Holm-corrected)")
    return Recommendation(kind="no_single_best", title="No single best",
                          model_id=best.model_id, text="; ".join(parts))


def _reversed(best: ModelRanking, others: Sequence[ModelRanking],
              tests: Sequence[SignificanceTest]) -> tuple[ModelRanking, SignificanceTest] | None:
    """A model ranked below ``best`` that the paired test on per-unit overall scores finds
    significantly better than it, with that test (None when there is none)."""
    for other in others:
        for t in tests:
            if t.metric != "overall" or not t.significant:
                continue
            if (t.model_a, t.model_b) == (best.model_id, other.model_id) \
                    and t.mean_difference < 0:
                return other, t
            if (t.model_a, t.model_b) == (other.model_id, best.model_id) \
                    and t.mean_difference > 0:
                return other, t
    return None


def recommendations(rankings: Sequence[ModelRanking], costs: Costs,
                    by_language: Mapping[str, GroupScores],
                    tests: Sequence[SignificanceTest] = ()) -> list[Recommendation]:
    """Best overall, best value, best per language where it differs, and a budget option
    (``tests``: the run's significance tests, whose p-values a "no single best" quotes)."""
    ranked = [r for r in rankings if r.units]
    if not ranked:
        return []
    best = ranked[0]
    out: list[Recommendation] = [_best_overall(best, ranked[1:], tests)]

    priced = [(costs.by_model[r.model_id], r) for r in ranked
              if r.model_id in costs.by_model
              and costs.by_model[r.model_id].cost_per_quality_point is not None]
    best_cost = costs.by_model.get(best.model_id)
    if not any(c.per_1k_summaries for c, _ in priced):
        # Every priced model was free (built-ins, local models): no cost to compare, so no
        # value or budget advice ("$0.0000 per quality point" says nothing).
        priced = []
    if priced:
        value_cost, value = min(priced, key=lambda p: (p[0].cost_per_quality_point,
                                                       -p[1].overall_score, p[1].model_id))
        per_point = value_cost.cost_per_quality_point or 0.0
        detail = f"${per_point:.4f} per quality point per 1K summaries"
        if value.model_id != best.model_id and best_cost and best_cost.per_1k_summaries:
            share = (value_cost.per_1k_summaries or 0.0) / best_cost.per_1k_summaries
            detail = (f"rank {value.rank} at {share:.0%} of the cost of {best.model_id}; "
                      + detail)
        out.append(Recommendation(kind="best_value", title="Best value",
                                  model_id=value.model_id, text=f"{value.model_id} ({detail})"))

    for key, group in by_language.items():
        if group.units < MIN_GROUP_UNITS:
            continue
        scored = sorted(group.overall_by_model.items(), key=lambda kv: (-kv[1], kv[0]))
        if not scored or scored[0][0] == best.model_id:
            continue
        lead, score = scored[0]
        theirs = group.overall_by_model.get(best.model_id)
        if theirs is not None and score - theirs < MIN_MARGIN:
            continue
        versus = f" vs {best.model_id} {theirs:.2f}" if theirs is not None else ""
        out.append(Recommendation(
            kind="language", model_id=lead, title=f"For {language_name(key)}-heavy codebases",
            text=f"consider {lead} ({score:.2f}{versus}, {group.units} units)"))

    best_price = best_cost.per_1k_summaries if best_cost else None
    cheaper = [(c, r) for c, r in priced if r.model_id != best.model_id
               and c.per_1k_summaries is not None
               and (best_price is None or c.per_1k_summaries < best_price)]
    if cheaper:
        c, r = min(cheaper, key=lambda p: (p[0].per_1k_summaries, -p[1].overall_score,
                                           p[1].model_id))
        out.append(Recommendation(
            kind="budget", title="Budget option", model_id=r.model_id,
            text=f"{r.model_id} at ${c.per_1k_summaries:.2f} per 1K summaries, with a quality "
                 f"tradeoff of {best.overall_score - r.overall_score:.3f} overall"))
    return out
