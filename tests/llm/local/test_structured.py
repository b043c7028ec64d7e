"""Structured output on the llama.cpp route: the schema travels inside ``json_object``,
bounded integers become enums, and judges read the grammar-constrained answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_summarybench.evaluators.judge.calling import JudgeClient, response_format
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
from pytest_summarybench.llm.local import llama_cpp_response_format, llama_cpp_schema
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.llm.local.conftest import FakeLlama

CODE = "def f(x):\n    return x + 1\n"


def test_bounded_integers_become_enums_at_any_depth() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 2}},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "open": {"type": "integer", "minimum": 0}}}
    out = llama_cpp_schema(schema)
    assert out["properties"]["score"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    assert out["properties"]["items"]["items"]["enum"] == [0, 1, 2]
    assert out["properties"]["ratio"] == schema["properties"]["ratio"]  # not enumerable
    assert out["properties"]["open"] == {"type": "integer", "minimum": 0}
    assert schema["properties"]["score"]["minimum"] == 1  # the input is not changed
    pointwise = llama_cpp_schema(POINTWISE_JSON_SCHEMA)
    assert pointwise["properties"]["scores"] == POINTWISE_JSON_SCHEMA["properties"]["scores"]
    assert pointwise["properties"]["reasoning"] == {"type": "string", "maxLength": 600}


def test_free_strings_are_bounded_and_names_are_not_schemas() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {
        "type": {"type": "string", "enum": ["a", "b"]},
        "note": {"type": "string"},
        "short": {"type": "string", "maxLength": 20}}}
    out = llama_cpp_schema(schema, max_string_chars=50)
    assert out["properties"] == {"type": {"type": "string", "enum": ["a", "b"]},
                                 "note": {"type": "string", "maxLength": 50},
                                 "short": {"type": "string", "maxLength": 20}}


def test_judges_on_gguf_weights_get_the_schema_inside_json_object() -> None:
    gguf = ModelConfig.parse("local//models/gemma-3-270m.gguf")
    fmt = response_format(gguf, "auto", "pointwise_verdict", POINTWISE_JSON_SCHEMA)
    assert fmt == {"type": "json_object", "schema": llama_cpp_schema(POINTWISE_JSON_SCHEMA)}
    assert response_format(gguf, "json_schema", "v", PAIRWISE_JSON_SCHEMA) == \
        llama_cpp_response_format(PAIRWISE_JSON_SCHEMA)
    assert response_format(gguf, "json_object", "v", POINTWISE_JSON_SCHEMA) == \
        {"type": "json_object"}
    assert response_format(gguf, "off", "v", POINTWISE_JSON_SCHEMA) is None
    served = gguf.model_copy(update={"api_endpoint": "http://127.0.0.1:1/v1"})
    assert response_format(served, "auto", "v", POINTWISE_JSON_SCHEMA) == \
        {"type": "json_object"}


def test_judge_verdicts_through_the_local_server(fake_llama: FakeLlama,
                                                 tmp_path: Path) -> None:
    judge = ModelConfig.parse(f"local/{fake_llama.weights}")
    client = JudgeClient(Store(tmp_path / "s.sqlite"))
    point = client.ask(judge, pointwise_messages("python", CODE, "Adds one."),
                       parse_pointwise, tag=POINTWISE_TAG, schema_name="pointwise_verdict",
                       schema=POINTWISE_JSON_SCHEMA)
    assert point.verdict.score == 5.0 and point.answers == 1
    pair = client.ask(judge, pairwise_messages("python", CODE, "Adds one.", "Returns x."),
                      parse_pairwise, tag=PAIRWISE_TAG, schema_name="pairwise_verdict",
                      schema=PAIRWISE_JSON_SCHEMA)
    assert pair.verdict.winner == "tie"
    bodies = [r["body"] for r in fake_llama.requests()]
    assert [b["response_format"]["schema"] for b in bodies] == [
        llama_cpp_schema(POINTWISE_JSON_SCHEMA), llama_cpp_schema(PAIRWISE_JSON_SCHEMA)]
    assert all(b["response_format"]["type"] == "json_object" and b["temperature"] == 0.0
               for b in bodies)


def test_any_caller_asking_json_schema_gets_the_llama_cpp_form(fake_llama: FakeLlama) -> None:
    from pytest_summarybench.llm import complete

    schema = {"type": "object", "properties": {"selected": {"type": "integer", "minimum": 1,
                                                            "maximum": 4}},
              "required": ["selected"]}
    answer = complete(ModelConfig.parse(f"local/{fake_llama.weights}"),
                      [{"role": "user", "content": "Which option?"}],
                      response_format={"type": "json_schema",
                                       "json_schema": {"name": "pick", "schema": schema}})
    assert answer.text == '{"selected": 4}'
    [request] = fake_llama.requests()
    assert request["body"]["response_format"] == llama_cpp_response_format(schema)
