"""External validity: the ordering comparison against scipy and a hand count, and the
recorded figures' shape."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from pytest_summarybench.validity.external import (
    adjacent_steps,
    ceiling,
    kendall_tau,
    ordering,
    tau_b_rows,
)
from pytest_summarybench.validity.quote import EXTERNAL_PATH

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
    figures = json.loads(EXTERNAL_PATH.read_text(encoding="utf-8"))
    assert {"contrastive/embedding", "contrastive/lexical"} <= set(figures)
    for entry in figures.values():
        assert entry["doc"] == "docs/validity.md#external-validity"
        taus = [entry["tau_docstrings"], entry["tau_stripped"]]
        assert entry["validated"] == all(t is not None and t >= 0.8 for t in taus)


def test_tau_b_rows_is_scipys_row_by_row_with_ties() -> None:
    rng = np.random.default_rng(3)
    # Scores from three values over five names: most rows have ties, some are constant.
    a = rng.integers(0, 3, (400, 5)).astype(float)
    b = rng.integers(0, 3, (400, 5)).astype(float)
    got = tau_b_rows(a, b)
    for row_a, row_b, tau in zip(a, b, got, strict=True):
        expected = stats.kendalltau(row_a, row_b).statistic
        if np.isnan(expected):
            assert np.isnan(tau)
        else:
            assert tau == pytest.approx(expected)
    assert np.isnan(got).any() and (got == 1.0).any()
    with pytest.raises(ValueError, match="one shape"):
        tau_b_rows(a, b[:, :4])


def test_ceiling_of_a_clear_ordering_a_noisy_one_and_a_reversed_method() -> None:
    rng = np.random.default_rng(0)
    n = 300
    clear = {name: rng.normal(level, 0.05, n) for name, level in
             (("a", 0.9), ("b", 0.6), ("c", 0.3), ("d", 0.0))}
    reversed_ = {name: 1.0 - values for name, values in clear.items()}
    spread = ceiling(clear, {"same": clear, "reversed": reversed_}, resamples=200, seed=1)
    for kind in ("split_half", "bootstrap"):
        real = spread[kind]["real"].as_dict()
        assert real == {"resamples": 200, "undefined": 0, "median": 1.0,
                        "share_at_least_target": 1.0, "middle_90": [1.0, 1.0]}
        assert spread[kind]["same"].as_dict()["median"] == 1.0
        assert spread[kind]["reversed"].as_dict()["median"] == -1.0
        assert spread[kind]["reversed"].as_dict()["share_at_least_target"] == 0.0

    # "b" is "a"'s scores in another order: equal on all queries, so on two disjoint halves
    # covering them all whichever leads on one half trails on the other. Real queries
    # then never agree with themselves about that pair (tau 4/6 in every split).
    tied = dict(clear, b=rng.permutation(clear["a"]))
    halves = ceiling(tied, {}, resamples=300, seed=2)["split_half"]["real"]
    assert np.allclose(halves.taus, 2 / 3)
    assert halves.as_dict()["share_at_least_target"] == 0.0


def test_ceiling_splits_are_disjoint_halves_of_the_queries() -> None:
    # Per-query scores that are 1 on one query and 0 elsewhere: a name's half-sample mean
    # is positive on exactly one of the two halves when the halves are disjoint.
    n = 11
    one_hot = {f"q{i}": np.eye(n)[i] for i in range(4)}
    spread = ceiling(one_hot, {}, resamples=50, seed=0)["split_half"]["real"]
    # Each name is positive on at most one half, so no pair is ordered alike on both
    # halves: tau is never positive.
    assert np.nanmax(spread.taus) <= 0


def test_ceiling_refuses_a_method_that_scores_other_names() -> None:
    with pytest.raises(ValueError, match="real queries"):
        ceiling({"a": [1.0, 0.0], "b": [0.0, 1.0]}, {"m": {"a": [1.0, 1.0]}})
    with pytest.raises(ValueError, match="at least two"):
        ceiling({"a": [1.0], "b": [0.0]}, {})
