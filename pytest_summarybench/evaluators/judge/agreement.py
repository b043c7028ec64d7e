"""Agreement between judges: Cohen's kappa for two judges (optionally weighted, for the
ordinal 1-5 rubric) and Fleiss' kappa for several judges rating the same items.

Both are chance-corrected: 1 is perfect agreement, 0 what independent judges with the
same label frequencies would reach, negative worse than chance. None is returned where
the statistic is undefined (no items, or a single category used by everyone).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any, Literal

import numpy as np

Weights = Literal["linear", "quadratic"] | None


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable], *,
                categories: Sequence[Hashable] | None = None,
                weights: Weights = None) -> float | None:
    """Cohen's kappa of two raters' labels for the same items.

    ``weights`` (``linear`` or ``quadratic``) treats ``categories`` as ordered and gives
    partial credit for near misses (weighted kappa, Cohen 1968).
    """
    if len(first) != len(second):
        raise ValueError(f"raters labelled {len(first)} and {len(second)} items")
    if not first:
        return None
    cats = list(categories) if categories is not None else sorted(
        set(first) | set(second), key=str)
    index = {c: k for k, c in enumerate(cats)}
    k = len(cats)
    observed = np.zeros((k, k))
    for a, b in zip(first, second, strict=True):
        observed[index[a], index[b]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    if weights is None:
        disagreement = 1.0 - np.eye(k)
    else:
        grid = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) / max(k - 1, 1)
        disagreement = grid if weights == "linear" else grid ** 2
    chance = float((disagreement * expected).sum())
    if chance == 0.0:
        return None
    return 1.0 - float((disagreement * observed).sum()) / chance


def fleiss_kappa(counts: Sequence[Sequence[int]] | np.ndarray) -> float | None:
    """Fleiss' kappa from an items x categories table of how many raters chose each
    category; every item must have the same number of raters (at least two)."""
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return None
    raters = table.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of raters per item")
    m = raters[0]
    p_cat = table.sum(axis=0) / table.sum()
    p_item = ((table ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_bar = float(p_item.mean())
    p_e = float((p_cat ** 2).sum())
    if p_e == 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def judge_agreement(labels: Mapping[str, Mapping[Any, Hashable]], *,
                    categories: Sequence[Hashable],
                    weights: Weights = None) -> dict[str, Any]:
    """Agreement of judges over the items they share.

    ``labels`` maps judge id -> item key -> label. Gives Cohen's kappa for every pair of
    judges on their common items, and Fleiss' kappa over the items rated by the largest
    set of judges that rated at least two items in common.
    """
    judges = sorted(labels)
    pairs = []
    for a, b in combinations(judges, 2):
        common = sorted(set(labels[a]) & set(labels[b]), key=str)
        kappa = cohen_kappa([labels[a][i] for i in common], [labels[b][i] for i in common],
                            categories=categories, weights=weights)
        pairs.append({"judges": [a, b], "items": len(common), "kappa": kappa})
    raters_per_item: Counter[Hashable] = Counter(i for j in judges for i in labels[j])
    fleiss: dict[str, Any] = {"items": 0, "raters": 0, "kappa": None}
    for m in sorted(set(raters_per_item.values()), reverse=True):
        if m < 2:
            break
        items = sorted((i for i, c in raters_per_item.items() if c == m), key=str)
        if len(items) >= 2:
            index = {c: k for k, c in enumerate(categories)}
            table = np.zeros((len(items), len(categories)), dtype=int)
            for row, item in enumerate(items):
                for j in judges:
                    if item in labels[j]:
                        table[row, index[labels[j][item]]] += 1
            fleiss = {"items": len(items), "raters": m, "kappa": fleiss_kappa(table)}
            break
    return {"weights": weights or "none", "cohen": pairs, "fleiss": fleiss}
