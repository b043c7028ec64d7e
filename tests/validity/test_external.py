"""External validity: the ordering comparison against scipy and a hand count, and the
recorded figures' shape."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from pytest_summarybench.validity.external import (
    FIGURES,
    adjacent_steps,
    kendall_tau,
    ordering,
)

REAL = {"lead": 0.694, "docstring": 0.672, "identifiers": 0.597, "signature": 0.588,
        "shuffled": 0.014}


def _hand_tau(a: dict[str, float], b: dict[str, float]) -> float:
    """Tau-a by counting concordant and discordant pairs (no ties in these cases)."""
    signs = [np.sign(a[x] - a[y]) * np.sign(b[x] - b[y]) for x, y in combinations(a, 2)]
    return float(sum(signs)) / len(signs)


def test_tau_is_scipys_and_the_hand_count() -> None:
    # The contrastive/embedding ordering the issue measured: identifiers first.
    offline = {"identifiers": 0.998, "docstring": 0.987, "lead": 0.986, "signature": 0.975,
               "shuffled": 0.070}
    names = sorted(REAL)
    expected = stats.kendalltau([REAL[n] for n in names], [offline[n] for n in names])
    assert kendall_tau(REAL, offline) == pytest.approx(expected.statistic)
    assert kendall_tau(REAL, offline) == pytest.approx(_hand_tau(REAL, offline)) == 0.4
    assert kendall_tau(REAL, REAL) == pytest.approx(1.0)
    assert kendall_tau(REAL, {n: -v for n, v in REAL.items()}) == pytest.approx(-1.0)


def test_tau_counts_ties_as_tau_b_and_refuses_mismatched_names() -> None:
    tied = {"a": 1.0, "b": 1.0, "c": 0.5}
    other = {"a": 0.9, "b": 0.9, "c": 0.1}
    assert kendall_tau(tied, other) == pytest.approx(1.0)
    assert kendall_tau(tied, {"a": 1.0, "b": 1.0, "c": 1.0}) is None
    with pytest.raises(ValueError, match="different summarizers"):
        kendall_tau(tied, {"a": 1.0, "b": 0.5})


def test_ordering_and_adjacent_steps() -> None:
    rng = np.random.default_rng(0)
    scores = {"good": rng.normal(1.0, 0.1, 200), "same": rng.normal(1.0, 0.1, 200),
              "bad": rng.normal(0.0, 0.1, 200)}
    means = {k: float(v.mean()) for k, v in scores.items()}
    steps = adjacent_steps(scores, seed=1)
    assert [s.higher for s in steps] == ordering(means)[:2]
    assert [s.lower for s in steps] == ordering(means)[1:]
    assert not steps[0].significant  # "good" and "same" are the same distribution
    last = steps[1]
    assert last.lower == "bad" and last.significant and last.low > 0.9
    assert last.difference == pytest.approx(means[last.higher] - means["bad"])


def test_recorded_figures_name_a_doc_and_a_verdict() -> None:
    figures = json.loads(FIGURES.read_text(encoding="utf-8"))
    assert {"contrastive/embedding", "contrastive/lexical"} <= set(figures)
    for entry in figures.values():
        assert entry["doc"] == "docs/validity.md#external-validity"
        taus = [entry["tau_docstrings"], entry["tau_stripped"]]
        assert entry["validated"] == all(t is not None and t >= 0.8 for t in taus)
