"""The compliance benchmark (EU AI Act article classification, ``compliance/``): every
labelled example x the rule scanner and the LLM classifier.

The benchmark is a distribution of its own, ``summarybench-compliance`` (installed with
``pip install -e ./compliance``); its test module ships in it, and importing it here is
all this folder needs. Without the distribution, this module is skipped, saying so.
"""

from __future__ import annotations

import pytest

pytest.importorskip("summarybench_compliance", reason="the compliance benchmark is not "
                    "installed: pip install -e ./compliance")

from summarybench_compliance.suite.test_compliance import (  # noqa: E402
    pytest_generate_tests,
    test_llm,
    test_scanner,
)

__all__ = ["pytest_generate_tests", "test_llm", "test_scanner"]
