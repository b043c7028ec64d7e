"""Bradley-Terry, tallies, bias audit and agreement, each checked against an independent
implementation (choix, scipy, scikit-learn) or a hand-computed case."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_summarybench.evaluators.judge import bradley_terry as bt
from pytest_summarybench.evaluators.judge.agreement import (
    cohen_kappa,
    fleiss_kappa,
    judge_agreement,
)
from pytest_summarybench.evaluators.judge.audit import (
    PairVerdict,
    length_bias_pairwise,
    length_bias_pointwise,
    length_controlled,
    position_bias,
)
from pytest_summarybench.evaluators.judge.tally import head_to_head, mean_ci, tally, unit_wins


def _random_verdicts(n_models: int, n: int, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_models)
    out = []
    for _ in range(n):
        i, j = rng.choice(n_models, 2, replace=False)
        p = 1.0 / (1.0 + math.exp(-(truth[i] - truth[j])))
        out.append((int(i), int(j)) if rng.random() < p else (int(j), int(i)))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bradley_terry_matches_choix(seed: int) -> None:
    import choix  # the dev extra's independent Bradley-Terry implementation

    data = _random_verdicts(5, 300, seed)
    names = [f"m{k}" for k in range(5)]
    fitted = bt.fit(names, bt.wins_matrix(names, [(names[w], names[lo], 1.0)
                                                  for w, lo in data]))
    assert fitted.estimator == "mle"
    for reference in (choix.opt_pairwise(5, data, alpha=0.0, tol=1e-12),
                      choix.ilsr_pairwise(5, data, alpha=0.0, tol=1e-12, max_iter=10_000)):
        reference = reference - reference.mean()
        np.testing.assert_allclose(fitted.strengths, reference, atol=1e-5, rtol=0)


def test_bradley_terry_with_ties_matches_direct_scipy_fit() -> None:
    """Ties count half a win each; checked against a plain scipy maximisation of the
    same likelihood written out term by term."""
    from scipy.optimize import minimize

    outcomes = [("a", "b", 1.0), ("a", "b", 0.5), ("b", "c", 1.0), ("c", "a", 1.0),
                ("a", "c", 1.0), ("b", "a", 0.0), ("c", "b", 0.5), ("b", "c", 0.0),
                ("d", "a", 1.0), ("a", "d", 1.0), ("d", "c", 0.5), ("b", "d", 1.0)]
    fitted = bt.fit_outcomes(outcomes)
    names = list(fitted.models)
    idx = {m: k for k, m in enumerate(names)}

    def nll(theta: np.ndarray) -> float:
        total = 0.0
        for a, b, s in outcomes:
            d = theta[idx[a]] - theta[idx[b]]
            total -= s * -np.logaddexp(0, -d) + (1 - s) * -np.logaddexp(0, d)
        return total

    ref = minimize(nll, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(fitted.strengths, ref - ref.mean(), atol=1e-5, rtol=0)


def test_bradley_terry_hand_computed() -> None:
    """a beats b 3 times in 4: P = 3/4 = sigmoid(ta - tb), so ta - tb = ln 3."""
    fitted = bt.fit_outcomes([("a", "b", 1.0)] * 3 + [("a", "b", 0.0)])
    assert fitted.as_dict() == pytest.approx({"a": math.log(3) / 2, "b": -math.log(3) / 2},
                                             abs=1e-12)


def test_bradley_terry_degenerate_uses_prior_and_says_so() -> None:
    names = ["a", "b", "c"]
    w = bt.wins_matrix(names, [("a", "b", 1.0), ("b", "c", 1.0)])
    assert not bt.mle_exists(w)
    fitted = bt.fit(names, w)
    assert fitted.estimator == "map"
    assert np.all(np.isfinite(fitted.strengths))
    assert fitted.strengths[0] > fitted.strengths[1] > fitted.strengths[2]


def test_bootstrap_intervals_cover_the_point_and_are_seeded() -> None:
    data = _random_verdicts(4, 240, 7)
    names = ["w", "x", "y", "z"]
    per_unit = {f"u{k:02d}": bt.wins_matrix(
        names, [(names[a], names[b], 1.0) for a, b in data[k * 12:(k + 1) * 12]])
        for k in range(20)}
    one = bt.bootstrap(names, per_unit, samples=300, seed=3)
    two = bt.bootstrap(names, per_unit, samples=300, seed=3)
    assert one == two
    for row in one["strengths"].values():
        assert row["ciLow"] <= row["strength"] <= row["ciHigh"]


def _verdicts(judge: str, rows: list[tuple[str, str, str, float, int, int]]
              ) -> list[PairVerdict]:
    return [PairVerdict(judge, u, f, s, o, lf, ls) for u, f, s, o, lf, ls in rows]


def test_tally_matches_spec_win_rate_and_head_to_head() -> None:
    vs = _verdicts("j", [("u1", "a", "b", 1.0, 5, 3), ("u1", "b", "a", 0.5, 3, 5),
                         ("u2", "a", "b", 0.0, 4, 4), ("u2", "b", "a", 0.0, 4, 4)])
    table = tally(vs)
    assert table["a"] == {"wins": 2, "losses": 1, "ties": 1, "total": 4, "winRate": 0.625}
    assert table["b"]["winRate"] == 0.375
    assert head_to_head(vs) == {"a~b": {"a": 2, "b": 1, "ties": 1}}
    w = unit_wins(vs, ["a", "b"])
    assert w["u1"].tolist() == [[0.0, 1.5], [0.5, 0.0]]


def test_position_bias_of_a_judge_that_always_says_a() -> None:
    rows = []
    for u in ("u1", "u2", "u3"):
        rows += [(u, "a", "b", 1.0, 10, 20), (u, "b", "a", 1.0, 20, 10)]
    audit = position_bias(_verdicts("always-a", rows))
    assert audit["flipRate"] == 1.0
    assert audit["firstPositionWinRate"] == 1.0
    consistent = position_bias(_verdicts("fair", [("u1", "a", "b", 1.0, 1, 1),
                                                  ("u1", "b", "a", 0.0, 1, 1)]))
    assert consistent["flipRate"] == 0.0 and consistent["firstPositionWinRate"] == 0.5


def test_length_bias_and_length_controlled_win_rate() -> None:
    """A judge that always picks the longer summary, with one model longer on 70% of the
    units: its raw win rate is 0.7, the length-controlled one close to 0.5."""
    rows = []
    for k in range(30):
        verbose = 20 + k % 7 if k % 10 < 7 else 6 + k % 3
        terse = 9 + k % 4
        won = 1.0 if verbose > terse else 0.0
        rows += [(f"u{k}", "verbose", "terse", won, verbose, terse),
                 (f"u{k}", "terse", "verbose", 1.0 - won, terse, verbose)]
    vs = _verdicts("length", rows)
    bias = length_bias_pairwise(vs)
    assert bias["longerWinRate"] == 1.0
    assert bias["lengthVerdictCorrelation"] > 0.7
    lc = length_controlled(vs)
    assert lc["models"]["verbose"]["winRate"] == pytest.approx(0.7)
    assert abs(lc["models"]["verbose"]["lengthControlledWinRate"] - 0.5) < 0.15
    assert lc["judges"]["length"]["lengthCoefficient"] > 1.0
    assert abs(lc["judges"]["length"]["positionCoefficient"]) < 1e-6
    # a judge whose verdicts follow quality, not length: the control changes little
    fair = _verdicts("fair", [(f"u{k}", "good", "bad", 1.0, 10 + k % 5, 10 + (k * 3) % 5)
                              for k in range(30)]
                     + [(f"u{k}", "bad", "good", 0.0, 10 + (k * 3) % 5, 10 + k % 5)
                        for k in range(30)])
    lc_fair = length_controlled(fair)
    assert lc_fair["models"]["good"]["lengthControlledWinRate"] > 0.9


def test_pointwise_length_correlation_checked_against_scipy() -> None:
    from scipy import stats

    lengths = [3, 8, 12, 20, 25, 40]
    scores = [1.5, 2.0, 2.2, 3.9, 4.1, 5.0]
    out = length_bias_pointwise(lengths, scores)
    assert out["lengthScoreSpearman"] == pytest.approx(stats.spearmanr(lengths, scores)[0])
    assert out["lengthScorePearson"] == pytest.approx(stats.pearsonr(lengths, scores)[0])
    assert length_bias_pointwise([1, 2], [3.0, 3.0])["lengthScoreSpearman"] is None


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_scikit_learn(weights: str | None) -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(5)
    a = rng.integers(1, 6, size=80)
    b = np.clip(a + rng.integers(-1, 2, size=80), 1, 5)
    ours = cohen_kappa(a.tolist(), b.tolist(), categories=[1, 2, 3, 4, 5],
                       weights=weights)  # type: ignore[arg-type]
    assert ours == pytest.approx(cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5],
                                                   weights=weights), abs=1e-12)


def test_fleiss_kappa_hand_computed() -> None:
    """The worked example of Fleiss' kappa (14 raters, 10 items, 5 categories), whose
    kappa is 0.210 (Fleiss 1971, as reproduced on Wikipedia)."""
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
             [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
             [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-5)


def test_judge_agreement_over_shared_items() -> None:
    labels = {"j1": {1: "a", 2: "b", 3: "tie", 4: "a"},
              "j2": {1: "a", 2: "b", 3: "tie", 4: "a"},
              "j3": {1: "b", 2: "a", 3: "a"}}
    out = judge_agreement(labels, categories=["a", "b", "tie"])
    by_pair = {tuple(p["judges"]): p for p in out["cohen"]}
    assert by_pair[("j1", "j2")]["kappa"] == pytest.approx(1.0)
    assert by_pair[("j1", "j3")]["items"] == 3
    assert out["fleiss"]["raters"] == 3 and out["fleiss"]["items"] == 3


def test_mean_ci_resamples_units() -> None:
    values = {"u1": [1.0, 1.0], "u2": [3.0], "u3": [5.0, 5.0, 5.0]}
    out = mean_ci(values, samples=500, seed=1)
    assert out["mean"] == pytest.approx(20.0 / 6)
    assert out["n"] == 6 and out["units"] == 3
    assert 1.0 <= out["ciLow"] <= out["mean"] <= out["ciHigh"] <= 5.0
    assert mean_ci({}, samples=10, seed=0)["mean"] is None
