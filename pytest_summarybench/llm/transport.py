"""Bounds on reading a provider's answer, where the bytes are read: httpx, under litellm.

litellm reads answers through httpx clients: the OpenAI SDK's (providers ``openai`` and
``local``), which take ``litellm.client_session`` / ``aclient_session``, and litellm's own
``HTTPHandler`` / ``AsyncHTTPHandler`` (``anthropic``, ``gemini``, ``ollama_chat``,
``openrouter``), which a call takes as ``client``. Both get clients built here: litellm's
default ones (its transports, proxies and certificates) with httpx event hooks, which see
each response before its body is read and bound it:

- the body may hold at most what ``llm/answers.py`` accepts as an answer, escaped the most
  JSON allows (12 bytes a character: a ``\\ud83d\\ude00`` pair), plus an envelope for the
  JSON around it; ``max_tokens`` is read from the request;
- a ``Content-Length`` over that is refused before a byte of the body is read;
- ``gzip`` and ``deflate`` are decoded here, in steps of at most the bytes still allowed
  (``zlib``'s ``max_length``), so a 1 MB body that expands to 1 GiB stops at the limit
  (httpx would have expanded it whole); other encodings are not asked for, and refused;
- the whole exchange ends within the request's read timeout (``timeoutS``), counted on
  the wall clock from the moment the request is sent, not per socket read: a server
  sending a byte a second, or a ``Content-Length`` longer than what it sends and then
  silence, held a call for 60 s an attempt and six attempts (407 s a call). An answer
  still arriving then is a ``SlowAnswer``, and a stream that does not end is cut at the
  limit. The sync client's sockets are bounded themselves (``DeadlineStream``): every
  read and write waits at most until the deadline of the request its thread is making,
  so a server that sends its status line and then its headers a byte at a time is cut
  too (each byte came well within the socket timeout: ``summarybench doctor`` and the
  compliance classifier never ended). The async client's body wait is cancelled at the
  deadline; its headers are bounded by the call's backstop (``llm/client.py``), which
  cancels the whole attempt.

A refused answer raises ``AnswerRefused``; litellm reports it as a connection error whose
cause it is, and ``retry.classify`` finds it there: a rejected answer (asked once more),
a ``SlowAnswer`` a slow one (asked once more too: a provider that answers at a byte a
second does not get faster on the fourth try).
"""

from __future__ import annotations

import functools
import re
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ..core.errors import RunError
from .answers import max_answer_chars

#: Bytes of JSON around an answer's text (id, model, usage, finish reason, ...).
ENVELOPE_BYTES = 64 * 1024
#: The most bytes one character of an answer takes in a JSON body.
BYTES_PER_CHAR = 12
#: Encodings asked for and decoded here (under the limit).
ACCEPT_ENCODING = "gzip, deflate"
_MAX_TOKENS = re.compile(
    rb'"(?:max_tokens|max_completion_tokens|maxOutputTokens|num_predict)"\s*:\s*(\d{1,9})')
#: litellm providers whose calls take an ``HTTPHandler`` as ``client`` (the others go
#: through the OpenAI SDK, which takes ``litellm.client_session``).
HANDLER_PROVIDERS = frozenset({"anthropic", "gemini", "ollama_chat", "openrouter"})
_CHUNK = 1 << 16
#: Where the request hook notes when a request was sent (``time.monotonic()``).
SENT_AT = "summarybench_sent_at"


class AnswerRefused(RunError):
    """A provider's answer was not read to its end: too large, an encoding we did not ask
    for, or a body that would not decode. The message says which and how large."""


class SlowAnswer(AnswerRefused):
    """The provider started answering but its body was still arriving at the deadline."""


def body_limit(request_body: bytes | None) -> int:
    """Bytes a response to ``request_body`` may have: the longest answer its
    ``max_tokens`` allows (``llm/answers.py``), escaped, plus the envelope."""
    found = _MAX_TOKENS.search(request_body or b"")
    max_tokens = int(found.group(1)) if found else None
    return ENVELOPE_BYTES + BYTES_PER_CHAR * max_answer_chars(max_tokens)


def _too_large(limit: int, got: str) -> AnswerRefused:
    return AnswerRefused(f"the answer is {got}, more than the {limit:,} bytes allowed (the "
                         "longest answer max_tokens allows, JSON-escaped, plus 64 KiB)")


class _Decoder:
    """``Content-Encoding`` undone in bounded steps: never more than ``room`` bytes out of
    one call, however well the input compresses."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._zlib: Any = None
        if encoding == "gzip":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
        self._first = True

    def feed(self, data: bytes, room: int) -> Iterator[bytes]:
        """The decoded bytes of ``data``, in pieces; stops yielding past ``room``."""
        if self._zlib is None:
            yield data
            return
        while data:
            try:
                out = self._zlib.decompress(data, max(1, room) + 1)
            except zlib.error as exc:
                if self.encoding == "deflate" and self._first:
                    # "deflate" without its zlib header, as some servers send it.
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._first = False
                    continue
                raise AnswerRefused(f"the answer's {self.encoding} body does not decode "
                                    f"({exc})") from None
            self._first = False
            data = self._zlib.unconsumed_tail
            if self._zlib.eof and self._zlib.unused_data and self.encoding == "gzip":
                data = self._zlib.unused_data + data  # another gzip member follows
                self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
            room -= len(out)
            yield out
            if room < 0:
                return


class _Deadline:
    """When one exchange must have ended: ``timeout`` seconds (the request's read timeout,
    ``timeoutS``) after its request was sent, on the wall clock."""

    def __init__(self, timeout: float | None, sent_at: float | None = None) -> None:
        self.timeout = timeout
        start = sent_at if sent_at is not None else time.monotonic()
        self.at = (start + timeout) if timeout else None
        self.received = 0
        """Bytes read from the socket for this exchange (headers and body)."""

    def remaining(self) -> float | None:
        """Seconds left (None: no deadline)."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def passed(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at

    def slow(self, got: int) -> SlowAnswer:
        return SlowAnswer(f"the answer was still arriving {self.timeout:g} s after the "
                          f"request (timeoutS), {got:,} bytes of it so far")


class _Reading:
    """The state of one body being read: limit, encoding, deadline, counts."""

    def __init__(self, limit: int, encoding: str, deadline: _Deadline) -> None:
        self.limit = limit
        self.decoder = _Decoder(encoding)
        self.deadline = deadline
        self.raw = 0
        self.decoded = 0

    def slow(self) -> SlowAnswer:
        return self.deadline.slow(self.raw)

    def take(self, chunk: bytes) -> Iterator[bytes]:
        self.raw += len(chunk)
        if self.raw > self.limit:
            raise _too_large(self.limit, f"over {self.limit:,} bytes and still coming")
        if self.deadline.passed():
            raise self.slow()
        for piece in self.decoder.feed(chunk, self.limit - self.decoded):
            self.decoded += len(piece)
            if self.decoded > self.limit:
                raise _too_large(self.limit, f"over {self.limit:,} bytes once decoded "
                                             f"from {self.raw:,} {self.decoder.encoding} bytes")
            if piece:
                yield piece


def _prepare(response: Any) -> _Reading:
    """Check a response's headers before its body is read (raises ``AnswerRefused``), and
    take its decoding over: httpx decodes a body whole, whatever it expands to."""
    request = response.request
    try:
        body = request.content
    except Exception:  # noqa: BLE001 - a streamed request: no max_tokens to read
        body = None
    limit = body_limit(body)
    length = response.headers.get("content-length")
    if length is not None and length.strip().isdigit() and int(length) > limit:
        raise _too_large(limit, f"{int(length):,} bytes (its Content-Length)")
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "", "gzip", "deflate"):
        raise AnswerRefused(f"the answer is encoded as {encoding[:40]!r}, which was not "
                            f"asked for (Accept-Encoding: {ACCEPT_ENCODING})")
    if encoding in ("gzip", "deflate"):
        # Decoded here: httpx must not decode it again, and its length is the encoded one.
        del response.headers["content-encoding"]
        response.headers.pop("content-length", None)
    return _Reading(limit, encoding or "identity", _deadline_of(request))


def _deadline_of(request: Any) -> _Deadline:
    timeout = (request.extensions.get("timeout") or {}).get("read")
    return _Deadline(timeout, request.extensions.get(SENT_AT))


#: The exchange the calling thread is making through the bounded sync client: its
#: request hook sets it, the sockets of that client (``DeadlineStream``) read it. httpx's
#: sync client runs a request's hooks and its socket operations in the calling thread.
_current = threading.local()


def _stamp(request: Any) -> None:
    """Ask for the encodings decoded here, and note when the request was sent."""
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    request.extensions[SENT_AT] = time.monotonic()


def _on_request(request: Any) -> None:
    _stamp(request)
    _current.deadline = _deadline_of(request)


async def _on_request_async(request: Any) -> None:
    _stamp(request)


def _on_response(response: Any) -> None:
    try:
        reading = _prepare(response)
    except AnswerRefused:
        response.close()
        raise
    response.stream = _stream_classes()[0](response.stream, reading)


async def _on_response_async(response: Any) -> None:
    try:
        reading = _prepare(response)
    except AnswerRefused:
        await response.aclose()
        raise
    response.stream = _stream_classes()[1](response.stream, reading)


@functools.cache
def _stream_classes() -> tuple[type, type]:
    """The bounded byte streams, sync and async (made on first use: httpx is imported
    with litellm, not with the plugin)."""
    import httpx

    class Bounded(httpx.SyncByteStream):
        """A response body read through a ``_Reading`` (its sockets end each read at the
        deadline: ``DeadlineStream``)."""

        def __init__(self, raw: Any, reading: _Reading) -> None:
            self._raw = raw
            self._reading = reading

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._raw:
                yield from self._reading.take(chunk)

        def close(self) -> None:
            self._raw.close()

    class AsyncBounded(httpx.AsyncByteStream):
        """The asyncio twin of ``Bounded``."""

        def __init__(self, raw: Any, reading: _Reading) -> None:
            self._raw = raw
            self._reading = reading

        async def __aiter__(self) -> AsyncIterator[bytes]:
            import asyncio

            chunks = self._raw.__aiter__()
            while True:
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(),
                                                   self._reading.deadline.remaining())
                except StopAsyncIteration:
                    return
                except asyncio.TimeoutError:
                    raise self._reading.slow() from None
                for piece in self._reading.take(chunk):
                    yield piece

        async def aclose(self) -> None:
            await self._raw.aclose()

    return Bounded, AsyncBounded


@functools.cache
def _socket_classes() -> tuple[type, type]:
    """The network backend and stream of the bounded sync client (made on first use)."""
    import httpcore

    class DeadlineStream(httpcore.NetworkStream):
        """A socket whose reads and writes wait at most until the deadline of the exchange
        its thread is making (``_current``). At the deadline, an answer that had started
        is a ``SlowAnswer``; one that had not is httpcore's timeout, as before (a provider
        that accepts and never answers is a timeout, ``llm/retry.py``)."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        @staticmethod
        def _expired(deadline: _Deadline, timeout: type[Exception]) -> Exception:
            if deadline.received:
                return deadline.slow(deadline.received)
            return timeout(f"no answer {deadline.timeout:g} s after the request")

        def _wait(self, timeout: float | None,
                  kind: type[Exception]) -> tuple[_Deadline | None, float | None]:
            deadline: _Deadline | None = getattr(_current, "deadline", None)
            left = deadline.remaining() if deadline is not None else None
            if deadline is None or left is None:
                return None, timeout
            if left <= 0:
                raise self._expired(deadline, kind)
            return deadline, left if timeout is None else min(timeout, left)

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            deadline, wait = self._wait(timeout, httpcore.ReadTimeout)
            try:
                data: bytes = self._inner.read(max_bytes, wait)
            except httpcore.ReadTimeout:
                if deadline is not None and deadline.passed():
                    raise self._expired(deadline, httpcore.ReadTimeout) from None
                raise
            if deadline is not None:
                deadline.received += len(data)
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            deadline, wait = self._wait(timeout, httpcore.WriteTimeout)
            try:
                self._inner.write(buffer, wait)
            except httpcore.WriteTimeout:
                if deadline is not None and deadline.passed():
                    raise self._expired(deadline, httpcore.WriteTimeout) from None
                raise

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> Any:
            return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                        timeout))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class DeadlineBackend(httpcore.NetworkBackend):
        """httpcore's sync backend, whose connections are ``DeadlineStream``s."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
            return DeadlineStream(self._inner.connect_tcp(*args, **kwargs))

        def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
            return DeadlineStream(self._inner.connect_unix_socket(*args, **kwargs))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return DeadlineBackend, DeadlineStream


def bound_sockets(client: Any) -> int:
    """Give the connection pools of the sync httpx ``client`` (its transport and those
    mounted for proxies) the deadline backend; the number of pools bounded. httpx takes
    no network backend, so it is set on the pool it made (``tests/llm`` checks that the
    default client's is)."""
    backend_class = _socket_classes()[0]
    bounded = 0
    transports = [client._transport, *getattr(client, "_mounts", {}).values()]
    for transport in transports:
        pool: Any = getattr(transport, "_pool", None)
        inner = getattr(pool, "_network_backend", None)
        if inner is None:
            continue
        if not isinstance(inner, backend_class):
            pool._network_backend = backend_class(inner)
        bounded += 1
    return bounded


class _Clients:
    """The process's bounded httpx clients and litellm handlers, made once."""

    def __init__(self) -> None:
        import httpx

        try:  # litellm's own default clients (transports, proxies, certificates)
            from litellm.llms.openai.common_utils import BaseOpenAILLM

            sync = BaseOpenAILLM._get_sync_http_client()
            async_ = BaseOpenAILLM.get_async_http_client()
        except (ImportError, AttributeError):
            sync, async_ = None, None
        self.sync: Any = sync or httpx.Client(follow_redirects=True)
        self.async_: Any = async_ or httpx.AsyncClient(follow_redirects=True)
        self.sync.event_hooks = {"request": [_on_request], "response": [_on_response]}
        bound_sockets(self.sync)
        self.async_.event_hooks = {"request": [_on_request_async],
                                   "response": [_on_response_async]}
        self._handlers: dict[bool, Any] = {}

    def handler(self, asynchronous: bool) -> Any:
        """litellm's ``HTTPHandler`` (``AsyncHTTPHandler``) around the bounded client."""
        if asynchronous not in self._handlers:
            from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler, HTTPHandler

            handler: Any
            if asynchronous:
                handler = AsyncHTTPHandler()
                handler.client = self.async_
            else:
                handler = HTTPHandler(client=self.sync)
            self._handlers[asynchronous] = handler
        return self._handlers[asynchronous]


_clients: _Clients | None = None
_lock = threading.Lock()


def _get() -> _Clients:
    global _clients
    with _lock:
        if _clients is None:
            _clients = _Clients()
        return _clients


def install(litellm: Any) -> None:
    """Make the OpenAI SDK's calls under ``litellm`` use the bounded clients (once)."""
    clients = _get()
    if litellm.client_session is None:
        litellm.client_session = clients.sync
    if litellm.aclient_session is None:
        litellm.aclient_session = clients.async_


def call_client(litellm_provider: str, *, asynchronous: bool) -> dict[str, Any]:
    """``{"client": ...}`` for a call to ``litellm_provider`` (litellm's prefix) when it
    reads through litellm's ``HTTPHandler``; ``{}`` for the others (they read through
    ``litellm.client_session``, see ``install``)."""
    if litellm_provider not in HANDLER_PROVIDERS:
        return {}
    return {"client": _get().handler(asynchronous)}
