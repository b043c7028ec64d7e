"""Counting verdicts and averaging scores: the wins / losses / ties table
(docs/methods.md#judge-pairwise), head to head counts, the per-unit wins matrices
Bradley-Terry is bootstrapped over, and means with bootstrap intervals that resample units
(a unit's items are not independent: every model and every judge saw the same code).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .audit import PairVerdict
from .bradley_terry import FloatArray, wins_matrix


def tally(verdicts: Iterable[PairVerdict]) -> dict[str, dict[str, Any]]:
    """Per model: wins, losses, ties, total and win rate ``(wins + 0.5 ties) / total``,
    every verdict (each judge, each order) counting once, as in docs/methods.md#judge-pairwise."""
    table: dict[str, dict[str, Any]] = defaultdict(lambda: {"wins": 0, "losses": 0,
                                                            "ties": 0})
    for v in verdicts:
        for model in (v.first, v.second):
            score = v.score_of(model)
            key = "ties" if score == 0.5 else "wins" if score > 0.5 else "losses"
            table[model][key] += 1
    out = {}
    for model in sorted(table):
        row = table[model]
        total = row["wins"] + row["losses"] + row["ties"]
        out[model] = {**row, "total": total,
                      "winRate": (row["wins"] + 0.5 * row["ties"]) / total}
    return out


def head_to_head(verdicts: Iterable[PairVerdict]) -> dict[str, dict[str, int]]:
    """Per pair ``a~b``: verdicts won by each model and ties."""
    table: dict[str, dict[str, int]] = {}
    for v in verdicts:
        row = table.setdefault(v.pair, {m: 0 for m in sorted((v.first, v.second))}
                               | {"ties": 0})
        row["ties" if v.winner == "tie" else v.winner] += 1
    return dict(sorted(table.items()))


def unit_wins(verdicts: Iterable[PairVerdict], models: Sequence[str]) -> dict[str, FloatArray]:
    """unit id -> wins matrix of that unit's verdicts."""
    per_unit: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
    for v in verdicts:
        per_unit[v.unit_id].append((v.first, v.second, v.outcome))
    return {u: wins_matrix(models, outcomes) for u, outcomes in sorted(per_unit.items())}


def mean_ci(values_by_unit: Mapping[str, Sequence[float]], *, samples: int, seed: int,
            level: float = 0.95) -> dict[str, Any]:
    """Mean of all values with a percentile interval from resampling units."""
    units = sorted(u for u, vals in values_by_unit.items() if vals)
    if not units:
        return {"mean": None, "ciLow": None, "ciHigh": None, "n": 0, "units": 0}
    sums = np.array([float(np.sum(values_by_unit[u])) for u in units])
    counts = np.array([len(values_by_unit[u]) for u in units], dtype=float)
    mean = float(sums.sum() / counts.sum())
    rng = np.random.default_rng(seed)
    picked = rng.integers(0, len(units), size=(samples, len(units)))
    draws = sums[picked].sum(axis=1) / counts[picked].sum(axis=1)
    alpha = (1.0 - level) / 2.0
    return {"mean": mean, "ciLow": float(np.quantile(draws, alpha)),
            "ciHigh": float(np.quantile(draws, 1.0 - alpha)), "n": int(counts.sum()),
            "units": len(units)}
