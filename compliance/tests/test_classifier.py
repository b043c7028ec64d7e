"""The LLM classifier through the real model layer against a local fake Ollama server,
and the availability probe that decides whether the LLM tests run."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from fake_ollama import FakeOllama

from pytest_summarybench.llm import Completion, ModelCallError, RetryPolicy
from summarybench_compliance.classifier import (
    CALL_TIMEOUT_S,
    DEFAULT_MODEL,
    LLMClassifier,
    build_messages,
    parse_model,
    unavailable_reason,
)
from summarybench_compliance.parsing import Prediction


def test_prompt_has_the_seeds_shape() -> None:
    [message] = build_messages("x = 1")
    assert message["role"] == "user"
    assert "```python\nx = 1\n```" in message["content"]
    assert "ARTICLE: X" in message["content"]
    assert "SEVERITY: CRITICAL/HIGH/MEDIUM/LOW" in message["content"]


def test_classifies_through_litellm_and_http() -> None:
    def respond(body: dict[str, Any]) -> str:
        code = body["messages"][-1]["content"]
        return "**ARTICLE:** 15\n**SEVERITY:** Critical" if "eval(" in code \
            else "ARTICLE: NONE\nSEVERITY: NONE"

    with FakeOllama(respond=respond) as server:
        model = parse_model(DEFAULT_MODEL, server.url)
        classifier = LLMClassifier(model)
        risky = classifier.classify("answer = eval(reply)")
        clean = classifier.classify("x = 1")
        assert server.chat_requests[0]["model"] == "air-compliance-v2"
        assert server.chat_requests[0]["stream"] is False
    assert risky.prediction == Prediction(article=15, severity="CRITICAL")
    assert clean.prediction == Prediction(article=None, severity=None)
    assert risky.input_tokens == 120 and risky.latency_ms > 0


def test_unparseable_answer_is_a_wrong_classification_not_an_error() -> None:
    with FakeOllama(respond=lambda body: "I am not sure.") as server:
        answer = LLMClassifier(parse_model(DEFAULT_MODEL, server.url)).classify("x = 1")
    assert answer.prediction is None
    assert answer.parse_error is not None and "I am not sure." in answer.parse_error


def test_injected_model_layer_gets_the_timeout() -> None:
    seen: dict[str, Any] = {}

    def complete(model: Any, messages: list[dict[str, str]], **kwargs: Any) -> Completion:
        seen.update(kwargs)
        return Completion(text="ARTICLE: 12\nSEVERITY: LOW", input_tokens=1, output_tokens=1,
                          latency_ms=2.0, cost=None)

    answer = LLMClassifier(parse_model("openai/gpt-4o-mini"), complete=complete).classify("x")
    assert seen["timeout"] == CALL_TIMEOUT_S == 30.0
    assert seen["temperature"] == 0.0
    assert answer.prediction == Prediction(article=12, severity="LOW")


def test_call_failure_raises_model_call_error() -> None:
    model = parse_model(DEFAULT_MODEL, "http://127.0.0.1:9")
    classifier = LLMClassifier(model, timeout_s=2.0,
                               retry_policy=RetryPolicy(max_attempts=1))
    with pytest.raises(ModelCallError):
        classifier.classify("x = 1")


def test_probe_reports_one_clear_reason() -> None:
    with FakeOllama() as server:
        assert unavailable_reason(parse_model(DEFAULT_MODEL, server.url)) is None
        missing = unavailable_reason(parse_model("ollama/llama3", server.url))
    assert missing is not None and "no model 'llama3'" in missing
    assert "ollama pull llama3" in missing
    down = unavailable_reason(parse_model(DEFAULT_MODEL, "http://127.0.0.1:9"))
    assert down is not None and down.startswith("Ollama not reachable at http://127.0.0.1:9")
    assert "--compliance-no-llm" in down and "--no-ollama" in down
    keyless = unavailable_reason(parse_model("openai/gpt-4o"))
    assert keyless == "openai/gpt-4o: OPENAI_API_KEY is not set"


@pytest.mark.parametrize("spec", ["gpt-4o", "builtin/docstring", "nosuch/model"])
def test_bad_model_specs_are_rejected(spec: str) -> None:
    with pytest.raises(ValueError, match=repr(spec)):
        parse_model(spec)


def test_ollama_is_asked_for_the_answer_schema_and_its_json_is_read() -> None:
    from summarybench_compliance.classifier import ANSWER_SCHEMA

    def respond(body: dict[str, Any]) -> str:
        return '{"finding": "model output reaches eval", "article": "15", ' \
               '"severity": "CRITICAL"}'

    with FakeOllama(respond=respond) as server:
        answer = LLMClassifier(parse_model(DEFAULT_MODEL, server.url)).classify("eval(x)")
        [body] = server.chat_requests
    assert body["format"] == ANSWER_SCHEMA  # litellm passes the schema on as Ollama's format
    assert '"article": "X"' in body["messages"][-1]["content"]
    assert answer.response_format == "json_schema"
    assert answer.prediction == Prediction(article=15, severity="CRITICAL")


def test_a_server_refusing_the_schema_is_asked_again_with_the_text_prompt() -> None:
    with FakeOllama(respond=lambda body: "ARTICLE: 12\nSEVERITY: LOW",
                    refuse_schema=True) as server:
        model = parse_model(DEFAULT_MODEL, server.url)
        classifier = LLMClassifier(model, retry_policy=RetryPolicy(max_attempts=1))
        answer = classifier.classify("x = 1")
        first, second = server.chat_requests
    assert isinstance(first["format"], dict) and "format" not in second
    assert "ARTICLE: X" in second["messages"][-1]["content"]
    assert answer.response_format == "none"
    assert answer.prediction == Prediction(article=12, severity="LOW")


def test_structured_output_only_where_the_provider_takes_a_schema() -> None:
    from summarybench_compliance.classifier import structured_format

    hosted = structured_format(parse_model("openai/gpt-4o-mini"))
    assert hosted is not None and hosted["type"] == "json_schema"
    assert hosted["json_schema"]["schema"]["properties"]["article"]["enum"] == [
        "9", "10", "11", "12", "14", "15", "NONE"]
    # an OpenAI-compatible server of unknown abilities: JSON mode only, so the text prompt
    assert structured_format(parse_model("local/my-model", "http://127.0.0.1:1/v1")) is None
    assert LLMClassifier(parse_model(DEFAULT_MODEL), structured=False).response_format is None


def test_a_server_dripping_its_headers_ends_at_the_timeout() -> None:
    """A server that sends its status line and then its headers a byte every 0.2 s: each
    read is well within the socket timeout, so before the model layer bounded its sync
    sockets on the wall clock the classifier's call never ended. With ``timeout_s=2`` each
    attempt ends 2 s after its request, the call gives up after its second with one line
    naming the model and the reason; the call runs in a daemon thread given 60 s (generous
    on purpose, for a loaded machine), so that a hang fails the test instead of holding it."""
    outcome: dict[str, Any] = {}

    def classify() -> None:
        try:
            outcome["answer"] = LLMClassifier(model, timeout_s=2.0).classify("x = 1")
        except ModelCallError as exc:
            outcome["error"] = exc

    with FakeOllama(drip_headers=True) as server:
        model = parse_model(DEFAULT_MODEL, server.url)
        started = time.monotonic()
        worker = threading.Thread(target=classify, daemon=True)
        worker.start()
        worker.join(60.0)
        assert not worker.is_alive(), "the classifier's call did not end within 60 s"
        seconds = time.monotonic() - started
        requests = len(server.chat_requests)
    error = outcome["error"]
    assert str(error).startswith(f"{model.id}: slow answer: the answer was still arriving "
                                 "2 s after the request (timeoutS), "), error
    assert "bytes of it so far (gave up after 2 attempts in " in str(error), error
    assert requests == 2 and seconds < 60.0
