"""The compliance benchmark's LLM classifier end to end through the local-model route:
the real benchmark module, ``--compliance-model local/<weights>``, structured output held
by llama-cpp-python's grammar, so every answer parses.

Marked ``local_llm``: skipped, with the reason, where the ``local`` extra is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.local.conftest import REAL_MODEL

pytestmark = pytest.mark.local_llm

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "compliance"


def test_the_benchmark_classifies_through_a_local_model(pytester: pytest.Pytester) -> None:
    for name in ("conftest.py", "test_compliance.py", "eval_data.jsonl"):
        (pytester.path / name).write_text((BENCH / name).read_text(encoding="utf-8"),
                                          encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "-p", "summarybench", "-p", "no:cacheprovider", "--compliance-test-mode",
        "--compliance-model", f"local/{REAL_MODEL}", "-k", "test_llm")
    result.assert_outcomes(passed=10, deselected=10)
    results = json.loads((pytester.path / "summarybench-results" / "eval_results.json")
                         .read_text(encoding="utf-8"))
    block = results["llm_models"][f"local/{REAL_MODEL}"]
    assert block["num_scored"] == 10 and block["failed"] == []
    # the schema is the grammar: a 135M model's answers name an article or NONE every time
    assert block["unparsed"] == 0
    assert sum(block["confusion_matrix"][t][p] for t in block["confusion_matrix"]
               for p in block["confusion_matrix"][t]) == 10
