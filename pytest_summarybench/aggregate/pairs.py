"""Paired statistics between models on per-unit scores (docs/methods.md#significance): tests for
every pair and metric, Holm-corrected per metric, and the significance groups of the ranking."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..schemas import ScoreRecord
from ..schemas.report import PairwiseRecord, SignificanceTest
from ..stats.significance import (
    ALPHA,
    bootstrap_interval,
    holm,
    minimum_detectable_difference,
    paired_t_test,
    power,
    significance_groups,
)

#: Two per-unit scores closer than this count as a tie in the pairwise record.
TIE_TOLERANCE = 1e-9


def pair_seed(seed: int, *names: str) -> int:
    """A bootstrap seed for one comparison: the run seed and the names, order-free of
    whatever else is compared in the run, so a pair's interval never depends on the others."""
    digest = hashlib.sha256("\x1f".join((str(seed), *names)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class PairData:
    """Both models' scores on the units they share, in unit id order."""

    units: list[str]
    a: list[float]
    b: list[float]

    @classmethod
    def shared(cls, a: Mapping[str, float], b: Mapping[str, float]) -> PairData:
        units = sorted(set(a) & set(b))
        return cls(units, [a[u] for u in units], [b[u] for u in units])

    def record(self) -> PairwiseRecord:
        rec = PairwiseRecord()
        for x, y in zip(self.a, self.b, strict=True):
            if abs(x - y) <= TIE_TOLERANCE:
                rec.ties += 1
            elif x > y:
                rec.a_wins += 1
            else:
                rec.b_wins += 1
        return rec


def judge_record(records: Sequence[ScoreRecord], a: str, b: str) -> PairwiseRecord | None:
    """A's record against B in the pairwise judge's verdicts (each verdict is recorded
    once per model; A's records against B are counted), None when there are none."""
    rec = PairwiseRecord()
    for r in records:
        if (r.evaluator != "judge/pairwise" or r.error is not None or r.model_id != a
                or r.details.get("opponent") != b or "win" not in r.metrics):
            continue
        win = r.metrics["win"]
        if win > 0.5:
            rec.a_wins += 1
        elif win < 0.5:
            rec.b_wins += 1
        else:
            rec.ties += 1
    return rec if rec.a_wins + rec.b_wins + rec.ties else None


def compare_pair(model_a: str, model_b: str, metric: str, data: PairData, *,
              seed: int) -> SignificanceTest | None:
    """The paired test of A against B on ``metric`` (unadjusted; see ``compare_all_pairs``).

    None when fewer than two units were scored for both.
    """
    n = len(data.units)
    if n < 2:
        return None
    t = paired_t_test(data.a, data.b)
    diffs = [x - y for x, y in zip(data.a, data.b, strict=True)]
    mean = t.mean_difference
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    ci = bootstrap_interval(data.a, data.b, seed=pair_seed(seed, metric, model_a, model_b))
    return SignificanceTest(
        model_a=model_a, model_b=model_b, metric=metric, mean_difference=mean,
        p_value=t.p_value, p_adjusted=t.p_value, significant=t.p_value < ALPHA,
        confidence_interval=ci, t_statistic=t.t_statistic, units=n,
        minimum_detectable_difference=minimum_detectable_difference(sd, n),
        power=power(mean, sd, n))


def compare_all_pairs(scores: Mapping[str, Mapping[str, float]], ordered: Sequence[str],
                   metric: str, *, seed: int) -> list[SignificanceTest]:
    """Every pair of ``ordered`` models (the higher-ranked one as A) on ``metric``, with
    Holm's correction across all the pairs tested; ``significant`` uses the adjusted p."""
    tests: list[SignificanceTest] = []
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            test = compare_pair(a, b, metric, PairData.shared(scores.get(a, {}),
                                                           scores.get(b, {})), seed=seed)
            if test is not None:
                tests.append(test)
    for test, adjusted in zip(tests, holm([t.p_value for t in tests]), strict=True):
        test.p_adjusted = adjusted
        test.significant = adjusted < ALPHA
    return tests


def groups_from_tests(ordered: Sequence[str], tests: Sequence[SignificanceTest]
                      ) -> dict[str, str]:
    """Significance group letters of the ranking from the overall-score tests."""
    significant = {frozenset((t.model_a, t.model_b)): t.significant for t in tests
                   if t.metric == "overall"}
    return significance_groups(list(ordered), significant)
