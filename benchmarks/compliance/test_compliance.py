"""The compliance benchmark (EU AI Act article classification, ``compliance/``): every
labelled example x the rule scanner and the LLM classifier.

The benchmark is a distribution of its own, ``summarybench-compliance`` (installed with
``pip install -e ./compliance``); its test module ships in it, and taking its tests here is
all this folder needs. Without the distribution, this module is skipped, saying so.
"""

from __future__ import annotations

import pytest

suite = pytest.importorskip(
    "summarybench_compliance.suite.test_compliance",
    reason="the compliance benchmark is not installed: pip install -e ./compliance")

# In the suite's order (the scanner's tests, then the LLM's), which pytest keeps.
pytest_generate_tests = suite.pytest_generate_tests
test_scanner = suite.test_scanner
test_llm = suite.test_llm
