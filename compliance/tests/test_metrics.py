"""The seed's metrics checked against scikit-learn on the same predictions, including
articles without support, and the bootstrap intervals against scipy."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import stats

from summarybench_compliance.dataset import DATA_DIR, NO_VIOLATION, load_examples
from summarybench_compliance.metrics import (
    ARTICLE_LABELS,
    Outcome,
    article_metrics,
    confusion,
    framework_accuracy,
    intervals,
    macro_f1,
    overall_metrics,
)
from summarybench_compliance.scanner import scan_code

# Without the dev extra (scikit-learn) this module is skipped, not a collection error
# (e.g. in `pytest -m local_llm` after installing only the local extra).
pytest.importorskip("sklearn", reason='needs the dev extra (pip install -e ".[dev]")')
from sklearn.metrics import (  # noqa: E402
    accuracy_score,
    confusion_matrix,
    precision_recall_fscore_support,
)

LABELS = [*ARTICLE_LABELS, NO_VIOLATION]
HELDOUT = DATA_DIR / "heldout_data.jsonl"


def _outcomes(truth: list[str], predicted: list[str]) -> list[Outcome]:
    return [Outcome(f"ex-{i}", ("langchain", "autogen", "crewai")[i % 3], t,
                    None if t == NO_VIOLATION else "HIGH", p,
                    None if p == NO_VIOLATION else ("HIGH", "LOW")[i % 2], 0.5)
            for i, (t, p) in enumerate(zip(truth, predicted, strict=True))]


def _random_case(seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    # article 11 is never true but sometimes predicted; 15 is neither true nor predicted
    true_pool = ["9", "10", "12", "14", NO_VIOLATION]
    pred_pool = ["9", "10", "11", "12", "14", NO_VIOLATION]
    truth = [rng.choice(true_pool) for _ in range(60)]
    predicted = [t if rng.random() < 0.5 else rng.choice(pred_pool) for t in truth]
    return truth, predicted


def _check_against_sklearn(truth: list[str], predicted: list[str]) -> None:
    outcomes = _outcomes(truth, predicted)
    ours = article_metrics(outcomes)
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, predicted, labels=list(ARTICLE_LABELS), zero_division=0)
    for i, label in enumerate(ARTICLE_LABELS):
        assert ours[label]["precision"] == pytest.approx(precision[i])
        assert ours[label]["recall"] == pytest.approx(recall[i])
        assert ours[label]["f1"] == pytest.approx(f1[i])
        assert ours[label]["count"] == support[i]
        assert ours[label]["accuracy"] == pytest.approx(recall[i])
    matrix = confusion_matrix(truth, predicted, labels=LABELS)
    sparse = confusion(outcomes)
    for i, t in enumerate(LABELS):
        for j, p in enumerate(LABELS):
            assert sparse.get(t, {}).get(p, 0) == matrix[i, j]
    overall = overall_metrics(outcomes)
    assert overall["overall_accuracy"] == pytest.approx(accuracy_score(truth, predicted))
    assert overall["macro_f1"] == pytest.approx(float(np.mean(f1)))
    binary_truth = [t != NO_VIOLATION for t in truth]
    binary_pred = [p != NO_VIOLATION for p in predicted]
    assert overall["compliance_accuracy"] == pytest.approx(
        accuracy_score(binary_truth, binary_pred))


@pytest.mark.parametrize("seed", range(5))
def test_metrics_equal_sklearn_with_zero_support_articles(seed: int) -> None:
    truth, predicted = _random_case(seed)
    assert "15" not in truth and "15" not in predicted and "11" not in truth
    _check_against_sklearn(truth, predicted)
    metrics = article_metrics(_outcomes(truth, predicted))
    assert metrics["15"] == {"accuracy": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0,
                             "count": 0}
    assert metrics["11"]["count"] == 0 and metrics["11"]["precision"] == 0.0


def test_metrics_equal_sklearn_on_the_scanners_heldout_predictions() -> None:
    examples = load_examples(HELDOUT)
    truth = [e.label for e in examples]
    predicted = []
    for example in examples:
        primary = scan_code(example.code).primary
        predicted.append(NO_VIOLATION if primary is None else str(primary.article))
    _check_against_sklearn(truth, predicted)


def test_severity_is_scored_only_where_both_sides_name_one() -> None:
    outcomes = [Outcome("a", "x", "9", "HIGH", "9", "HIGH", 1.0),
                Outcome("b", "x", "9", "HIGH", "12", "LOW", 1.0),
                Outcome("c", "x", "9", "HIGH", NO_VIOLATION, None, 1.0),
                Outcome("d", "x", NO_VIOLATION, None, "14", "HIGH", 1.0)]
    overall = overall_metrics(outcomes)
    assert overall["severity_n"] == 2
    assert overall["severity_accuracy"] == 0.5
    assert overall["overall_accuracy"] == 0.25
    assert overall["compliance_accuracy"] == 0.5
    assert framework_accuracy(outcomes) == {"x": {"correct": 1, "total": 4, "accuracy": 0.25}}


def test_empty_and_unknown_predictions_stay_well_defined() -> None:
    assert overall_metrics([])["overall_accuracy"] == 0.0
    out = [Outcome("a", "x", "9", "LOW", "unparsed", None, 1.0)]
    assert confusion(out) == {"9": {"unparsed": 1}}
    assert article_metrics(out)["9"]["recall"] == 0.0


def test_intervals_are_seeded_and_agree_with_scipy() -> None:
    truth, predicted = _random_case(7)
    outcomes = _outcomes(truth, predicted)
    first = intervals(outcomes, seed=3)
    assert first == intervals(outcomes, seed=3)
    assert set(first) == {"overall_accuracy", "compliance_accuracy", "severity_accuracy",
                          "macro_f1"}
    correct = np.array([float(o.correct) for o in outcomes])
    reference = stats.bootstrap((correct,), np.mean, n_resamples=4000, method="percentile",
                                rng=np.random.default_rng(11)).confidence_interval
    low, high = first["overall_accuracy"]
    assert low == pytest.approx(reference.low, abs=0.04)
    assert high == pytest.approx(reference.high, abs=0.04)
    accuracy = overall_metrics(outcomes)["overall_accuracy"]
    assert low <= accuracy <= high
    f1_low, f1_high = first["macro_f1"]
    assert f1_low <= overall_metrics(outcomes)["macro_f1"] <= f1_high


def test_the_macro_f1_interval_resamples_counts_not_examples(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Payload: 20,000 copies of one example (6.2 MB) reached 1.1 GB and did not finish in
    # 200 s: scipy's bootstrap called macro_f1 on each of 2,000 resamples of every example,
    # holding a resamples-by-examples index array. Now the interval comes from each
    # article's tp/fp/fn counts: it never calls macro_f1 per resample, its memory does
    # not grow with the examples, and it agrees with resampling examples one by one.
    import tracemalloc

    import summarybench_compliance.metrics as metrics

    truth, predicted = _random_case(5)
    small = _outcomes(truth, predicted)
    # the statistic of the sums is macro_f1 itself
    sums = np.asarray(metrics._f1_rows(small)).sum(axis=0)[None, :]
    assert metrics._macro_f1_of_sums(sums)[0] == pytest.approx(macro_f1(small))
    # and the interval matches a bootstrap that resamples examples (scipy, 2,000 draws)
    reference = stats.bootstrap(
        (np.arange(len(small)),), lambda idx: macro_f1([small[int(i)] for i in idx]),
        n_resamples=2000, method="percentile", vectorized=False,
        rng=np.random.default_rng(1)).confidence_interval
    low, high = intervals(small, seed=3)["macro_f1"]
    assert low == pytest.approx(reference.low, abs=0.05)
    assert high == pytest.approx(reference.high, abs=0.05)

    calls = []
    real = metrics.macro_f1

    def counted(outcomes: list[Outcome]) -> float:
        calls.append(len(outcomes))
        if len(calls) > 3:
            raise AssertionError("macro_f1 called once per resample")
        return real(outcomes)

    monkeypatch.setattr(metrics, "macro_f1", counted)
    many = small * 100  # 6,000 examples
    tracemalloc.start()
    try:
        big = intervals(many, seed=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert calls == []
    # before: a 2,000 x 6,000 index array alone was 96 MB
    assert peak < 24 * 2**20, peak
    assert big["macro_f1"][0] <= real(many) <= big["macro_f1"][1]
