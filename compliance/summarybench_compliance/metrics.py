"""The seed's metrics over one classifier's predictions, plus seeded bootstrap intervals.

Every example has one true class (the violated article, or ``none`` for compliant code)
and one predicted class. Per-article precision, recall and F1 treat each article as the
positive class against everything else, with 0 where a ratio has a zero denominator
(scikit-learn's ``zero_division=0``), so articles without support still get a row.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .dataset import ARTICLES, NO_VIOLATION

ARTICLE_LABELS: tuple[str, ...] = tuple(str(a) for a in ARTICLES)
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class Outcome:
    """One example as one classifier saw it."""

    example_id: str
    framework: str
    true_label: str
    """Violated article as text, or ``none``."""
    true_severity: str | None
    predicted_label: str
    predicted_severity: str | None
    scan_ms: float
    idiom: str | None = None
    hard_negative: bool = False

    @property
    def correct(self) -> bool:
        return self.predicted_label == self.true_label

    @property
    def compliance_correct(self) -> bool:
        """Whether violation vs. no violation was called right, whatever the article."""
        return (self.predicted_label == NO_VIOLATION) == (self.true_label == NO_VIOLATION)

    @property
    def severity_scored(self) -> bool:
        """Both sides name a severity (the seed scores severity only then)."""
        return self.true_severity is not None and self.predicted_severity is not None


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def article_metrics(outcomes: Sequence[Outcome]) -> dict[str, dict[str, float]]:
    """Per article: accuracy (the seed's: share of its examples predicted as it, which is
    its recall), precision, recall, F1 and count (support)."""
    out: dict[str, dict[str, float]] = {}
    for label in ARTICLE_LABELS:
        tp = sum(1 for o in outcomes if o.true_label == label and o.predicted_label == label)
        fp = sum(1 for o in outcomes if o.true_label != label and o.predicted_label == label)
        fn = sum(1 for o in outcomes if o.true_label == label and o.predicted_label != label)
        precision = _ratio(tp, tp + fp)
        recall = _ratio(tp, tp + fn)
        out[label] = {"accuracy": recall, "precision": precision, "recall": recall,
                      "f1": _ratio(2 * precision * recall, precision + recall),
                      "count": tp + fn}
    return out


def macro_f1(outcomes: Sequence[Outcome]) -> float:
    """Unweighted mean of the six articles' F1 (zero-support articles count as 0)."""
    per = article_metrics(outcomes)
    return sum(m["f1"] for m in per.values()) / len(per)


def overall_metrics(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """The seed's ``rule_based_metrics`` block, with the sample sizes behind each figure."""
    scored = [o for o in outcomes if o.severity_scored]
    return {
        "overall_accuracy": _ratio(sum(o.correct for o in outcomes), len(outcomes)),
        "severity_accuracy": _ratio(sum(o.true_severity == o.predicted_severity
                                        for o in scored), len(scored)),
        "compliance_accuracy": _ratio(sum(o.compliance_correct for o in outcomes),
                                      len(outcomes)),
        "macro_f1": macro_f1(outcomes),
        "n": len(outcomes),
        "severity_n": len(scored),
    }


def confusion(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """Sparse confusion matrix ``true -> predicted -> count``, as in the seed's JSON."""
    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        matrix[o.true_label][o.predicted_label] += 1
    order = {label: i for i, label in enumerate((*ARTICLE_LABELS, NO_VIOLATION))}

    def key(label: str) -> tuple[int, str]:
        return order.get(label, len(order)), label

    return {t: {p: matrix[t][p] for p in sorted(matrix[t], key=key)}
            for t in sorted(matrix, key=key)}


def _groups(outcomes: Sequence[Outcome], key: Callable[[Outcome], str | None]
            ) -> dict[str, list[bool]]:
    """Whether each outcome was right, per group (``key``; None leaves an outcome out)."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for o in outcomes:
        name = key(o)
        if name is not None:
            groups[name].append(o.correct)
    return dict(sorted(groups.items()))


def _accuracy_row(hits: list[bool]) -> dict[str, Any]:
    return {"correct": sum(hits), "total": len(hits), "accuracy": _ratio(sum(hits), len(hits))}


def framework_accuracy(outcomes: Sequence[Outcome]) -> dict[str, dict[str, float]]:
    return {fw: _accuracy_row(hits)
            for fw, hits in _groups(outcomes, lambda o: o.framework).items()}


def group_accuracy(outcomes: Sequence[Outcome], key: Callable[[Outcome], str | None], *,
                   seed: int, resamples: int = BOOTSTRAP_RESAMPLES
                   ) -> dict[str, dict[str, Any]]:
    """Accuracy per group (``key`` of an outcome; None leaves it out), each with its 95%
    percentile-bootstrap interval over the group's examples (``mean_interval``, seeded)."""
    from pytest_summarybench.stats import mean_interval

    out: dict[str, dict[str, Any]] = {}
    for name, hits in _groups(outcomes, key).items():
        low, high = mean_interval([float(h) for h in hits], seed=seed, iterations=resamples)
        out[name] = {**_accuracy_row(hits), "ci": [round(low, 4), round(high, 4)]}
    return out


def _hard_negative_group(o: Outcome) -> str:
    kind = "hard negative" if o.hard_negative else "other"
    return f"{kind}, {'compliant' if o.true_label == NO_VIOLATION else 'violation'}"


def intervals(outcomes: Sequence[Outcome], *, seed: int,
              resamples: int = BOOTSTRAP_RESAMPLES) -> dict[str, list[float]]:
    """95% percentile-bootstrap intervals of the headline metrics, resampling examples.

    Accuracies are means of per-example indicators (the harness's seeded
    ``mean_interval``). Macro-F1 is not a mean, but it depends on the examples only
    through each article's true-positive, false-positive and false-negative counts: the
    harness's ``sums_interval`` resamples those per-example indicators (``_f1_rows``).
    scipy's bootstrap called ``macro_f1`` on every resample of every example: time and
    memory grew as resamples times examples (20,000 examples: over 200 s and 1.1 GB).
    """
    from pytest_summarybench.stats import mean_interval, sums_interval

    if not outcomes:
        return {}
    out: dict[str, list[float]] = {}
    for name, values in (("overall_accuracy", [o.correct for o in outcomes]),
                         ("compliance_accuracy", [o.compliance_correct for o in outcomes]),
                         ("severity_accuracy", [o.true_severity == o.predicted_severity
                                                for o in outcomes if o.severity_scored])):
        if values:
            low, high = mean_interval([float(v) for v in values], seed=seed,
                                      iterations=resamples)
            out[name] = [round(low, 4), round(high, 4)]
    if len(outcomes) >= 2:
        low, high = sums_interval(_f1_rows(outcomes), _macro_f1_of_sums, seed=seed,
                                  iterations=resamples)
        out["macro_f1"] = [round(low, 4), round(high, 4)]
    return out


def _f1_rows(outcomes: Sequence[Outcome]) -> list[list[float]]:
    """Per example, for each article in turn: whether it is a true positive, a false
    positive and a false negative of that article (0 or 1 each)."""
    rows = []
    for o in outcomes:
        row: list[float] = []
        for label in ARTICLE_LABELS:
            true, predicted = o.true_label == label, o.predicted_label == label
            row += [float(true and predicted), float(predicted and not true),
                    float(true and not predicted)]
        rows.append(row)
    return rows


def _macro_f1_of_sums(sums: Any) -> Any:
    """``macro_f1`` from the column sums of ``_f1_rows`` (one row of sums per resample):
    F1 = 2 tp / (2 tp + fp + fn), 0 where an article has no example and no prediction."""
    import numpy as np

    tp, fp, fn = sums[:, 0::3], sums[:, 1::3], sums[:, 2::3]
    denominator = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)
    return f1.mean(axis=1)


def summarize(outcomes: Sequence[Outcome], *, seed: int) -> dict[str, Any]:
    """Every figure of one classifier, keyed as in the seed's ``eval_results.json``."""
    return {
        "metrics": overall_metrics(outcomes),
        "per_article_metrics": article_metrics(outcomes),
        "framework_accuracy": framework_accuracy(outcomes),
        "stack_accuracy": group_accuracy(outcomes, lambda o: o.framework, seed=seed),
        "idiom_accuracy": group_accuracy(outcomes, lambda o: o.idiom, seed=seed),
        "hard_negative_accuracy": group_accuracy(
            outcomes, _hard_negative_group, seed=seed)
        if any(o.hard_negative for o in outcomes) else {},
        "confusion_matrix": confusion(outcomes),
        "confidence_intervals": intervals(outcomes, seed=seed),
        "avg_scan_time_ms": _ratio(sum(o.scan_ms for o in outcomes), len(outcomes)),
    }
