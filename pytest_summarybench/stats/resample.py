"""Bootstrap resampling of units, drawn as counts of groups of identical units.

A bootstrap resample draws ``n`` units uniformly with replacement. Statistics that are
sums over the drawn units (a mean, a model's component sums) depend only on how often
each unit was drawn, and units with identical values are interchangeable: the resample
is fully described by how many units it drew from each group of identical units. Those
counts are multinomial(n, group size / n), so with few distinct values (binary or rubric
scores, the usual case) one multinomial draw per resample replaces ``n`` index draws,
with exactly the same distribution. Otherwise units are drawn one by one and counted.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

#: Multinomial draws cost several times an index draw per category; they pay when there
#: are at most 1/MULTINOMIAL_SPARSITY as many groups as units.
MULTINOMIAL_SPARSITY = 8
#: Resamples per chunk when units are drawn one by one (bounds memory at CHUNK x n).
CHUNK = 500


def group_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``values`` (one row per unit, or one value per unit), sorted,
    and how many units have each."""
    return np.unique(values, axis=0, return_counts=True)


def draw_sums(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per resample (row of ``counts``), the sum of the drawn units' ``values`` (one row of
    values per group, or one value).

    ``einsum`` rather than ``@``: a matrix product goes to BLAS, whose threads then spin
    for a while after each call, a third of a second of CPU time over a report's
    intervals on two cores, for products this small.
    """
    return np.einsum("rg,g...->r...", counts, values)


def resample_counts(sizes: np.ndarray, iterations: int, rng: np.random.Generator
                    ) -> Iterator[np.ndarray]:
    """How often each group is drawn in ``iterations`` resamples of all units with
    replacement, as float matrices of shape (resamples in the chunk, groups).

    ``sizes[j]`` is the number of units in group j. Seeded by ``rng``: the same sizes and
    generator state give the same counts.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    groups = sizes.size
    n = int(sizes.sum())
    if groups * MULTINOMIAL_SPARSITY <= n:
        yield rng.multinomial(n, sizes / n, size=iterations).astype(float)
        return
    group_of = np.repeat(np.arange(groups), sizes)
    for start in range(0, iterations, CHUNK):
        size = min(CHUNK, iterations - start)
        drawn = group_of[rng.integers(0, n, size=(size, n))]
        drawn += groups * np.arange(size)[:, None]
        yield np.bincount(drawn.ravel(), minlength=size * groups).reshape(size, groups
                                                                          ).astype(float)
