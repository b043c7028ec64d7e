"""Resampling by groups of identical units: the same bootstrap as drawing unit by unit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pytest_summarybench.stats.resample import MULTINOMIAL_SPARSITY, group_rows, resample_counts
from pytest_summarybench.stats.significance import bootstrap_interval, mean_interval


# Few large groups: a multinomial per resample; many small ones: units drawn one by one.
@pytest.mark.parametrize(("groups", "largest"), [(3, 200), (400, 5)])
def test_resample_counts_have_the_bootstrap_distribution(groups: int, largest: int) -> None:
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, largest + 1, groups)
    n = int(sizes.sum())
    assert (groups * MULTINOMIAL_SPARSITY <= n) == (groups == 3)
    counts = np.concatenate(list(resample_counts(sizes, 4000, np.random.default_rng(1))))
    assert counts.shape == (4000, groups)
    assert (counts.sum(axis=1) == n).all()
    # Each group's count is binomial(n, size / n): mean size, variance size (1 - size / n).
    p = sizes / n
    assert counts.mean(axis=0) == pytest.approx(sizes, abs=5 * np.sqrt(sizes / 4000).max())
    assert counts.var(axis=0) == pytest.approx(n * p * (1 - p), rel=0.25)
    again = np.concatenate(list(resample_counts(sizes, 4000, np.random.default_rng(1))))
    assert (again == counts).all()


def test_group_rows_counts_identical_rows() -> None:
    rows, sizes = group_rows(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))
    assert rows.tolist() == [[0.0, 1.0], [1.0, 0.0]] and sizes.tolist() == [1, 2]


@pytest.mark.parametrize("seed", range(3))
def test_bootstrap_interval_of_binary_scores_matches_scipy(seed: int) -> None:
    # Binary scores, the common case, go through the multinomial draw.
    rng = np.random.default_rng(200 + seed)
    a = (rng.random(500) < 0.6).astype(float)
    b = (rng.random(500) < 0.5).astype(float)
    ours = bootstrap_interval(a.tolist(), b.tolist(), seed=seed)
    ref = stats.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                          paired=True, vectorized=True, method="percentile",
                          n_resamples=10_000, rng=np.random.default_rng(seed)
                          ).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), abs=0.006)
    x = rng.integers(1, 6, 300).astype(float)  # rubric scores
    ref = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=10_000,
                          rng=np.random.default_rng(seed)).confidence_interval
    assert mean_interval(x.tolist(), seed=seed) == pytest.approx((ref.low, ref.high), abs=0.02)
