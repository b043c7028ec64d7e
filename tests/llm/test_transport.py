"""Hostile providers: answers bounded where httpx reads them (``llm/transport.py``).

Each hostile answer comes from the fake OpenAI server on 127.0.0.1 (``tests/fakes``): a
500 MB body, the same without a length, a 1 MB gzip body that expands to 1 GiB, a chunked
body that never ends, and 200 answers litellm cannot read. The calls run in a child
process under a 3 GiB address-space cap, so that a client without bounds fails the test
instead of taking the machine's memory: each call must end within 30 s, with one reason,
and the process must stay under 600 MB. Before: 101 s and 3.85 GB for the 500 MB body
(asked twice), 106 s and 4.45 GB for the bomb (recorded as "returned an empty summary"),
300 MB in 10 s of the endless stream; a 200 of the wrong types was retried six times as
an HTTP 500 (37-50 s a call).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from pytest_summarybench.llm import ModelCallError, acomplete, complete
from pytest_summarybench.llm.transport import (
    BYTES_PER_CHAR,
    ENVELOPE_BYTES,
    AnswerRefused,
    body_limit,
    call_client,
)
from pytest_summarybench.schemas import ModelConfig
from tests.fakes.hostile import calls_in_child, ends_within
from tests.fakes.openai_server import FakeOpenAIServer

SECONDS = 30.0
PEAK_MB = 600.0


def _calls_in_a_child(mode: str, max_tokens: int, kinds: list[str],
                      call_timeout_s: float = 10.0) -> dict[str, Any]:
    found = calls_in_child(mode, max_tokens, kinds, SECONDS * len(kinds) + 600,
                           call_timeout_s)
    if found is None:
        pytest.fail(f"the calls to hostile providers ({', '.join(kinds)}) did not end")
    assert found["peak_mb"] < PEAK_MB, found
    return found


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_oversized_answers_are_refused_within_the_bounds(mode: str) -> None:
    found = _calls_in_a_child(mode, 500, ["huge", "unsized", "endless"])
    limit = body_limit(b'{"max_tokens": 500}')
    for kind in ("huge", "unsized", "endless"):
        call = found[kind]
        assert call["seconds"] < SECONDS, (kind, call)
        assert call["requests"] == 2, (kind, call)  # a rejected answer is asked once more
        assert call["reason"].startswith("rejected answer: the answer is "), call
        assert f"more than the {limit:,} bytes allowed" in call["reason"]
        assert call["sent"] < 64 << 20, (kind, call)  # the rest was never sent
    assert "524,288,000 bytes (its Content-Length)" in found["huge"]["reason"]
    assert "still coming" in found["endless"]["reason"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_gzip_bomb_is_decoded_only_up_to_the_limit(mode: str) -> None:
    # max_tokens 100,000 allows a body of about 38 MB: the 1 MB of gzip passes the
    # Content-Length check and is cut while it is decoded.
    found = _calls_in_a_child(mode, 100_000, ["gzip_bomb"])
    call = found["gzip_bomb"]
    assert call["seconds"] < SECONDS and call["requests"] == 2, call
    limit = body_limit(b'{"max_tokens": 100000}')
    assert call["reason"].startswith(
        f"rejected answer: the answer is over {limit:,} bytes once decoded from "), call


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_slow_answer_ends_at_the_timeout_and_is_asked_once_more(mode: str) -> None:
    """A body dripped a byte at a time, or a Content-Length longer than what is sent and
    then silence: each attempt ends ``timeoutS`` after its request on the wall clock, and
    the call gives up after the second (before: six attempts of 60 s, 407 s a call)."""
    found = _calls_in_a_child(mode, 500, ["drip", "stall"], call_timeout_s=2.0)
    for kind in ("drip", "stall"):
        call = found[kind]
        assert call["requests"] == 2, (kind, call)
        assert call["reason"].startswith("slow answer: the answer was still arriving 2 s "
                                         "after the request (timeoutS), "), (kind, call)
        assert "(gave up after 2 attempts in " in call["reason"], (kind, call)
        assert call["seconds"] < SECONDS, (kind, call)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_headers_dripped_a_byte_at_a_time_end_at_the_timeout(mode: str,
                                                            fake_server: Any) -> None:
    """The status line, then a header a byte every 0.2 s that never ends: each socket read
    gets a byte well within the timeout, so before the sync client's sockets were bounded
    on the wall clock a sync call (``summarybench doctor``, the compliance classifier)
    never ended. Now each attempt ends ``timeoutS`` after its request: a slow answer,
    asked once more. The async path's backstop ends the attempt ``timeoutS`` + 2 s after
    it started, a timeout (its client reads through aiohttp). Run in a daemon thread given
    60 s, so that a hang fails the test."""
    from pytest_summarybench.llm.providers import litellm

    litellm()  # imported before the clock starts
    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "drip_headers")
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url,
                        timeout_s=2, max_tokens=100)
    messages = [{"role": "user", "content": "x"}]

    def call() -> ModelCallError:
        try:
            if mode == "sync":
                complete(model, messages)
            else:
                asyncio.run(acomplete(model, messages))
        except ModelCallError as exc:
            return exc
        raise AssertionError("the dripping server answered")

    reason = ends_within(60.0, call).reason
    if mode == "sync":
        assert reason.startswith("slow answer: the answer was still arriving 2 s after the "
                                 "request (timeoutS), "), reason
        assert "bytes of it so far (gave up after 2 attempts in " in reason, reason
        assert server.chat_requests == 2
    else:
        assert reason.startswith("timed out after 2s (gave up after 3 attempts in "), reason
        assert server.chat_requests == 3


def test_the_sync_clients_sockets_are_bounded() -> None:
    """The deadline backend sits in the pool of the sync client every provider reads
    through: httpx takes none, so it is set on the pool httpx made, which an upgrade of
    httpx or litellm could move."""
    from pytest_summarybench.llm.providers import litellm
    from pytest_summarybench.llm.transport import _get, _socket_classes, bound_sockets

    litellm()
    client = _get().sync
    assert bound_sockets(client) >= 1
    assert isinstance(client._transport._pool._network_backend, _socket_classes()[0])
    handler = call_client("anthropic", asynchronous=False)["client"]
    assert handler.client is client


def test_a_200_of_the_wrong_types_is_not_a_server_error(fake_server: Any) -> None:
    from pytest_summarybench.llm.providers import litellm

    litellm()  # imported before the clock starts
    for kind, says in (("wrong_types", "'choices' that is not a list"),
                       ("malformed", "Unterminated string"), ("empty", "not a list"),
                       ("deep_json", "maximum recursion depth exceeded")):
        server: FakeOpenAIServer = fake_server(faults=lambda n, body, kind=kind: kind)
        model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url,
                            timeout_s=10, max_tokens=100)
        started = time.monotonic()
        with pytest.raises(ModelCallError) as caught:
            complete(model, [{"role": "user", "content": kind}])
        assert caught.value.reason.startswith("malformed response: "), caught.value.reason
        assert says in caught.value.reason
        assert "(gave up after 2 attempts in " in caught.value.reason
        assert server.chat_requests == 2
        assert time.monotonic() - started < SECONDS


#: 200 answers whose JSON is not a chat completion, as hostile passes sent them: before,
#: the first four and the last went six attempts as "HTTP 500" (19-28 s a call), the
#: others printed litellm's traceback inside the reason.
WRONG_SHAPES = {
    "a list": ("[1, 2, 3]", "Received: [1, 2, 3]"),
    "a string": ('"str"', "Received: 'str'"),
    "null": ("null", "Received: None"),
    "message null": ('{"choices": [{"message": null}]}', "not a chat completion"),
    "content a number": ('{"choices": [{"message": {"content": 123}}]}',
                         "content: Input should be a valid string (got int)"),
    "content a list": ('{"choices": [{"message": {"content": ["a"]}}]}',
                       "content: Input should be a valid string (got list)"),
    "content an object, usage a string": (
        '{"choices": [{"message": {"content": {"a": 1}}}], "usage": "x"}',
        "content: Input should be a valid string (got dict)"),
    # before: "HTTP 500: Exceeds the limit (4300 digits) for integer string conversion ...
    # use sys.set_int_max_str_digits() ..." after six attempts (20-28 s)
    "a 50,000-digit token count": (
        '{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": '
        '[{"index": 0, "message": {"role": "assistant", "content": "Sums."}, '
        '"finish_reason": "stop"}], "usage": {"prompt_tokens": 1' + "0" * 50_000
        + ', "completion_tokens": 2, "total_tokens": 3}}',
        "the answer (HTTP 200) is not JSON we read: a number in it has 50,001 digits, "
        "more than the 4,300 allowed"),
}


@pytest.mark.parametrize("shape", list(WRONG_SHAPES))
@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic's, on serialising them
def test_a_200_that_is_no_chat_completion_is_asked_once_more_and_named(
        fake_server: Any, shape: str) -> None:
    """Whatever shape the JSON has, a 200 that is not a chat completion is a malformed
    response: asked once more (a proxy's passing hiccup gets its second chance, a
    provider that sends it twice will keep sending it), then one line naming the model
    and what was wrong, without the traceback litellm pastes into its message."""
    import asyncio

    from tests.fakes.openai_server import Reply

    body, says = WRONG_SHAPES[shape]
    server: FakeOpenAIServer = fake_server(
        respond=lambda request: Reply("", raw=body.encode()))
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url,
                        timeout_s=10, max_tokens=100)
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(acomplete(model, [{"role": "user", "content": shape}]))
    reason = caught.value.reason
    assert server.chat_requests == 2, reason
    assert str(caught.value).startswith("local/m: malformed response: "), reason
    assert says in reason and "(gave up after 2 attempts in " in reason
    assert "Traceback" not in reason and 'File "' not in reason, reason


def test_a_server_error_is_still_retried(fake_server: Any) -> None:
    """Only answers litellm could not read are asked once more: a real 500 (the HTTP
    client's error in the chain) is retried as before, and then answered."""
    from pytest_summarybench.llm.retry import RetryPolicy

    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "500" if n < 4 else None)
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url,
                        timeout_s=10, max_tokens=100)
    completion = complete(model, [{"role": "user", "content": "x"}],
                          retry_policy=RetryPolicy(base_delay_s=0.05))
    assert completion.attempts == 4 and completion.text.startswith("Summary ")


def test_the_handler_providers_read_through_the_same_bounds(fake_server: Any) -> None:
    """anthropic, gemini, ollama_chat and openrouter read through litellm's HTTPHandler,
    which a call takes as ``client``: the bounded one."""
    import httpx

    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "huge")
    handler = call_client("anthropic", asynchronous=False)["client"]
    assert call_client("openai", asynchronous=False) == {}
    with pytest.raises(AnswerRefused, match=r"524,288,000 bytes \(its Content-Length\)"):
        handler.client.post(f"{server.base_url}/chat/completions",
                            json={"model": "m", "messages": [], "max_tokens": 10},
                            timeout=httpx.Timeout(10.0))


def test_the_limit_follows_max_tokens() -> None:
    from pytest_summarybench.llm.answers import DEFAULT_MAX_CHARS, max_answer_chars

    assert body_limit(b'{"messages": [], "max_tokens": 500}') == \
        ENVELOPE_BYTES + BYTES_PER_CHAR * max_answer_chars(500)
    assert body_limit(b'{"generationConfig": {"maxOutputTokens":  64}}') == \
        ENVELOPE_BYTES + BYTES_PER_CHAR * max_answer_chars(64)
    assert body_limit(b'{"messages": []}') == \
        ENVELOPE_BYTES + BYTES_PER_CHAR * DEFAULT_MAX_CHARS
    assert body_limit(None) == body_limit(b"")
