"""The compliance benchmark's LLM classifier end to end through the local-model route:
the real benchmark module, ``--compliance-model local/<weights>``, structured output held
by llama-cpp-python's grammar, so every answer parses.

Marked ``local_llm``: skipped, with the reason, where summarybench's ``local`` extra is not
installed.
"""

from __future__ import annotations

import compliance_project as project
import pytest

pytestmark = pytest.mark.local_llm

#: The weights the local extra installs (what summarybench's own local-model tests use).
REAL_MODEL = "smollm2-135m-instruct"


@pytest.fixture(autouse=True)
def _local_model() -> None:
    from pytest_summarybench.llm import local

    reason = local.unavailable_reason(REAL_MODEL)
    if reason is not None:
        pytest.skip(f"local_llm: needs summarybench's 'local' extra ({reason})")


def test_the_benchmark_classifies_through_a_local_model(bench: pytest.Pytester) -> None:
    result = project.run(bench, "--compliance-test-mode",
                         "--compliance-model", f"local/{REAL_MODEL}", "-k", "test_llm")
    result.assert_outcomes(passed=10, deselected=10)
    results = project.results(bench.path)
    block = results["llm_models"][f"local/{REAL_MODEL}"]
    assert block["num_scored"] == 10 and block["failed"] == []
    # the schema is the grammar: a 135M model's answers name an article or NONE every time
    assert block["unparsed"] == 0
    assert sum(block["confusion_matrix"][t][p] for t in block["confusion_matrix"]
               for p in block["confusion_matrix"][t]) == 10
