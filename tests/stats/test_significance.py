"""The statistics of docs/methods.md#significance checked against scipy and hand computations,
and the A/A and A/B behaviour of the significance decision the report makes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from pytest_summarybench.aggregate import ReportInputs, build_report
from pytest_summarybench.aggregate.pairs import PairData, compare_all_pairs
from pytest_summarybench.aggregate.scoring import builtin_scoring
from pytest_summarybench.schemas import BenchmarkConfig, CodebaseInfo, ScoreRecord
from pytest_summarybench.stats.significance import (
    bootstrap_interval,
    holm,
    mean_interval,
    minimum_detectable_difference,
    paired_t_test,
    power,
    significance_groups,
)


@pytest.mark.parametrize("seed", range(5))
def test_paired_t_test_equals_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    a = rng.beta(2, 2, n)
    b = np.clip(a + rng.normal(0.02 * seed - 0.04, 0.1, n), 0, 1)
    ours = paired_t_test(a.tolist(), b.tolist())
    ref = stats.ttest_rel(a, b)
    assert ours.t_statistic == pytest.approx(float(ref.statistic), abs=1e-9)
    assert ours.p_value == pytest.approx(float(ref.pvalue), abs=1e-9)
    assert ours.n == n and ours.degrees_of_freedom == n - 1


def test_paired_t_test_degenerate_samples() -> None:
    assert paired_t_test([0.5, 0.5], [0.5, 0.5]).p_value == 1.0
    constant = paired_t_test([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    assert constant.p_value == 0.0 and math.isinf(constant.t_statistic)
    with pytest.raises(ValueError, match="at least 2 pairs"):
        paired_t_test([1.0], [0.0])
    with pytest.raises(ValueError, match="equal length"):
        paired_t_test([1.0, 2.0], [0.0])


@pytest.mark.parametrize("seed", range(3))
def test_bootstrap_interval_matches_scipy_percentile(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = 80
    a = (rng.random(n) < 0.7).astype(float) * 0.5 + rng.beta(3, 2, n) * 0.5
    b = (rng.random(n) < 0.6).astype(float) * 0.5 + rng.beta(2, 3, n) * 0.5
    ours = bootstrap_interval(a.tolist(), b.tolist(), seed=seed)
    ref = stats.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                          paired=True, vectorized=True, method="percentile",
                          n_resamples=10_000, confidence_level=0.95,
                          rng=np.random.default_rng(seed + 1)).confidence_interval
    assert ours[0] == pytest.approx(ref.low, abs=0.005)
    assert ours[1] == pytest.approx(ref.high, abs=0.005)
    # Seeded: the same data and seed give the same interval.
    assert bootstrap_interval(a.tolist(), b.tolist(), seed=seed) == ours


def test_mean_interval_matches_scipy_percentile() -> None:
    x = np.random.default_rng(5).beta(2, 5, 120)
    ours = mean_interval(x.tolist(), seed=3)
    ref = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=10_000,
                          rng=np.random.default_rng(9)).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), abs=0.005)


def test_holm_equals_hand_computation() -> None:
    # Sorted: 0.01 (x4) = 0.04; 0.02 (x3) = 0.06; 0.03 (x2) = 0.06 (monotone max); 0.5 (x1).
    assert holm([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])
    # Capped at 1 and kept monotone: 0.3x3 = 0.9, 0.4x2 = 0.8 -> 0.9, 0.9x1 -> 0.9.
    assert holm([0.4, 0.3, 0.9]) == pytest.approx([0.9, 0.9, 0.9])
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_significance_groups_letters() -> None:
    order = ["a", "b", "c", "d"]
    sig = {frozenset(p): True for p in [("a", "c"), ("a", "d"), ("b", "d")]}
    assert significance_groups(order, sig) == {"a": "a", "b": "ab", "c": "bc", "d": "c"}
    assert significance_groups(order, {}) == dict.fromkeys(order, "a")
    every = {frozenset((x, y)): True for x in order for y in order if x != y}
    assert significance_groups(order, every) == {"a": "a", "b": "b", "c": "c", "d": "d"}


def test_minimum_detectable_difference_has_the_target_power() -> None:
    mde = minimum_detectable_difference(0.2, 50)
    assert mde is not None
    assert power(mde, 0.2, 50) == pytest.approx(0.8, abs=1e-6)
    # Normal approximation: (z_.975 + z_.8) * sd / sqrt(n) = 2.80 * 0.2 / 7.07 = 0.079.
    assert mde == pytest.approx(0.0792, abs=0.003)
    more = minimum_detectable_difference(0.2, 200)
    assert more is not None and more < mde  # more units, smaller MDE
    assert minimum_detectable_difference(0.2, 1) is None
    assert minimum_detectable_difference(0.0, 10) == 0.0


def test_compare_all_pairs_adjusts_with_holm() -> None:
    rng = np.random.default_rng(1)
    units = [f"u{i}" for i in range(40)]
    base = rng.random(40)
    scores = {m: dict(zip(units, np.clip(base + shift + rng.normal(0, 0.1, 40), 0, 1),
                          strict=True))
              for m, shift in (("x", 0.1), ("y", 0.05), ("z", 0.0))}
    tests = compare_all_pairs(scores, ["x", "y", "z"], "overall", seed=0)
    assert [(t.model_a, t.model_b) for t in tests] == [("x", "y"), ("x", "z"), ("y", "z")]
    assert [t.p_adjusted for t in tests] == pytest.approx(holm([t.p_value for t in tests]))
    ref = stats.ttest_rel(list(scores["x"].values()), list(scores["z"].values()))
    assert tests[1].p_value == pytest.approx(float(ref.pvalue), abs=1e-9)
    assert PairData.shared(scores["x"], {"u1": 0.0, "zz": 1.0}).units == ["u1"]


# -- A/A and A/B through the report's own path (records -> per-unit scores -> tests) ----

def _run(seed: int, shift: float, n_units: int = 60, models: int = 2) -> list[bool]:
    """One synthetic run; per pair, whether the report calls the difference significant.

    Every model's per-unit scores come from the same distribution (a unit difficulty, a
    contrastive hit and a retrieval rank), except that model ``m0`` gets ``shift`` more
    hit probability: shift 0 is an A/A run."""
    rng = np.random.default_rng(seed)
    records = []
    for u in range(n_units):
        difficulty = rng.uniform(0.2, 0.9)
        for m in range(models):
            p = min(1.0, difficulty + (shift if m == 0 else 0.0))
            hit = rng.random() < p
            rank = 1 if rng.random() < p else int(rng.integers(2, 11))
            records += [
                ScoreRecord(unit_id=f"u{u}", model_id=f"m{m}", evaluator="contrastive/embedding",
                            nodeid=f"{u}-{m}-c", metrics={"correct": float(hit)}),
                ScoreRecord(unit_id=f"u{u}", model_id=f"m{m}", evaluator="retrieval/embedding",
                            nodeid=f"{u}-{m}-r", metrics={"hit@1": float(rank == 1),
                                                          "hit@5": float(rank <= 5),
                                                          "reciprocal_rank": 1 / rank})]
    tests = _overall_tests(records, [f"m{m}" for m in range(models)], seed)
    return [t.significant for t in tests]


def _overall_tests(records: list[ScoreRecord], models: list[str], seed: int) -> list:
    from pytest_summarybench.aggregate import unit_breakdowns

    per_unit = unit_breakdowns(records, builtin_scoring(BenchmarkConfig()), models)
    scores = {m: {u: fb.overall for u, fb in units.items() if fb.overall is not None}
              for m, units in per_unit.items()}
    return compare_all_pairs(scores, models, "overall", seed=seed)


def test_aa_false_positive_rate_at_most_7_percent() -> None:
    """200 A/A runs of two models: the share that reports a significant difference."""
    flagged = [any(_run(seed, 0.0)) for seed in range(200)]
    rate = sum(flagged) / len(flagged)
    print(f"A/A false-positive rate over 200 seeds: {rate:.3f}")
    assert rate <= 0.07


def test_aa_family_wise_rate_with_four_models() -> None:
    """Holm holds the family-wise rate across the 6 pairs of 4 indistinguishable models."""
    flagged = [any(_run(seed, 0.0, models=4)) for seed in range(100)]
    rate = sum(flagged) / len(flagged)
    print(f"A/A any-pair rate, 4 models x 100 seeds: {rate:.3f}")
    assert rate <= 0.09


def test_ab_real_difference_is_detected() -> None:
    detected = [_run(1000 + seed, 0.2)[0] for seed in range(50)]
    rate = sum(detected) / len(detected)
    print(f"A/B detection rate (hit probability +0.2, 60 units) over 50 seeds: {rate:.3f}")
    assert rate >= 0.8


def test_report_statistics_from_records() -> None:
    records = []
    rng = np.random.default_rng(3)
    for u in range(30):
        for m, p in (("strong", 0.9), ("weak", 0.3)):
            records.append(ScoreRecord(unit_id=f"u{u}", model_id=m,
                                       evaluator="contrastive/embedding", nodeid=f"{u}{m}",
                                       metrics={"correct": float(rng.random() < p)}))
    start = __import__("datetime").datetime(2026, 1, 1)
    report = build_report(ReportInputs(
        run_id="r", name="n", config=BenchmarkConfig(), codebase=CodebaseInfo(name="c"),
        records=records, model_ids=["strong", "weak"], units=[], summaries={},
        started_at=start, finished_at=start))
    # One family ran: its tests would repeat the overall one, so there is only that.
    [test] = report.statistics.significance_tests
    assert test.metric == "overall"
    strong = [r.metrics["correct"] for r in records if r.model_id == "strong"]
    weak = [r.metrics["correct"] for r in records if r.model_id == "weak"]
    assert test.p_value == pytest.approx(float(stats.ttest_rel(strong, weak).pvalue), abs=1e-9)
    assert test.significant and report.rankings[0].significance_group == "a"
    assert report.rankings[1].significance_group == "b"
    assert report.comparisons[0].pairwise_record.a_wins + report.comparisons[0] \
        .pairwise_record.b_wins + report.comparisons[0].pairwise_record.ties == 30


def test_correlation_matrices_against_scipy_and_by_hand() -> None:
    from pytest_summarybench.stats.correlation import (
        correlation_matrix,
        mean_correlation_matrix,
    )

    rng = np.random.default_rng(4)
    rows = [{"judge": float(x), "retrieval": float(y)}
            for x, y in zip(rng.random(20), rng.random(20), strict=True)]
    rows.append({"judge": 0.5})  # no retrieval score: left out of that pair
    matrix = correlation_matrix(rows, ["judge", "contrastive", "retrieval"])
    ref = stats.spearmanr([r["judge"] for r in rows[:20]], [r["retrieval"] for r in rows[:20]])
    assert matrix["judge"]["retrieval"] == pytest.approx(float(ref.statistic), abs=1e-12)
    assert set(matrix) == {"judge", "retrieval"}  # contrastive never ran
    up = [{"a": 1.0, "b": 1.0}, {"a": 2.0, "b": 2.0}, {"a": 3.0, "b": 3.0}]
    down = [{"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 2.0}, {"a": 3.0, "b": 1.0}]
    too_few = [{"a": 1.0, "b": 1.0}, {"a": 2.0, "b": 2.0}]
    means = mean_correlation_matrix([up, down, too_few], ["a", "b"])
    assert means["a"]["b"] == pytest.approx(0.0)  # (1 + -1) / 2; the pair of 2 is skipped
    assert mean_correlation_matrix([up, up], ["a", "b"])["b"]["a"] == pytest.approx(1.0)


def test_spearman_equals_scipy_with_ties() -> None:
    from pytest_summarybench.stats.correlation import average_ranks, spearman

    rng = np.random.default_rng(8)
    for n in (3, 5, 40):
        x = rng.integers(0, 3, n).astype(float)  # binary-like and rubric-like scores tie
        y = np.round(rng.random(n), 1)
        if len(set(x)) > 1 and len(set(y)) > 1:
            assert spearman(x.tolist(), y.tolist()) == float(stats.spearmanr(x, y).statistic)
        assert average_ranks(x.tolist()).tolist() == stats.rankdata(x).tolist()
    assert spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None  # constant: undefined
