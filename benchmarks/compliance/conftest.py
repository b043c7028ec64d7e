"""Parametrizes the compliance benchmark over the labelled examples.

Each test function is one evaluator (the rule scanner, the LLM); each parameter one
example, with the example's stable id (``langchain-art14-noncompliant-037``) sorted so
that every xdist worker collects the same items in the same order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.compliance.plugin import select_examples

EVAL_DATA = Path(__file__).with_name("eval_data.jsonl")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "example" in metafunc.fixturenames:
        examples = sorted(select_examples(metafunc.config, EVAL_DATA), key=lambda e: e.id)
        metafunc.parametrize("example", examples, ids=[e.id for e in examples])
