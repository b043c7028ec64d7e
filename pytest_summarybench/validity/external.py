"""External validity: does an offline family order summarizers as real developer queries
do? The comparison itself (orderings, Kendall's tau, paired intervals of adjacent
differences) and the figures measured with it (``external.json``, written by
``benchmarks/validity/check.py`` and read for the report by ``validity/quote.py``;
docs/validity.md, "External validity").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Per-observation scores (a list or an array), paired by position across names.
Observations = Sequence[float] | np.ndarray


def ordering(means: Mapping[str, float]) -> list[str]:
    """Names by descending score, ties by name (a stable, readable order)."""
    return sorted(means, key=lambda name: (-means[name], name))


def kendall_tau(reference: Mapping[str, float], other: Mapping[str, float]) -> float | None:
    """Kendall's tau-b between two scorings of the same names (``scipy.stats.kendalltau``):
    +1 when ``other`` orders every pair as ``reference`` does, ties counted as tau-b
    counts them; None when either scores every name the same."""
    from scipy.stats import kendalltau

    names = sorted(reference)
    if sorted(other) != names:
        raise ValueError(f"the scorings name different summarizers: {names} and "
                         f"{sorted(other)}")
    tau = kendalltau([reference[n] for n in names], [other[n] for n in names]).statistic
    return None if tau != tau else float(tau)  # NaN: a constant scoring


@dataclass(frozen=True)
class Step:
    """One adjacent pair of an ordering: ``higher`` minus ``lower``, paired over the
    observations both were scored on."""

    higher: str
    lower: str
    difference: float
    low: float
    high: float
    """The 95% percentile bootstrap interval of the difference."""

    @property
    def significant(self) -> bool:
        return self.low > 0 or self.high < 0

    def as_dict(self) -> dict[str, Any]:
        return {"higher": self.higher, "lower": self.lower,
                "difference": round(self.difference, 4),
                "interval": [round(self.low, 4), round(self.high, 4)]}


def adjacent_steps(scores: Mapping[str, Observations], *, seed: int = 0) -> list[Step]:
    """The differences between neighbours of the ordering of ``scores`` (per-observation
    scores of each name, paired by position), each with its paired bootstrap interval."""
    from ..stats.significance import bootstrap_interval

    means = {name: float(np.mean(values)) for name, values in scores.items()}
    order = ordering(means)
    steps = []
    for higher, lower in zip(order, order[1:], strict=False):
        low, high = bootstrap_interval(scores[higher], scores[lower], seed=seed)
        steps.append(Step(higher, lower, means[higher] - means[lower], low, high))
    return steps


# -- How far real-query retrieval agrees with itself ---------------------------------------
#: The agreement the issue asks of an offline family (Kendall's tau with real queries).
TARGET_TAU = 0.8


def tau_b_rows(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between corresponding rows of two (resamples x names) score
    matrices, as ``scipy.stats.kendalltau`` computes it for one pair of rows; NaN where
    either row scores every name the same. One pass over the name pairs, so thousands of
    resamples cost milliseconds."""
    if reference.shape != other.shape or reference.ndim != 2:
        raise ValueError(f"two score matrices of one shape are needed, got "
                         f"{reference.shape} and {other.shape}")
    k = reference.shape[1]
    i, j = np.triu_indices(k, 1)
    a = np.sign(reference[:, i] - reference[:, j])
    b = np.sign(other[:, i] - other[:, j])
    pairs = len(i)
    untied_a = pairs - (a == 0).sum(axis=1)
    untied_b = pairs - (b == 0).sum(axis=1)
    denominator = np.sqrt(untied_a.astype(float) * untied_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (a * b).sum(axis=1) / denominator, np.nan)


@dataclass(frozen=True)
class TauSpread:
    """Kendall's tau over resamples: its median and how often it reaches the target."""

    taus: np.ndarray
    """One tau per resample (NaN where undefined)."""

    def as_dict(self) -> dict[str, Any]:
        defined = self.taus[~np.isnan(self.taus)]
        if not len(defined):
            return {"resamples": len(self.taus), "undefined": len(self.taus)}
        low, median, high = np.percentile(defined, [5, 50, 95])
        return {"resamples": len(self.taus), "undefined": int(len(self.taus) - len(defined)),
                "median": round(float(median), 3),
                "share_at_least_target": round(float((defined >= TARGET_TAU - 1e-9).mean()), 3),
                "middle_90": [round(float(low), 3), round(float(high), 3)]}


def _means(scores: Mapping[str, Observations], names: list[str],
           rows: np.ndarray) -> np.ndarray:
    """(resamples x names): each name's mean over each row of observation indices."""
    return np.stack([np.asarray(scores[n], dtype=float)[rows].mean(axis=1) for n in names],
                    axis=1)


def ceiling(real: Mapping[str, Observations],
            methods: Mapping[str, Mapping[str, Observations]], *,
            resamples: int = 1000, seed: int = 0) -> dict[str, dict[str, TauSpread]]:
    """How well real-query retrieval agrees with itself, and each method with it, at the
    same sample sizes.

    ``real``: each summarizer's per-query reciprocal ranks (paired by position);
    ``methods``: per method, each summarizer's per-unit scores. Two resamplings:

    - ``split_half``: the queries are split at random into two disjoint halves A and B;
      ``real`` is tau(ordering on A, ordering on B), the most any instrument could agree
      with a half-sample of real queries; each method's is tau(its ordering on a random
      half of its units, ordering on B).
    - ``bootstrap``: queries (units for a method) drawn with replacement, full size;
      each instrument's tau against the real-query ordering on all queries.

    Returns ``{"split_half": {"real": ..., method: ...}, "bootstrap": {...}}``.
    """
    names = sorted(real)
    for method, scores in methods.items():
        if sorted(scores) != names:
            raise ValueError(f"{method} scores {sorted(scores)}, real queries {names}")
    rng = np.random.default_rng(seed)
    n = len(real[names[0]])
    if n < 2:
        raise ValueError(f"a split needs at least two queries, got {n}")
    half = n // 2
    order = np.argsort(rng.random((resamples, n)), axis=1)
    on_b = _means(real, names, order[:, half:2 * half])
    full = _means(real, names, np.arange(n)[None, :])
    drawn = rng.integers(0, n, (resamples, n))
    out = {"split_half": {"real": TauSpread(tau_b_rows(
               _means(real, names, order[:, :half]), on_b))},
           "bootstrap": {"real": TauSpread(tau_b_rows(
               _means(real, names, drawn), np.repeat(full, resamples, axis=0)))}}
    for method, scores in methods.items():
        m = len(scores[names[0]])
        units_half = np.argsort(rng.random((resamples, m)), axis=1)[:, :m // 2]
        out["split_half"][method] = TauSpread(tau_b_rows(
            _means(scores, names, units_half), on_b))
        units_drawn = rng.integers(0, m, (resamples, m))
        out["bootstrap"][method] = TauSpread(tau_b_rows(
            _means(scores, names, units_drawn), np.repeat(full, resamples, axis=0)))
    return out
