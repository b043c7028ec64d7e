"""How biased each judge was in this run: position, length, and a length-controlled win rate.

- Position: the flip rate is the share of (unit, pair) verdicts that change when the two
  summaries swap places; the first-position win rate is (wins of the summary shown first
  + 0.5 ties) / verdicts, 0.5 for a judge without position bias.
- Length: for pairwise verdicts, how often the longer summary wins and the correlation of
  the length difference with the verdict; for rubric scores, the rank correlation of
  summary length with the weighted average.
- Length-controlled win rate, as AlpacaEval 2 does it (Dubois et al. 2024): a logistic
  regression of each verdict on the two models' strengths, the standardized length
  difference ``tanh(dlen / sd)`` and the position, with the length and position
  coefficients per judge; the win rate is then predicted with both terms set to zero.
  A weak ridge penalty keeps the fit finite when a judge's verdicts are explained
  entirely by length or position (which is exactly the case worth reporting).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...roles.judges import pair_id

#: Ridge penalty (prior precision) of the length-controlled regression.
LC_PENALTY = 1.0
#: Above these the report flags a judge.
FLIP_ALERT = 0.25
LENGTH_ALERT = 0.5


@dataclass(frozen=True)
class PairVerdict:
    """One pairwise verdict in one order, in terms of the true models."""

    judge: str
    unit_id: str
    first: str
    """The model whose summary was shown as A."""
    second: str
    """The model whose summary was shown as B."""
    outcome: float
    """Score of ``first``: 1 it won, 0.5 a tie, 0 ``second`` won."""
    first_length: int
    second_length: int

    @property
    def pair(self) -> str:
        return pair_id(self.first, self.second)

    @property
    def winner(self) -> str:
        """The winning model's id, or ``tie``."""
        if self.outcome == 0.5:
            return "tie"
        return self.first if self.outcome > 0.5 else self.second

    def score_of(self, model: str) -> float:
        return self.outcome if model == self.first else 1.0 - self.outcome


def _corr(x: Sequence[float], y: Sequence[float], *, rank: bool = False) -> float | None:
    from scipy import stats

    if len(x) < 3 or np.ptp(np.asarray(x, float)) == 0 or np.ptp(np.asarray(y, float)) == 0:
        return None
    result = stats.spearmanr(x, y) if rank else stats.pearsonr(x, y)
    return float(result[0])


def position_bias(verdicts: Sequence[PairVerdict]) -> dict[str, Any]:
    """Flip rate, first-position win rate and tie rate of one judge's verdicts."""
    by_case: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for v in verdicts:
        order = "ab" if v.first < v.second else "ba"
        by_case[(v.unit_id, v.pair)][order] = v.winner
    both = [c for c in by_case.values() if len(c) == 2]
    flips = sum(c["ab"] != c["ba"] for c in both)
    n = len(verdicts)
    return {
        "verdicts": n,
        "swappedPairs": len(both),
        "flips": flips,
        "flipRate": flips / len(both) if both else None,
        "firstPositionWinRate": sum(v.outcome for v in verdicts) / n if n else None,
        "tieRate": sum(v.outcome == 0.5 for v in verdicts) / n if n else None,
    }


def length_bias_pairwise(verdicts: Sequence[PairVerdict]) -> dict[str, Any]:
    """How often the longer summary won, and the correlation of length difference with
    the verdict (point-biserial: ``len(first) - len(second)`` against first's score)."""
    distinct = [v for v in verdicts if v.first_length != v.second_length]
    longer = [v.outcome if v.first_length > v.second_length else 1.0 - v.outcome
              for v in distinct]
    return {
        "comparedLengths": len(distinct),
        "longerWinRate": sum(longer) / len(longer) if longer else None,
        "lengthVerdictCorrelation": _corr(
            [v.first_length - v.second_length for v in verdicts],
            [v.outcome for v in verdicts]),
    }


def length_bias_pointwise(lengths: Sequence[int], scores: Sequence[float]) -> dict[str, Any]:
    """Rank and linear correlation of summary length with the rubric score."""
    return {"scored": len(scores), "lengthScoreSpearman": _corr(lengths, scores, rank=True),
            "lengthScorePearson": _corr(lengths, scores)}


def length_controlled(verdicts: Sequence[PairVerdict], *,
                      penalty: float = LC_PENALTY) -> dict[str, Any]:
    """Raw and length-controlled win rates per model, with each judge's length and
    position coefficients (log-odds per unit of ``tanh(dlen / sd)``, and for being
    shown first)."""
    from scipy.optimize import minimize

    if not verdicts:
        return {"models": {}, "judges": {}, "penalty": penalty}
    models = sorted({m for v in verdicts for m in (v.first, v.second)})
    judges = sorted({v.judge for v in verdicts})
    mi = {m: k for k, m in enumerate(models)}
    ji = {j: k for k, j in enumerate(judges)}
    nm, nj = len(models), len(judges)
    sd = {}
    for j in judges:
        diffs = np.array([v.first_length - v.second_length for v in verdicts if v.judge == j],
                         dtype=float)
        sd[j] = float(diffs.std()) if diffs.size else 0.0
    x = np.zeros((len(verdicts), nm + 2 * nj))
    y = np.empty(len(verdicts))
    for r, v in enumerate(verdicts):
        x[r, mi[v.first]] += 1.0
        x[r, mi[v.second]] -= 1.0
        dlen = v.first_length - v.second_length
        x[r, nm + ji[v.judge]] = np.tanh(dlen / sd[v.judge]) if sd[v.judge] > 0 else 0.0
        x[r, nm + nj + ji[v.judge]] = 1.0
        y[r] = v.outcome

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ params
        # cross-entropy with fractional labels (a tie is half a win), computed stably
        value = float((np.logaddexp(0.0, z) - y * z).sum()) + 0.5 * penalty * params @ params
        p = 1.0 / (1.0 + np.exp(-z))
        return value, x.T @ (p - y) + penalty * params

    result = minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-10, "maxiter": 1000})
    theta = result.x[:nm]
    out_models: dict[str, Any] = {}
    for m in models:
        own = [v.score_of(m) for v in verdicts if m in (v.first, v.second)]
        others = [theta[mi[m]] - theta[mi[o]] for o in models if o != m]
        lc = float(np.mean(1.0 / (1.0 + np.exp(-np.array(others))))) if others else None
        out_models[m] = {"verdicts": len(own), "winRate": sum(own) / len(own),
                         "lengthControlledWinRate": lc}
    out_judges = {j: {"lengthCoefficient": float(result.x[nm + ji[j]]),
                      "positionCoefficient": float(result.x[nm + nj + ji[j]]),
                      "lengthScale": sd[j]} for j in judges}
    return {"models": out_models, "judges": out_judges, "penalty": penalty,
            "converged": bool(result.success)}


def pairwise_notes(judge: str, position: dict[str, Any], length: dict[str, Any]) -> list[str]:
    """Plain sentences for the report when a judge's bias is large."""
    notes = []
    flip = position.get("flipRate")
    if flip is not None and flip >= FLIP_ALERT:
        notes.append(f"{judge} changed {flip:.0%} of its verdicts when the two summaries "
                     f"swapped places (position bias); the swap cancels it in the win rates")
    first = position.get("firstPositionWinRate")
    if first is not None and abs(first - 0.5) >= FLIP_ALERT / 2:
        side = "first" if first > 0.5 else "second"
        notes.append(f"{judge} favoured the summary shown {side} "
                     f"(first-position win rate {first:.0%})")
    corr = length.get("lengthVerdictCorrelation")
    longer = length.get("longerWinRate")
    if corr is not None and abs(corr) >= LENGTH_ALERT and longer is not None:
        notes.append(f"{judge} preferred the longer summary {longer:.0%} of the time "
                     f"(length-verdict correlation {corr:+.2f}); see the length-controlled "
                     f"win rates")
    return notes


def pointwise_notes(judge: str, length: dict[str, Any]) -> list[str]:
    rho = length.get("lengthScoreSpearman")
    if rho is not None and abs(rho) >= LENGTH_ALERT:
        return [f"{judge}'s rubric scores follow summary length (Spearman {rho:+.2f})"]
    return []
