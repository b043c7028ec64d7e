"""The compliance benchmark: every labelled example classified by the rule scanner and by
the LLM, each classification recorded for the terminal summary and eval_results.json.

A test passes when its classification was scored, right or wrong; the figures are the
benchmark's result. It fails only when no classification could be made.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from pytest_summarybench.compliance.classifier import LLMClassifier
from pytest_summarybench.compliance.dataset import Example
from pytest_summarybench.compliance.parsing import Prediction
from pytest_summarybench.compliance.records import (
    SCANNER_ID,
    classification_record,
    failed_record,
)
from pytest_summarybench.compliance.scanner import ScanError, Scanner
from pytest_summarybench.llm import ModelCallError
from pytest_summarybench.schemas import ScoreRecord

Record = Callable[[ScoreRecord], None]


def test_scanner(example: Example, compliance_scanner: Scanner, sb_record: Record) -> None:
    started = time.perf_counter()
    try:
        result = compliance_scanner.scan(example.code)
    except ScanError as err:
        sb_record(failed_record(example, SCANNER_ID, str(err)))
        pytest.fail(f"{example.id}: {err}", pytrace=False)
    elapsed_ms = (time.perf_counter() - started) * 1000
    primary = result.primary
    prediction = Prediction(article=primary.article if primary else None,
                            severity=primary.severity if primary else None)
    findings = {str(a.article): {"severity": a.severity, "evidence": list(a.evidence)}
                for a in result.findings}
    sb_record(classification_record(example, SCANNER_ID, prediction, elapsed_ms,
                                    findings=findings))


def test_llm(example: Example, compliance_llm: LLMClassifier, sb_record: Record) -> None:
    model_id = compliance_llm.model.id
    try:
        answer = compliance_llm.classify(example.code)
    except ModelCallError as err:
        failure = str(err)
    else:
        failure = None
    if failure is not None:  # failed outside the except block: one message, no chain
        sb_record(failed_record(example, model_id, failure))
        pytest.fail(f"{example.id}: {failure}", pytrace=False)
    sb_record(classification_record(example, model_id, answer.prediction, answer.latency_ms,
                                    raw_answer=answer.raw[:2000],
                                    parse_error=answer.parse_error,
                                    response_format=answer.response_format,
                                    input_tokens=answer.input_tokens,
                                    output_tokens=answer.output_tokens))
