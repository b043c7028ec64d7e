"""The score record a compliance test sends to the controller, and the outcome the report
reads back from it: the one place that fixes the record's ``details`` keys."""

from __future__ import annotations

from typing import Any

from pytest_summarybench.schemas import ScoreRecord

from .dataset import Example
from .metrics import Outcome
from .parsing import Prediction

BENCHMARK = "compliance"
SCANNER_ID = "rule-scanner"
EVALUATOR = "classify"
UNPARSED = "unparsed"
"""The predicted class of an answer that named no article (always wrong)."""


def classification_record(example: Example, model_id: str, prediction: Prediction | None,
                          elapsed_ms: float, **extra: Any) -> ScoreRecord:
    """A scored classification of ``example``; ``extra`` adds JSON details (evidence...)."""
    predicted = prediction.label if prediction is not None else UNPARSED
    predicted_severity = prediction.severity if prediction is not None else None
    outcome = Outcome(example_id=example.id, framework=example.framework,
                      true_label=example.label, true_severity=example.severity,
                      predicted_label=predicted, predicted_severity=predicted_severity,
                      scan_ms=elapsed_ms, idiom=example.idiom,
                      hard_negative=example.hard_negative)
    metrics = {"correct": float(outcome.correct),
               "compliance_correct": float(outcome.compliance_correct),
               "scan_ms": round(elapsed_ms, 3)}
    if outcome.severity_scored:
        metrics["severity_correct"] = float(example.severity == predicted_severity)
    details = {"framework": example.framework, "true_article": example.label,
               "true_severity": example.severity, "predicted_article": predicted,
               "predicted_severity": predicted_severity,
               "compliance_state": example.compliance_state, "scan_ms": round(elapsed_ms, 3),
               "dataset": example.source, "idiom": example.idiom,
               "hard_negative": example.hard_negative, **extra}
    return ScoreRecord(benchmark=BENCHMARK, unit_id=example.id, model_id=model_id,
                       evaluator=EVALUATOR, metrics=metrics, details=details)


def failed_record(example: Example, model_id: str, reason: str) -> ScoreRecord:
    """A classification that could not happen (the call failed, the code did not parse)."""
    return ScoreRecord.failed(benchmark=BENCHMARK, unit_id=example.id, model_id=model_id,
                              evaluator=EVALUATOR, reason=reason)


def outcome_of(record: ScoreRecord) -> Outcome:
    """The scored outcome a classification record carries in its details."""
    d = record.details
    return Outcome(example_id=record.unit_id, framework=str(d["framework"]),
                   true_label=str(d["true_article"]), true_severity=d.get("true_severity"),
                   predicted_label=str(d["predicted_article"]),
                   predicted_severity=d.get("predicted_severity"),
                   scan_ms=float(d.get("scan_ms", 0.0)), idiom=d.get("idiom"),
                   hard_negative=bool(d.get("hard_negative", False)))
