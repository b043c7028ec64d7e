"""The validity analysis: from the ladder models' score records to the report's
``validity`` section.

Per evaluator family, on the per-unit family scores of ``aggregate.unit_breakdowns`` (the
same observations the ranking's significance tests use): the mean score of each level,
Kendall's tau-b between the known and the measured order, a paired t-test for each
adjacent step (Holm-corrected over the three steps, with the smallest step detectable at
this sample size), and the A/A check of level 1 against its twin, repeated on
``AA_RESEEDS`` bootstrap resamples of the units. For the judge family, each judge's own
order of the ladder, its position flip rate (``judges.audit.position_bias``) and the
agreement between judges (``judges.agreement.judge_agreement``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..aggregate.pairs import PairData, compare_pair, pair_seed
from ..aggregate.scores import unit_breakdowns
from ..aggregate.scoring import Scoring, builtin_scoring
from ..generate.ladder import LEVEL_IDS, TWIN, is_ladder_model, level_name
from ..schemas import BenchmarkConfig, ScoreRecord
from ..schemas.report import (
    ExternalValidity,
    ValidityFamily,
    ValidityJudge,
    ValiditySection,
    ValidityStep,
)
from ..stats.significance import ALPHA, holm, paired_t_test
from . import external

#: Bootstrap reseeds of the A/A test.
AA_RESEEDS = 20
#: A judge whose verdicts flip this often under a position swap is flagged.
FLIP_FLAG = 0.25


def ladder_tau(means: Sequence[float]) -> float | None:
    """Kendall's tau-b (``external.kendall_tau``) between the ladder's known order
    (``means`` given best level first) and the order of ``means``; None when all are
    equal (no order was measured)."""
    if len(means) < 2:
        return None
    levels = [f"level {i + 1}" for i in range(len(means))]
    known = {name: float(len(means) - i) for i, name in enumerate(levels)}
    return external.kendall_tau(known, dict(zip(levels, means, strict=True)))


def aa_rate(a: Sequence[float], b: Sequence[float], *, seed: int,
            reseeds: int = AA_RESEEDS) -> float | None:
    """Share of ``reseeds`` bootstrap resamples of the pairs in which a paired t-test
    finds ``a`` and ``b`` significantly different (alpha 0.05)."""
    xa, xb = np.asarray(a, float), np.asarray(b, float)
    if xa.size < 2:
        return None
    hits = 0
    for k in range(reseeds):
        rng = np.random.default_rng(pair_seed(seed, "aa", str(k)))
        idx = rng.integers(0, xa.size, xa.size)
        if paired_t_test(xa[idx], xb[idx]).p_value < ALPHA:
            hits += 1
    return hits / reseeds


def family_validity(family: str, scores: Mapping[str, Mapping[str, float]], *,
                    seed: int) -> ValidityFamily | None:
    """The ladder analysis of one family from level -> unit -> per-unit family score."""
    levels = [m for m in LEVEL_IDS if scores.get(m)]
    if len(levels) < len(LEVEL_IDS):
        return None
    shared = sorted(set.intersection(*(set(scores[m]) for m in LEVEL_IDS)))
    if not shared:
        return None
    means = {m: float(np.mean([scores[m][u] for u in shared])) for m in LEVEL_IDS}
    tau = ladder_tau([means[m] for m in LEVEL_IDS])
    out = ValidityFamily(
        family=family, units=len(shared), means=means, kendall_tau=tau,
        measured_order=sorted(LEVEL_IDS, key=lambda m: (-means[m], LEVEL_IDS.index(m))))
    tests = []
    for better, worse in zip(LEVEL_IDS, LEVEL_IDS[1:], strict=False):
        data = PairData(shared, [scores[better][u] for u in shared],
                        [scores[worse][u] for u in shared])
        tests.append(compare_pair(better, worse, family, data, seed=seed))
    present = [t for t in tests if t is not None]
    for test, adjusted in zip(present, holm([t.p_value for t in present]), strict=True):
        out.steps.append(ValidityStep(
            better=test.model_a, worse=test.model_b, mean_difference=test.mean_difference,
            p_value=test.p_value, p_adjusted=adjusted,
            significant=adjusted < ALPHA and test.mean_difference > 0, units=test.units,
            minimum_detectable_difference=test.minimum_detectable_difference))
    twin = scores.get(TWIN[0], {})
    aa_units = sorted(set(scores[LEVEL_IDS[0]]) & set(twin))
    aa_significant = False
    if len(aa_units) >= 2:
        a = [scores[LEVEL_IDS[0]][u] for u in aa_units]
        b = [twin[u] for u in aa_units]
        t = paired_t_test(a, b)
        out.aa_units, out.aa_mean_difference, out.aa_p_value = len(aa_units), \
            t.mean_difference, t.p_value
        out.aa_significant_rate = aa_rate(a, b, seed=pair_seed(seed, "aa", family))
        out.aa_reseeds = AA_RESEEDS
        aa_significant = t.p_value < ALPHA
    weak = [f"{level_name(s.better)} > {level_name(s.worse)}"
            for s in out.steps if not s.significant]
    if tau is None or tau <= 0.0:
        out.status, out.flagged = "cannot order", True
        out.note = ("scored every level the same" if tau is None
                    else f"measured order {_order(out.measured_order)} (tau {tau:+.2f})")
    elif tau < 1.0 and any(s.p_adjusted < ALPHA and s.mean_difference < 0
                           for s in out.steps):
        out.status, out.flagged = "partial order", True
        out.note = f"measured order {_order(out.measured_order)} (tau {tau:+.2f})"
    elif tau < 1.0:
        # Out of order only where the steps are not told apart (two levels tied at 0 on a
        # small codebase): too few units to tell, not an instrument to distrust.
        out.status = "low resolution"
        out.note = (f"measured order {_order(out.measured_order)} (tau {tau:+.2f}), no step "
                    f"significantly reversed at {len(shared)} units: "
                    f"{', '.join(weak) or 'none'} not significant")
    elif aa_significant:
        out.status, out.flagged = "cannot order", True
        out.note = "the same summaries under two names came out significantly different"
    elif weak:
        out.status = "low resolution"
        out.note = (f"ordered, but not significant at {len(shared)} units: "
                    f"{', '.join(weak)}")
    return out


def _order(models: Sequence[str]) -> str:
    return " > ".join(level_name(m) for m in models)


def _per_judge(records: Sequence[ScoreRecord]) -> tuple[list[ValidityJudge], dict[str, Any]]:
    from ..evaluators.judge.agreement import judge_agreement
    from ..evaluators.judge.audit import position_bias
    from ..evaluators.judge.pairwise import verdicts_of

    pointwise: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    rubric_labels: dict[str, dict[Any, int]] = defaultdict(dict)
    for r in records:
        if (r.evaluator == "judge/pointwise" and r.error is None
                and "weighted_average" in r.metrics and "judge" in r.details):
            value = float(r.metrics["weighted_average"])
            pointwise[r.details["judge"]][r.model_id].append(value)
            rubric_labels[r.details["judge"]][(r.unit_id, r.model_id)] = int(
                min(5, max(1, round(value))))
    verdicts = verdicts_of([r for r in records if r.evaluator == "judge/pairwise"])
    by_judge: dict[str, list[Any]] = defaultdict(list)
    pair_labels: dict[str, dict[Any, str]] = defaultdict(dict)
    for v in verdicts:
        by_judge[v.judge].append(v)
        pair_labels[v.judge][(v.unit_id, v.pair, v.first)] = (
            "tie" if v.winner == "tie" else "first" if v.winner == v.first else "second")
    judges: list[ValidityJudge] = []
    for judge in sorted(set(pointwise) | set(by_judge)):
        row = ValidityJudge(judge=judge)
        per_level = pointwise.get(judge, {})
        if all(per_level.get(m) for m in LEVEL_IDS):
            row.pointwise_means = {m: float(np.mean(per_level[m])) for m in LEVEL_IDS}
            row.pointwise_tau = ladder_tau([row.pointwise_means[m] for m in LEVEL_IDS])
        notes = []
        if row.pointwise_means and (row.pointwise_tau is None or row.pointwise_tau < 1.0):
            notes.append("its rubric scores do not order the ladder")
        if by_judge.get(judge):
            pos = position_bias(by_judge[judge])
            row.flip_rate, row.swapped_pairs = pos["flipRate"], pos["swappedPairs"]
            row.first_position_win_rate, row.tie_rate = (pos["firstPositionWinRate"],
                                                         pos["tieRate"])
            if row.flip_rate is not None and row.flip_rate >= FLIP_FLAG:
                notes.append(f"{row.flip_rate:.0%} of its ladder verdicts flipped when the "
                             f"summaries swapped places")
        row.flagged, row.note = bool(notes), "; ".join(notes)
        judges.append(row)
    agreement: dict[str, Any] = {}
    if len(rubric_labels) >= 2:
        agreement["rubric"] = judge_agreement(rubric_labels, categories=[1, 2, 3, 4, 5],
                                              weights="quadratic")
    if len(pair_labels) >= 2:
        agreement["pairwise"] = judge_agreement(pair_labels,
                                                categories=["first", "second", "tie"])
    return judges, agreement


def verdict(section: ValiditySection) -> str:
    """The sentence that heads the validity section: which families order the ladder
    (their tau and status) and which to distrust."""
    if not section.families:
        return "no evaluator family scored the known-answer ladder: nothing was checked"
    trusted = [f for f in section.families if not f.flagged]
    distrusted = [f for f in section.families if f.flagged]

    def listed(families: list[ValidityFamily]) -> str:
        # Ordering the ladder is not ordering real queries: a family whose every measured
        # evaluator failed external validation says so where its ladder verdict is read.
        return ", ".join(f"{f.family} (tau {_tau(f.kendall_tau)}, {f.status}"
                         + ("; but failed external validation"
                            if f.external and not any(e.validated for e in f.external)
                            else "") + ")"
                         for f in families)

    parts = []
    if distrusted:
        parts.append(f"DISTRUST {listed(distrusted)}: "
                     f"{'it does' if len(distrusted) == 1 else 'they do'} not order the "
                     "known-answer ladder")
    if trusted:
        who = ("every family that scored it orders" if not distrusted
               else "the other family orders" if len(trusted) == 1
               else "the other families order")
        parts.append(f"{who} the known-answer ladder: {listed(trusted)}")
    judges = [j.judge for j in section.judges if j.flagged]
    if judges:
        parts.append(f"distrust judge{'s' if len(judges) > 1 else ''} {', '.join(judges)}")
    return "; ".join(parts)


def _tau(tau: float | None) -> str:
    return "none" if tau is None else f"{tau:+.2f}"


def analyze(records: Sequence[ScoreRecord], config: BenchmarkConfig,
            ladder_units: int, scoring: Scoring | None = None, *,
            external: Mapping[str, ExternalValidity] | None = None) -> ValiditySection:
    """The validity section from the ladder models' records of a run (``scoring``: the
    run's; default the built-in evaluators' under ``config``; ``external``: the figures
    against real queries by family or evaluator name, default ``external.json``'s)."""
    from .quote import external_for, load_external

    scoring = scoring or builtin_scoring(config)
    table = load_external() if external is None else external
    ladder = [r for r in records if is_ladder_model(r.model_id)]
    models = sorted({r.model_id for r in ladder if len(r.models) == 1})
    per_unit = unit_breakdowns(ladder, scoring, models)
    section = ValiditySection(levels=list(LEVEL_IDS), twin=TWIN[0], ladder_units=ladder_units)
    for family in scoring.families:
        scores = {m: {u: fb.families[family] for u, fb in units.items()
                      if family in fb.families} for m, units in per_unit.items()}
        result = family_validity(family, scores, seed=config.seed)
        if result is not None:
            mine = {c.evaluator for c in scoring.components if c.family == family}
            ran = {r.evaluator for r in ladder if r.evaluator in mine}
            result.external = external_for(family, ran, table)
            section.families.append(result)
            if result.flagged:
                section.flagged.append(f"{family}: {result.note}")
    section.judges, section.judge_agreement = _per_judge(ladder)
    for judge in section.judges:
        if judge.flagged:
            section.flagged.append(f"judge {judge.judge}: {judge.note}")
    section.verdict = verdict(section)
    return section
