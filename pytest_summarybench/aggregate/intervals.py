"""Bootstrap interval of a model's ranked overall score (docs/methods.md#aggregation over the whole
run).

The overall score is a weighted combination of component means over all of a model's
records, not the mean of per-unit scores (units differ in which evaluators scored them),
so its interval resamples units and recomputes the very same statistic: per resample,
each component's mean over the drawn units' records, renormalized weights where a
component or family is absent, exactly as ``family_scores`` does. Vectorized over
resamples with numpy; units with identical scores are resampled as groups (see
``stats.resample``), which draws the same resamples' distribution far faster.
"""

from __future__ import annotations

import numpy as np

from ..schemas import ScoreRecord
from ..stats.resample import draw_sums, group_rows, resample_counts
from ..stats.significance import ALPHA, BOOTSTRAP_ITERATIONS
from .scoring import Scoring


def _unit_matrices(records: list[ScoreRecord], model_id: str, scoring: Scoring
                   ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Units, and per unit and component the sum and count of normalized values."""
    components = scoring.components
    index = {(c.evaluator, c.metric): k for k, c in enumerate(components)}
    # Python lists while reading records (item assignment into numpy arrays is slow);
    # each unit's values are added in record order, as before.
    sums: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for rec in records:
        if rec.model_id != model_id or rec.error is not None:
            continue
        for metric, value in rec.metrics.items():
            k = index.get((rec.evaluator, metric))
            if k is not None:
                if rec.unit_id not in sums:
                    sums[rec.unit_id] = [0.0] * len(components)
                    counts[rec.unit_id] = [0] * len(components)
                sums[rec.unit_id][k] += components[k].normalize(float(value))
                counts[rec.unit_id][k] += 1
    units = sorted(counts)
    if not units:
        return [], np.zeros((0, len(components))), np.zeros((0, len(components)))
    return (units, np.array([sums[u] for u in units], dtype=float),
            np.array([counts[u] for u in units], dtype=float))


def _weighted(values: np.ndarray, present: np.ndarray, weights: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise weighted mean over present columns; and whether the row has any weight."""
    w = present * weights
    total = w.sum(axis=1)
    has = total > 0
    out = np.where(has, (np.where(present, values, 0.0) * w).sum(axis=1)
                   / np.where(has, total, 1.0), 0.0)
    return out, has


def overall_scores(sums: np.ndarray, counts: np.ndarray, scoring: Scoring
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Overall score per row of (resampled) component sums and counts; and whether the
    row has a score at all."""
    components = scoring.components
    present = counts > 0
    means = np.where(present, sums / np.where(present, counts, 1.0), 0.0)
    fam_values, fam_present, fam_w = [], [], []
    for family in scoring.families:
        cols = [k for k, c in enumerate(components) if c.family == family]
        weights = scoring.component_weights.get(family, {})
        w = np.array([weights.get(components[k].weight_key, 0.0) for k in cols])
        value, has = _weighted(means[:, cols], present[:, cols], w)
        fam_values.append(value)
        fam_present.append(has)
        fam_w.append(scoring.family_weights.get(family, 0.0))
    return _weighted(np.stack(fam_values, axis=1), np.stack(fam_present, axis=1),
                     np.array(fam_w))


def overall_interval(records: list[ScoreRecord], scoring: Scoring, model_id: str, *,
                     seed: int, iterations: int = BOOTSTRAP_ITERATIONS,
                     alpha: float = ALPHA) -> tuple[float, float] | None:
    """Percentile bootstrap interval (units resampled) of the model's overall score."""
    units, sums, counts = _unit_matrices(records, model_id, scoring)
    if not units:
        return None
    # A unit is its row of component sums and counts; units with equal rows are alike.
    rows, sizes = group_rows(np.concatenate([sums, counts], axis=1))
    k = len(scoring.components)
    draws: list[np.ndarray] = []
    for weights in resample_counts(sizes, iterations, np.random.default_rng(seed)):
        drawn = draw_sums(weights, rows)
        values, has = overall_scores(drawn[:, :k], drawn[:, k:], scoring)
        draws.append(values[has])
    stats = np.concatenate(draws)
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)
