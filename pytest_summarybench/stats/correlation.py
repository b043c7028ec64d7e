"""Spearman rank correlations between evaluator families, so that disagreement between
the instruments is visible next to the ranking they produce together.

Computed as ``scipy.stats.spearmanr`` does (average ranks, then numpy's Pearson
correlation of the ranks), without its per-call overhead: a report correlates the
families on every unit, 10,000 calls of about half a millisecond each with scipy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

#: Fewer paired observations than this give no correlation (it would mean nothing).
MIN_OBSERVATIONS = 3


def average_ranks(x: Sequence[float]) -> np.ndarray:
    """Ranks from 1, ties sharing the mean of their ranks (``scipy.stats.rankdata``)."""
    _, inverse, counts = np.unique(np.asarray(x, dtype=float), return_inverse=True,
                                   return_counts=True)
    last = np.cumsum(counts)  # the rank of each distinct value's last occurrence
    return (last - (counts - 1) / 2)[inverse]


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (ties get average ranks); None when it is undefined (too few
    observations, or one side constant)."""
    if len(x) != len(y):
        raise ValueError(f"spearman needs paired samples, got {len(x)} and {len(y)} values")
    if len(x) < MIN_OBSERVATIONS or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    # Columns, as spearmanr stacks them, and its element [1, 0]: the same float.
    ranks = np.column_stack([average_ranks(x), average_ranks(y)])
    rho = float(np.corrcoef(ranks, rowvar=False)[1, 0])
    return rho if math.isfinite(rho) else None


def correlation_matrix(observations: Sequence[Mapping[str, float]],
                       names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Pairwise Spearman rho between ``names`` over the observations that have both.

    ``observations`` are rows (a unit, a model, a unit-model pair) mapping a family to its
    score there. The result is symmetric with 1.0 on the diagonal for names that appear;
    undefined pairs are left out.
    """
    present = [n for n in names if any(n in row for row in observations)]
    out: dict[str, dict[str, float]] = {n: {n: 1.0} for n in present}
    for i, a in enumerate(present):
        for b in present[i + 1:]:
            rows = [row for row in observations if a in row and b in row]
            rho = spearman([r[a] for r in rows], [r[b] for r in rows])
            if rho is not None:
                out[a][b] = out[b][a] = rho
    return out


def mean_correlation_matrix(groups: Sequence[Sequence[Mapping[str, float]]],
                            names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per pair of ``names``, the mean Spearman rho over the groups where it is defined.

    Each group is a set of observations (the models scored on one unit, say); a pair
    gets a mean only from groups with enough observations that vary on both sides.
    """
    sums: dict[tuple[str, str], list[float]] = {}
    for rows in groups:
        for a, row in correlation_matrix(rows, names).items():
            for b, rho in row.items():
                if a != b:
                    sums.setdefault((a, b), []).append(rho)
    out: dict[str, dict[str, float]] = {}
    for (a, b), values in sums.items():
        out.setdefault(a, {a: 1.0})[b] = sum(values) / len(values)
    return out
