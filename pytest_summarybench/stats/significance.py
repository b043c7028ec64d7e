"""Paired significance testing of docs/methods.md#significance on per-unit scores.

Two models are compared on the units both were scored on: a paired t-test (the t
distribution from scipy), a seeded percentile bootstrap interval of the mean difference,
Holm's step-down correction across all model pairs, letter groups of models that cannot be
told apart, and the smallest difference the run could have detected at its sample size.
scipy is imported inside the functions that need it, so importing this module is cheap;
only ``scipy.special`` is used (the distributions' own functions, which ``scipy.stats``
calls): importing ``scipy.stats`` took most of a second of every run's end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .resample import draw_sums, group_rows, resample_counts

#: Two-sided level at which a (Holm-adjusted) p-value counts as significant.
ALPHA = 0.05
#: Power at which the minimum detectable difference is quoted (the usual 80%).
POWER = 0.8
#: Bootstrap resamples (docs/methods.md#significance).
BOOTSTRAP_ITERATIONS = 10_000


@dataclass(frozen=True)
class PairedTest:
    """A paired t-test of ``a - b``."""

    n: int
    """Number of pairs."""
    mean_difference: float
    t_statistic: float
    p_value: float
    """Two-sided; 1.0 when every difference is zero, 0.0 when they are all equal and not zero."""

    @property
    def degrees_of_freedom(self) -> int:
        return self.n - 1


def _differences(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 1:
        raise ValueError(f"paired samples must be 1-d and of equal length, got {xa.shape} "
                         f"and {xb.shape}")
    # A NaN would make sd NaN and so read as "no variance": a certain difference.
    for name, x in (("a", xa), ("b", xb)):
        bad = ~np.isfinite(x)
        if bad.any():
            raise ValueError(f"paired sample {name} holds {int(bad.sum())} value(s) that are "
                             f"not finite numbers (first at position {int(np.argmax(bad))}: "
                             f"{x[np.argmax(bad)]})")
    return xa - xb


def paired_t_test(a: npt.ArrayLike, b: npt.ArrayLike) -> PairedTest:
    """Paired t-test (docs/methods.md#significance): t = mean(d) / (sd(d) / sqrt(n)), p from
    t(n - 1).

    Needs at least two pairs. Degenerate samples (zero variance) get the limit values
    instead of NaN: no difference at all is p = 1, a constant nonzero difference p = 0.
    """
    from scipy import special

    d = _differences(a, b)
    n = int(d.size)
    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 pairs, got {n}")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0 or not math.isfinite(sd):
        if mean == 0.0:
            return PairedTest(n, 0.0, 0.0, 1.0)
        return PairedTest(n, mean, math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(n))
    p = float(2.0 * special.stdtr(n - 1, -abs(t)))  # what stats.t.sf computes
    return PairedTest(n, mean, t, min(p, 1.0))


def bootstrap_interval(a: npt.ArrayLike, b: npt.ArrayLike, *, seed: int,
                       iterations: int = BOOTSTRAP_ITERATIONS,
                       alpha: float = ALPHA) -> tuple[float, float]:
    """Percentile bootstrap interval of ``mean(a) - mean(b)`` over paired resamples.

    Units are resampled with replacement (both models' scores of a unit together), as in
    docs/methods.md#significance; the generator is seeded, so the same data and seed give the same
    interval.
    """
    d = _differences(a, b)
    if d.size == 0:
        raise ValueError("a bootstrap interval needs at least one pair")
    return _percentile_bootstrap(d, seed=seed, iterations=iterations, alpha=alpha)


def mean_interval(scores: npt.ArrayLike, *, seed: int,
                  iterations: int = BOOTSTRAP_ITERATIONS,
                  alpha: float = ALPHA) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of one model's per-unit scores."""
    x = np.asarray(scores, dtype=float)
    if x.size == 0:
        raise ValueError("a bootstrap interval needs at least one score")
    return _percentile_bootstrap(x, seed=seed, iterations=iterations, alpha=alpha)


def _percentile_bootstrap(x: np.ndarray, *, seed: int, iterations: int,
                          alpha: float) -> tuple[float, float]:
    # Each resample's mean from how often it drew each distinct value (see ``resample``).
    means = _resampled_sums(x, seed=seed, iterations=iterations) / x.size
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _resampled_sums(rows: np.ndarray, *, seed: int, iterations: int) -> np.ndarray:
    """Per resample of the units (rows) with replacement, the sum of the drawn rows:
    computed from how often each distinct row is drawn, so that time and memory grow with
    the distinct rows, not with the units."""
    values, sizes = group_rows(rows)
    return np.concatenate([draw_sums(counts, values) for counts in
                           resample_counts(sizes, iterations, np.random.default_rng(seed))])


def sums_interval(rows: npt.ArrayLike, statistic: Callable[[np.ndarray], np.ndarray], *,
                  seed: int, iterations: int = BOOTSTRAP_ITERATIONS,
                  alpha: float = ALPHA) -> tuple[float, float]:
    """Percentile bootstrap interval of a statistic that depends on the units only through
    the column sums of their rows (a macro-F1 from per-unit true-positive, false-positive
    and false-negative indicators; a ratio of two totals).

    ``rows`` holds one row per unit; ``statistic`` maps the sums of each resample, an
    array of shape (resamples, columns), to one value per resample. Seeded as
    ``mean_interval``. Resampling units one by one cost a Python call per resample over
    every unit: 20,000 examples took minutes and a gigabyte; here it costs the distinct
    rows' count per resample.
    """
    x = np.asarray(rows, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError("a bootstrap interval needs rows of at least one unit")
    stats = np.asarray(statistic(_resampled_sums(x, seed=seed, iterations=iterations)),
                       dtype=float)
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    With p sorted ascending, p_adj(i) = max over j <= i of min(1, (m - j + 1) p(j)); a
    hypothesis is rejected at level alpha when its adjusted p-value is below alpha, which
    holds the family-wise error rate at alpha across all the pairs.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def significance_groups(ordered: Sequence[str],
                        significant: dict[frozenset[str], bool]) -> dict[str, str]:
    """Letter groups for models in rank order: models sharing a letter cannot be told apart.

    Each group is a maximal run of consecutive models (by rank) in which no pair differs
    significantly; a model may belong to two overlapping groups (``ab``). A pair missing
    from ``significant`` counts as not significant (nothing showed a difference).
    """
    def differ(x: str, y: str) -> bool:
        return significant.get(frozenset((x, y)), False)

    runs: list[tuple[int, int]] = []
    for i in range(len(ordered)):
        j = i
        while j + 1 < len(ordered) and not any(differ(ordered[k], ordered[j + 1])
                                                for k in range(i, j + 1)):
            j += 1
        if not any(s <= i and j <= e for s, e in runs):
            runs.append((i, j))
    letters = {m: "" for m in ordered}
    for number, (s, e) in enumerate(runs):
        letter = _letter(number)
        for k in range(s, e + 1):
            letters[ordered[k]] += letter
    return letters


def _letter(number: int) -> str:
    text = ""
    number += 1
    while number:
        number, rest = divmod(number - 1, 26)
        text = chr(ord("a") + rest) + text
    return text


def power(effect: float, sd: float, n: int, *, alpha: float = ALPHA) -> float:
    """Power of a two-sided paired t-test to detect a true mean difference ``effect``
    when the differences have standard deviation ``sd`` and there are ``n`` pairs."""
    from scipy import special

    if n < 2:
        return 0.0
    if sd <= 0:
        return 1.0 if effect != 0 else alpha
    df = n - 1
    crit = float(special.stdtrit(df, 1 - alpha / 2))  # stats.t.ppf
    nc = abs(effect) / sd * math.sqrt(n)
    # stats.nct.sf(crit, df, nc) and .cdf(-crit, df, nc); P(T > x | nc) = P(T < -x | -nc).
    upper = float(special.nctdtr(df, -nc, -crit))
    lower = float(special.nctdtr(df, nc, -crit))
    # scipy's noncentral t returns NaN deep in a tail, where the true value is 0 (lower)
    # or 1 (upper, once the noncentrality is far beyond the critical value).
    if not math.isfinite(upper):
        upper = 1.0 if nc > crit else 0.0
    if not math.isfinite(lower):
        lower = 0.0
    return min(1.0, upper + lower)


def minimum_detectable_difference(sd: float, n: int, *, alpha: float = ALPHA,
                                  target_power: float = POWER) -> float | None:
    """The smallest true mean difference a paired t-test on ``n`` pairs detects with
    ``target_power`` (noncentral t), given the spread ``sd`` of the differences.

    None when the run cannot test at all (fewer than two pairs); 0.0 when the differences
    have no spread (any difference would show).
    """
    if n < 2:
        return None
    if sd <= 0:
        return 0.0
    lo, hi = 0.0, sd
    while power(hi, sd, n, alpha=alpha) < target_power:
        lo, hi = hi, hi * 2
    # Power grows with the effect: bisection to within 1e-10 (scipy's brentq did the same
    # in fewer steps, but importing scipy.optimize cost more than all the steps together).
    while hi - lo > 1e-10:
        mid = (lo + hi) / 2
        if power(mid, sd, n, alpha=alpha) < target_power:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
