"""The real local model (SmolLM2-135M from the ``local`` extra) through the model layer:
a summary, and judge verdicts that parse because the grammar comes from the schema.

Marked ``local_llm``: skipped, with the reason, where llama-cpp-python or the weights are
not installed (CI does not install the extra)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_summarybench.evaluators.judge.calling import JudgeClient
from pytest_summarybench.evaluators.judge.prompts import (
    PAIRWISE_TAG,
    POINTWISE_TAG,
    pairwise_messages,
    pointwise_messages,
)
from pytest_summarybench.evaluators.judge.verdicts import (
    PAIRWISE_JSON_SCHEMA,
    POINTWISE_JSON_SCHEMA,
    parse_pairwise,
    parse_pointwise,
)
from pytest_summarybench.llm import complete, local
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.llm.local.conftest import REAL_MODEL

pytestmark = pytest.mark.local_llm

CODE = "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n"


@pytest.fixture(scope="module")
def model() -> ModelConfig:
    return ModelConfig.parse(f"local/{REAL_MODEL}").model_copy(
        update={"max_tokens": 200, "timeout_s": 300.0})


@pytest.fixture(scope="module", autouse=True)
def _stop_after_module() -> Iterator[None]:
    yield
    local.stop_servers()


def test_a_real_summary(model: ModelConfig) -> None:
    answer = complete(model, [
        {"role": "system", "content": "Summarize the code in one sentence."},
        {"role": "user", "content": CODE}], temperature=0.0)
    assert answer.text and answer.output_tokens > 0 and answer.input_tokens > 10
    assert answer.model_version  # the server names the model it ran


def test_real_judge_verdicts_parse(model: ModelConfig, tmp_path: Path) -> None:
    client = JudgeClient(Store(tmp_path / "s.sqlite"), parse_retries=0)
    point = client.ask(model, pointwise_messages("python", CODE, "Adds two numbers."),
                       parse_pointwise, tag=POINTWISE_TAG, schema_name="pointwise_verdict",
                       schema=POINTWISE_JSON_SCHEMA)
    assert 1.0 <= point.verdict.score <= 5.0 and point.response_format == "json_object"
    pair = client.ask(model, pairwise_messages("python", CODE, "Adds two numbers.",
                                               "Does something."),
                      parse_pairwise, tag=PAIRWISE_TAG, schema_name="pairwise_verdict",
                      schema=PAIRWISE_JSON_SCHEMA)
    assert pair.verdict.winner in ("A", "B", "tie")
