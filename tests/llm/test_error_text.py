"""The reason of a failed model call says what failed, where and why, in our words: no
litellm advice to its own callers ("Handle with `litellm.InternalServerError`"), no
object reprs with memory addresses (aiohttp's ``ssl:<ssl.SSLContext object at 0x...>``),
no echo of the response object (issue 21, item 3).

The calls are real (litellm over HTTP to servers on 127.0.0.1): an Anthropic-style server
that answers 500 and 503, and ``https://`` to the plain-HTTP fake OpenAI server.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pytest_summarybench.llm import ModelCallError, RetryPolicy, acomplete, complete
from pytest_summarybench.llm.retry import classify
from pytest_summarybench.schemas import ModelConfig
from tests.fakes.openai_server import FakeOpenAIServer

POLICY = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02)
MESSAGES = [{"role": "user", "content": "Summarize: def f(): pass"}]
#: What no reason may contain.
INTERNALS = ("Handle with", "litellm.", "object at 0x", "ssl:<", "SSLContext",
             "Received response", "<class ", "Error - ", "Exception - ")


class _Overloaded(BaseHTTPRequestHandler):
    """Answers every request with the status in ``server.status`` and an Anthropic-style
    error body."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"type": "error", "error": {"type": "api_error",
                                                      "message": "Overloaded"}}).encode()
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(params=[500, 503])
def overloaded(request: pytest.FixtureRequest) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Overloaded)
    server.status = request.param  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _reason(spec: str, endpoint: str, *, use_async: bool) -> str:
    model = ModelConfig.parse(spec).model_copy(update={"api_endpoint": endpoint,
                                                       "timeout_s": 10})
    with pytest.raises(ModelCallError) as info:
        if use_async:
            asyncio.run(acomplete(model, MESSAGES, retry_policy=POLICY))
        else:
            complete(model, MESSAGES, retry_policy=POLICY)
    return str(info.value)


# litellm takes two routes: a model it knows, and one it does not (which added "Handle
# with ..." to the reason).
@pytest.mark.parametrize("spec", ["anthropic/claude-3-5-haiku-20241022", "anthropic/fake-x"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_server_error_of_anthropics_route_has_no_litellm_advice(
        overloaded: str, spec: str, use_async: bool) -> None:
    reason = _reason(spec, overloaded, use_async=use_async)
    assert "Overloaded" in reason  # the provider's own words stay
    assert "gave up after 2 attempts" in reason
    for needle in INTERNALS:
        assert needle not in reason, reason


@pytest.mark.parametrize("spec", ["openai/fake-x", "anthropic/claude-3-5-haiku-20241022"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_https_to_a_plain_http_server_names_the_tls_failure(spec: str,
                                                            use_async: bool) -> None:
    with FakeOpenAIServer() as server:
        where = f"https://127.0.0.1:{server.port}/v1"
        reason = _reason(spec, where, use_async=use_async)
    assert f"TLS handshake with {where} failed" in reason
    assert "http:// versus https://" in reason
    assert "gave up" not in reason  # a configuration error is not retried
    for needle in INTERNALS:
        assert needle not in reason, reason


def test_library_wording_is_dropped_from_any_reason() -> None:
    class InternalServerError(Exception):
        status_code = 500

    texts = [
        "litellm.InternalServerError: AnthropicException - Cannot connect to host "
        "api.example.test:443 ssl:<ssl.SSLContext object at 0x7f3a2b1c0d90> [Connection "
        "reset by peer]. Handle with `litellm.InternalServerError`.",
        "litellm.InternalServerError: InternalServerError: OpenAIException - error - "
        "Unterminated string, Received response - <APIResponse [200 OK] type=<class "
        "'openai.types.chat.chat_completion.ChatCompletion'>>, Type of response - <class "
        "'openai._legacy_response.LegacyAPIResponse'>",
        "litellm.APIError: LiteLLM: provider returned 'choices' that is not a list",
    ]
    for text in texts:
        reason = classify(InternalServerError(text)).reason
        for needle in INTERNALS:
            assert needle not in reason, reason
    assert classify(InternalServerError(texts[0])).reason == (
        "HTTP 500: Cannot connect to host api.example.test:443 [Connection reset by peer]")
