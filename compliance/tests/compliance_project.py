"""A pytest project that runs the compliance benchmark the way a user's does: a test module
importing the benchmark's tests from the package, run in a subprocess with the harness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

#: The test module of such a project (what benchmarks/compliance/test_compliance.py holds):
#: the suite's tests in its order, the scanner's first.
TEST_MODULE = ("from summarybench_compliance.suite import test_compliance as suite\n"
               "pytest_generate_tests = suite.pytest_generate_tests\n"
               "test_scanner = suite.test_scanner\n"
               "test_llm = suite.test_llm\n")


def write_project(folder: Path) -> None:
    (folder / "test_compliance.py").write_text(TEST_MODULE, encoding="utf-8")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "-rs", *args)


def results(folder: Path, output: str = "summarybench-results") -> dict[str, Any]:
    """The eval_results.json a run in ``folder`` wrote."""
    path = folder / output / "eval_results.json"
    return json.loads(path.read_text(encoding="utf-8"))
