"""External validity: does an offline family order summarizers as real developer queries
do? The comparison itself (orderings, Kendall's tau, paired intervals of adjacent
differences) and the figures measured with it (``external.json``, written by
``benchmarks/validity/check.py`` and quoted by the report; docs/validity.md, "External
validity").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The measured figures, per family or evaluator name.
FIGURES = Path(__file__).with_name("external.json")


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


def adjacent_steps(scores: Mapping[str, Sequence[float]], *, seed: int = 0) -> list[Step]:
    """The differences between neighbours of the ordering of ``scores`` (per-observation
    scores of each name, paired by position), each with its paired bootstrap interval."""
    import numpy as np

    from ..stats.significance import bootstrap_interval

    means = {name: float(np.mean(values)) for name, values in scores.items()}
    order = ordering(means)
    steps = []
    for higher, lower in zip(order, order[1:], strict=False):
        low, high = bootstrap_interval(scores[higher], scores[lower], seed=seed)
        steps.append(Step(higher, lower, means[higher] - means[lower], low, high))
    return steps


def figures() -> dict[str, dict[str, Any]]:
    """The measured figures (``external.json``); empty when none were recorded."""
    if not FIGURES.exists():
        return {}
    return json.loads(FIGURES.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
