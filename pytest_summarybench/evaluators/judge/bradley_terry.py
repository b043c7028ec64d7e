"""Bradley-Terry strengths fitted by maximum likelihood, with bootstrap intervals over units.

Model: ``P(i beats j) = 1 / (1 + exp(-(theta_i - theta_j)))``; a tie counts as half a win
for each side. The log-likelihood is concave, so Newton's method on the subspace
``sum(theta) = 0`` converges to the unique maximum when one exists: when every model has
beaten, and been beaten by, a chain of others (the "beats" graph is strongly connected;
Zermelo 1929, Ford 1957). When it does not exist (a model that never lost would have
infinite strength), a weak Gaussian prior keeps the estimate finite and the fit says so.
Strengths are log-odds, centred to mean zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: Prior precision used only when the maximum-likelihood estimate does not exist.
DEGENERATE_PRIOR = 0.1
_TOL = 1e-12
_MAX_ITER = 200

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class BTFit:
    """Strengths of one fit."""

    models: tuple[str, ...]
    """The compared models, in the order of ``strengths``."""
    strengths: FloatArray
    """Centred log-strengths (mean zero)."""
    estimator: str
    """``mle``, or ``map`` when the maximum-likelihood estimate does not exist."""
    iterations: int

    def as_dict(self) -> dict[str, float]:
        return {m: float(s) for m, s in zip(self.models, self.strengths, strict=True)}


def wins_matrix(models: Sequence[str],
                outcomes: Sequence[tuple[str, str, float]]) -> FloatArray:
    """``W[i, j]``: wins of model i over model j, from ``(i, j, score of i)`` outcomes
    (1 a win, 0.5 a tie, 0 a loss; a tie adds half a win to each side)."""
    index = {m: k for k, m in enumerate(models)}
    w = np.zeros((len(models), len(models)))
    for a, b, score in outcomes:
        i, j = index[a], index[b]
        w[i, j] += score
        w[j, i] += 1.0 - score
    return w


def mle_exists(w: FloatArray) -> bool:
    """True when the directed graph "i beat j at least partly" is strongly connected."""
    n = w.shape[0]
    if n < 2:
        return False
    beats = w > 0

    def reaches_all(adj: NDArray[np.bool_]) -> bool:
        seen = {0}
        stack = [0]
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(adj[i]):
                if int(j) not in seen:
                    seen.add(int(j))
                    stack.append(int(j))
        return len(seen) == n

    return reaches_all(beats) and reaches_all(beats.T)


def log_likelihood(theta: FloatArray, w: FloatArray, prior: float = 0.0) -> float:
    diff = theta[:, None] - theta[None, :]
    # log sigmoid(x) = -log(1 + exp(-x)), computed stably
    return float(-(w * np.logaddexp(0.0, -diff)).sum() - 0.5 * prior * (theta ** 2).sum())


def _newton(w: FloatArray, prior: float) -> tuple[FloatArray, int]:
    n = w.shape[0]
    total = w + w.T
    theta = np.zeros(n)
    ll = log_likelihood(theta, w, prior)
    for it in range(1, _MAX_ITER + 1):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = (w - total * p).sum(axis=1) - prior * theta
        curv = total * p * p.T
        hess = curv - np.diag(curv.sum(axis=1)) - prior * np.eye(n)
        # -hess is positive semi-definite; its null space (prior 0) is the constant
        # vector, along which the likelihood does not change: take the minimum-norm step.
        step = np.linalg.lstsq(-hess, grad, rcond=None)[0]
        step -= step.mean() if prior == 0.0 else 0.0
        scale = 1.0
        while True:
            candidate = theta + scale * step
            new_ll = log_likelihood(candidate, w, prior)
            if new_ll >= ll - 1e-15 or scale < 1e-10:
                break
            scale /= 2.0
        theta, moved = candidate, float(np.abs(scale * step).max())
        ll = new_ll
        if moved < _TOL or float(np.abs(grad).max()) < _TOL:
            return theta - theta.mean(), it
    return theta - theta.mean(), _MAX_ITER


def fit(models: Sequence[str], w: FloatArray, *, prior: float | None = None) -> BTFit:
    """Strengths of ``models`` from the wins matrix ``w``.

    ``prior=None`` fits by maximum likelihood when the estimate exists and with
    ``DEGENERATE_PRIOR`` otherwise; a number forces that prior precision (0: plain MLE,
    which diverges on degenerate data).
    """
    if prior is None:
        prior = 0.0 if mle_exists(w) else DEGENERATE_PRIOR
    theta, iterations = _newton(np.asarray(w, dtype=float), prior)
    return BTFit(models=tuple(models), strengths=theta,
                 estimator="mle" if prior == 0.0 else "map", iterations=iterations)


def fit_outcomes(outcomes: Sequence[tuple[str, str, float]]) -> BTFit:
    """Strengths from ``(i, j, score of i)`` outcomes (models sorted by id)."""
    models = sorted({m for a, b, _ in outcomes for m in (a, b)})
    return fit(models, wins_matrix(models, outcomes))


def bootstrap(models: Sequence[str], per_unit: Mapping[str, FloatArray], *,
              samples: int, seed: int, level: float = 0.95) -> dict[str, Any]:
    """Point strengths and percentile intervals, resampling units with replacement.

    ``per_unit`` maps each unit id to its wins matrix. Resamples where the MLE does not
    exist are fitted with the prior and counted in ``degenerateResamples``.
    """
    units = sorted(per_unit)
    stack = np.stack([per_unit[u] for u in units])
    point = fit(models, stack.sum(axis=0))
    rng = np.random.default_rng(seed)
    draws = np.empty((samples, len(models)))
    degenerate = 0
    for b in range(samples):
        picked = rng.integers(0, len(units), size=len(units))
        result = fit(models, stack[picked].sum(axis=0))
        degenerate += result.estimator != "mle"
        draws[b] = result.strengths
    alpha = (1.0 - level) / 2.0
    low = np.quantile(draws, alpha, axis=0)
    high = np.quantile(draws, 1.0 - alpha, axis=0)
    return {
        "estimator": point.estimator,
        "level": level,
        "resamples": samples,
        "degenerateResamples": degenerate,
        "strengths": {m: {"strength": float(point.strengths[k]),
                          "ciLow": float(low[k]), "ciHigh": float(high[k])}
                      for k, m in enumerate(models)},
    }
