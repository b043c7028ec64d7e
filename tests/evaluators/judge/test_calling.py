"""Asking a judge over real HTTP (the local fake server): temperature 0, JSON mode, the
bounded retry on unreadable answers, the fallback when a server refuses
``response_format``, and the cache that makes a re-run free."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.evaluators.judge.calling import (
    JudgeClient,
    JudgeError,
    parse_judge_error,
    response_format,
)
from pytest_summarybench.evaluators.judge.prompts import POINTWISE_TAG, pointwise_messages
from pytest_summarybench.evaluators.judge.verdicts import POINTWISE_JSON_SCHEMA, parse_pointwise
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.evaluators.judge.scripted import pointwise_json
from tests.fakes.openai_server import FakeOpenAIServer, faults_from

MESSAGES = pointwise_messages("python", "def f(x):\n    return x + 1\n", "Adds one to x.")


def _judge(server: FakeOpenAIServer, name: str = "claude-test-judge") -> ModelConfig:
    return ModelConfig(provider="local", model_name=name, api_endpoint=server.base_url)


def _ask(client: JudgeClient, judge: ModelConfig) -> Any:
    return client.ask(judge, MESSAGES, parse_pointwise, tag=POINTWISE_TAG,
                      schema_name="pointwise_verdict", schema=POINTWISE_JSON_SCHEMA)


class Recorder:
    """A responder that answers from a script and keeps the request bodies."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        self.bodies.append(body)
        return self.answers[min(len(self.bodies), len(self.answers)) - 1]


def test_valid_answer_at_temperature_zero_in_json_mode(
        fake_server: Callable[..., FakeOpenAIServer], tmp_path: Path) -> None:
    responder = Recorder([pointwise_json(4)])
    server = fake_server(respond=responder)
    answer = _ask(JudgeClient(Store(tmp_path / "s.sqlite")), _judge(server))
    assert answer.verdict.score == 4.0 and answer.answers == 1
    body = responder.bodies[0]
    assert body["temperature"] == 0.0
    assert body["response_format"] == {"type": "json_object"}
    assert answer.response_format == "json_object"


def test_unreadable_answer_is_asked_again_once(
        fake_server: Callable[..., FakeOpenAIServer], tmp_path: Path) -> None:
    responder = Recorder(["I'd say 4/5 overall.", "```json\n" + pointwise_json(2) + "\n```"])
    server = fake_server(respond=responder)
    answer = _ask(JudgeClient(Store(tmp_path / "s.sqlite"), parse_retries=1),
                  _judge(server))
    assert answer.verdict.score == 2.0 and answer.answers == 2
    retry = responder.bodies[1]["messages"]
    assert retry[2] == {"role": "assistant", "content": "I'd say 4/5 overall."}
    assert retry[3]["role"] == "user" and "no JSON object" in retry[3]["content"]


def test_answer_that_stays_invalid_is_a_judge_error_with_raw_text(
        fake_server: Callable[..., FakeOpenAIServer], tmp_path: Path) -> None:
    server = fake_server(respond=Recorder(['{"scores": {"accuracy": 9}}']))
    judge = _judge(server)
    with pytest.raises(JudgeError) as caught:
        _ask(JudgeClient(Store(tmp_path / "s.sqlite"), parse_retries=2), judge)
    err = caught.value
    assert err.kind == "invalid_output" and err.attempts == 3
    assert err.raw == '{"scores": {"accuracy": 9}}'
    assert server.chat_requests == 3  # bounded: first answer and two retries
    assert parse_judge_error(str(err)) == (judge.id, "invalid_output")
    assert "raw output: '{\"scores\": {\"accuracy\": 9}}'" in str(err)
    assert parse_judge_error("no summary of x to judge") is None


def test_server_refusing_response_format_is_asked_without(
        fake_server: Callable[..., FakeOpenAIServer], tmp_path: Path) -> None:
    responder = Recorder([pointwise_json(5)])
    server = fake_server(respond=responder, faults=faults_from(["400"]))
    client = JudgeClient(Store(tmp_path / "s.sqlite"))
    judge = _judge(server)
    answer = _ask(client, judge)
    assert answer.response_format == "none"
    assert "response_format" not in responder.bodies[0]
    assert server.faults_served["400"] == 1


def test_failed_call_is_a_judge_error(fake_server: Callable[..., FakeOpenAIServer],
                                      tmp_path: Path) -> None:
    server = fake_server(faults=faults_from(["401"]))
    judge = _judge(server)
    with pytest.raises(JudgeError) as caught:
        _ask(JudgeClient(Store(tmp_path / "s.sqlite")), judge)
    assert caught.value.kind == "call_failed"
    assert parse_judge_error(str(caught.value)) == (judge.id, "call_failed")


def test_rerun_is_served_from_the_cache(fake_server: Callable[..., FakeOpenAIServer],
                                        tmp_path: Path) -> None:
    responder = Recorder(["not json", pointwise_json(3)])
    server = fake_server(respond=responder)
    store = Store(tmp_path / "s.sqlite")
    first = _ask(JudgeClient(store), _judge(server))
    again = _ask(JudgeClient(store), _judge(server))
    assert server.chat_requests == 2
    assert again.cached and not first.cached
    assert again.verdict == first.verdict and again.answers == 2


def test_response_format_modes() -> None:
    local = ModelConfig(provider="local", model_name="qwen", api_endpoint="http://x/v1")
    anthropic = ModelConfig.parse("anthropic/claude-3-5-sonnet-20240620")
    gpt = ModelConfig.parse("openai/gpt-4o")
    schema = {"type": "object"}
    assert response_format(local, "off", "v", schema) is None
    assert response_format(local, "auto", "v", schema) == {"type": "json_object"}
    assert response_format(anthropic, "auto", "v", schema) is None
    strict = response_format(gpt, "auto", "v", schema)
    assert strict is not None and strict["type"] == "json_schema"
    assert strict["json_schema"]["schema"] == schema
    forced = response_format(local, "json_schema", "v", POINTWISE_JSON_SCHEMA)
    assert forced is not None
    assert json.dumps(forced["json_schema"]["schema"]).count('"enum": [1, 2, 3, 4, 5]') == 5
