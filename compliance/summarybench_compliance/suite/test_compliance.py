"""The compliance benchmark: every labelled example classified by the rule scanner and by
the LLM, each classification recorded for the terminal summary and eval_results.json.

Each test function is one classifier; each parameter one example, with the example's
stable id (``langchain-art14-noncompliant-037``), sorted so that every xdist worker
collects the same items in the same order. A test passes when its classification was
scored, right or wrong: the figures are the benchmark's result. It fails only when no
classification could be made.

A project runs the benchmark by taking the three names below into a test module of its own
(``from summarybench_compliance.suite.test_compliance import *``: the scanner's tests come
first, as here).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pytest_summarybench.llm import ModelCallError
from pytest_summarybench.schemas import ScoreRecord
from summarybench_compliance.dataset import EVAL_DATA, Example
from summarybench_compliance.parsing import Prediction
from summarybench_compliance.plugin import select_examples
from summarybench_compliance.records import SCANNER_ID, classification_record, failed_record
from summarybench_compliance.scanner import ScanError

if TYPE_CHECKING:
    from summarybench_compliance.classifier import LLMClassifier
    from summarybench_compliance.scanner import Scanner

Record = Callable[[ScoreRecord], None]

__all__ = ["pytest_generate_tests", "test_scanner", "test_llm"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "example" in metafunc.fixturenames:
        examples = sorted(select_examples(metafunc.config, EVAL_DATA), key=lambda e: e.id)
        metafunc.parametrize("example", examples, ids=[e.id for e in examples])


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
    failure: str | None
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
