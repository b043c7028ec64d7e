"""A real, local, OpenAI-compatible chat-completions server for tests.

It listens on 127.0.0.1 with an ephemeral port, in a background thread, and speaks plain
HTTP/1.1 and JSON, so a client under test goes through its whole path: connection pool,
request encoding, status handling, Retry-After, JSON decoding, retries. Behaviour is
scripted:

- ``respond(body) -> str | Reply``: the completion for a request (default: a
  deterministic summary derived from the last message), or an error status with a
  message, or raw bytes (see ``Reply``);
- ``latency_s``: delay before every answer (``peak`` counts, per model, the most
  requests in their latency at once);
- ``rate_limit_per_s``: answer 429 with ``Retry-After`` / ``retry-after-ms`` to requests
  above this many accepted requests in any one-second window (``retry_after_ms=False``:
  whole seconds in ``Retry-After`` only, as some providers answer);
- ``faults(n, body) -> kind | None``: inject ``"400"``, ``"401"``, ``"403"``, ``"404"``
  (an unknown model, as OpenAI words it), ``"429"``, ``"500"``, ``"503"``,
  ``"timeout"`` (hold the request until the client gives up), ``"reset"`` (close the
  connection with a TCP reset instead of answering), ``"malformed"`` (a 200 with
  a truncated JSON body) or ``"empty"`` (a 200 whose JSON lacks ``choices``) for the
  n-th chat request (1-based); ``faults_from`` builds one from a list or a mapping.
  Hostile providers: ``"huge"`` (a 500 MB body, its Content-Length says so),
  ``"unsized"`` (the same without a length, until the connection closes),
  ``"gzip_bomb"`` (1 MB of gzip that expands to 1 GiB), ``"endless"`` (a chunked body
  that never ends), ``"drip"`` (a chunked body of one byte every 0.2 s),
  ``"drip_headers"`` (the status line, then a header one byte every 0.2 s, never ending
  the headers: each read gets a byte well within any socket timeout), ``"stall"`` (a
  Content-Length 100,000 bytes longer than the answer it sends, then silence) and
  ``"wrong_types"`` (a 200 whose JSON has the wrong types: ``choices`` an object,
  ``content`` a list, ``usage`` a string), ``"deep_json"`` (a 200 whose ``choices`` nest
  100,000 lists deep: 200 KB), ``"redirect"`` (a 307 to ``redirect_to``, by default to
  the same path: a redirect loop). The server counts the body bytes it managed to
  send (``bytes_sent``).

It counts everything (requests per path, status codes, successful completions per
request fingerprint) and never counts as successful an answer whose client had already
hung up. ``pause()`` holds answers back, e.g. while a test kills its client. The server
stops on ``stop()``, on leaving its ``with`` block, or by itself after ``max_lifetime_s``.
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import json
import math
import select
import socket
import struct
import threading
import time
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("400", "401", "403", "404", "429", "500", "503", "timeout", "reset",
               "malformed", "empty", "huge", "unsized", "gzip_bomb", "endless", "drip",
               "stall", "wrong_types", "deep_json", "redirect", "drip_headers")
#: Hostile answers (``faults``): their sizes.
HUGE_BYTES = 500 << 20
BOMB_BYTES = 1 << 30
_CLIENT_ERRORS = {
    "400": ("invalid request", "invalid_request_error"),
    "401": ("invalid api key", "invalid_request_error"),
    "403": ("this project does not have access to the model", "permission_error"),
    "404": ("The model does not exist or you do not have access to it.",
            "invalid_request_error"),
}


@dataclass(frozen=True)
class Reply:
    """A scripted completion."""

    text: str
    prompt_tokens: int | None = None
    """Reported input tokens (default: about a quarter of the prompt's characters)."""
    completion_tokens: int | None = None
    """Reported output tokens (default: about a quarter of ``text``'s characters)."""
    model: str | None = None
    """The model version to report (default: the requested model plus ``-fake-1``)."""
    status: int = 200
    """The HTTP status; any other than 200 answers an OpenAI-style error whose message is
    ``text`` (a provider echoing what it was sent, say)."""
    raw: bytes | None = None
    """The exact body to send with ``status`` instead (invalid UTF-8, hostile JSON)."""


Responder = Callable[[dict[str, Any]], "str | Reply"]
FaultScript = Callable[[int, dict[str, Any]], "str | None"]


def fingerprint(body: Mapping[str, Any]) -> str:
    """A stable id for a request: its model and messages (what a cache keys on)."""
    key = json.dumps([body.get("model"), body.get("messages")], sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def default_respond(body: dict[str, Any]) -> Reply:
    """A deterministic summary of the last message."""
    messages = body.get("messages") or [{}]
    content = str(messages[-1].get("content", ""))
    return Reply(f"Summary {fingerprint(body)}: computes what {len(content)} characters say.")


def faults_from(script: Iterable[str | None] | Mapping[int, str]) -> FaultScript:
    """A fault script from a list (the n-th entry for the n-th request, then none) or a
    mapping of request number to fault kind."""
    table = dict(script) if isinstance(script, Mapping) else dict(enumerate(script, 1))
    for kind in table.values():
        if kind is not None and kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; use one of {FAULT_KINDS}")
    return lambda n, _body: table.get(n)


class FakeOpenAIServer:
    """See the module docstring. Use as a context manager or call ``start``/``stop``."""

    def __init__(self, *, respond: Responder | None = None, latency_s: float = 0.0,
                 rate_limit_per_s: float | None = None, faults: FaultScript | None = None,
                 fault_retry_after_s: float = 1.0, fault_retry_after: str | None = None,
                 max_lifetime_s: float = 3600.0, redirect_to: str | None = None,
                 retry_after_ms: bool = True, limit_per_model: bool = False,
                 port: int = 0) -> None:
        self.respond: Responder = respond or default_respond
        self.latency_s = latency_s
        self.rate_limit_per_s = rate_limit_per_s
        self.limit_per_model = limit_per_model
        """One ``rate_limit_per_s`` window per requested model (providers limit models
        separately) instead of one for the whole server."""
        self.faults = faults
        self.fault_retry_after_s = fault_retry_after_s
        """The Retry-After of an injected ``"429"``."""
        self.fault_retry_after = fault_retry_after
        self.redirect_to = redirect_to
        """Where an injected ``"redirect"`` sends the client (None: the same path)."""
        """The exact ``Retry-After`` of an injected ``"429"`` instead (a provider's own:
        ``"999999999"``, an HTTP date in 9999, ``"nan"``), without ``retry-after-ms``."""
        self.retry_after_ms = retry_after_ms
        """Send ``retry-after-ms`` with a 429, besides ``Retry-After`` in whole seconds."""
        self.max_lifetime_s = max_lifetime_s
        """A safety net for a server a test forgets to stop (its threads are daemons: they end
        with the test process anyway), never a bound a test can reach: with 300 s, a test
        on a loaded machine (load average 25) whose first call imported litellm, which took
        minutes there, found its server gone and the call refused."""
        self.requested_port = port
        """The port to listen on (0: an ephemeral one, what tests use)."""
        self.lock = threading.Lock()
        self.requests_by_path: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        self.faults_served: Counter[str] = Counter()
        self.successes_by_fingerprint: Counter[str] = Counter()
        self.authorizations: set[str] = set()
        self.abandoned = 0
        """Answers not sent because the client had hung up."""
        self.bytes_sent = 0
        """Body bytes of hostile answers the client took before it stopped reading."""
        self.active: Counter[str] = Counter()
        """Requests being answered now (in their latency), per requested model."""
        self.peak: Counter[str] = Counter()
        """The most requests answered at once, per requested model."""
        self._chat_requests = 0
        self._windows: dict[str, deque[float]] = {}
        self._open = threading.Event()
        self._open.set()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(_Handler):
            fake = server

        httpd = _Server(("127.0.0.1", self.requested_port), Handler)
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai-server", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.max_lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._open.set()
        if self._timer is not None:
            self._timer.cancel()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``.../v1``) to give a client as ``api_base``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- controls and counters -----------------------------------------------------------
    def pause(self) -> None:
        """Hold every answer (requests are still accepted) until ``resume``."""
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    @property
    def successes(self) -> int:
        """Completions delivered to a client that was still connected."""
        with self.lock:
            return sum(self.successes_by_fingerprint.values())

    @property
    def chat_requests(self) -> int:
        with self.lock:
            return self._chat_requests

    # -- request handling (called from handler threads) ----------------------------------
    def _admit(self, model: str = "") -> tuple[int, float]:
        """Count a chat request; return its number and, when over the rate, the seconds
        until the window has room (0 when admitted). With ``limit_per_model`` each
        requested model has a window of its own, as a provider's per-model limits."""
        with self.lock:
            self._chat_requests += 1
            n = self._chat_requests
            if self.rate_limit_per_s is None:
                return n, 0.0
            window = self._windows.setdefault(model if self.limit_per_model else "", deque())
            now = time.monotonic()
            while window and now - window[0] >= 1.0:
                window.popleft()
            if len(window) >= self.rate_limit_per_s:
                return n, max(0.001, 1.0 - (now - window[0]))
            window.append(now)
            return n, 0.0

    def _wait(self, seconds: float) -> None:
        """Sleep, but wake up when the server stops."""
        if seconds > 0:
            self._stopping.wait(seconds)
        while not self._open.is_set() and not self._stopping.is_set():
            self._open.wait(0.05)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many concurrent clients connect at once


def _client_gone(sock: socket.socket) -> bool:
    """True when the peer has closed its end (a request is never pipelined here, so a
    readable socket before the answer means EOF or a reset)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Silence the default per-request stderr log."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._count()
        self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        fake = self.fake
        self._count()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        auth = self.headers.get("Authorization")
        if auth:
            with fake.lock:
                fake.authorizations.add(auth)
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        n, retry_in = fake._admit(str(body.get("model", "")) if isinstance(body, dict)
                                  else "")
        fault = fake.faults(n, body) if fake.faults else None
        if retry_in > 0 or fault == "429":
            retry_in = retry_in or fake.fault_retry_after_s
            self._note_fault("429")
            headers = {"Retry-After": str(math.ceil(retry_in))}
            if fake.retry_after_ms:
                headers["retry-after-ms"] = str(int(retry_in * 1000))
            if fault == "429" and fake.fault_retry_after is not None:
                headers = {"Retry-After": fake.fault_retry_after}
            self._send_json(429, {"error": {"message": "rate limit exceeded",
                                            "type": "rate_limit_error"}}, headers)
            return
        if fault == "redirect":
            self._note_fault(fault)
            self._send_raw(307, b"", {"Location": fake.redirect_to or self.path})
            return
        if fault in _CLIENT_ERRORS:
            self._note_fault(fault)
            message, kind = _CLIENT_ERRORS[fault]
            self._send_json(int(fault), {"error": {"message": message, "type": kind}})
            return
        if fault == "reset":
            self._note_fault(fault)
            # SO_LINGER with a zero timeout: close() sends RST instead of FIN. The
            # handler's file objects hold the socket open until they are closed too.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
            for stream in (self.rfile, self.wfile):
                stream.close()
            self.connection.close()
            # What the base class still flushes and closes after this method.
            self.rfile, self.wfile = io.BytesIO(), io.BytesIO()
            return
        if fault == "timeout":
            self._note_fault("timeout")
            fake._stopping.wait(fake.max_lifetime_s)
            self.close_connection = True
            return
        model = str(body.get("model", ""))
        with fake.lock:
            fake.active[model] += 1
            fake.peak[model] = max(fake.peak[model], fake.active[model])
        try:
            fake._wait(fake.latency_s)
        finally:
            with fake.lock:
                fake.active[model] -= 1
        if fault in ("500", "503"):
            self._note_fault(fault)
            self._send_json(int(fault), {"error": {"message": "upstream failure",
                                                   "type": "server_error"}})
            return
        if fault == "malformed":
            self._note_fault(fault)
            self._send_raw(200, b'{"id": "chatcmpl-x", "choices": [{"message": {"con')
            return
        if fault == "empty":
            self._note_fault(fault)
            self._send_json(200, {"id": "chatcmpl-x", "object": "chat.completion"})
            return
        if fault == "wrong_types":
            self._note_fault(fault)
            self._send_json(200, {"id": "chatcmpl-x", "object": "chat.completion",
                                  "choices": {"0": {"message": {"content": ["not", "text"]}}},
                                  "usage": "many tokens"})
            return
        if fault == "deep_json":
            self._note_fault(fault)
            self._send_raw(200, b'{"id": "chatcmpl-x", "choices": ' + b"[" * 100_000
                           + b"]" * 100_000 + b"}")
            return
        if fault in _HOSTILE:
            self._note_fault(fault)
            _HOSTILE[fault](self)
            return
        try:
            reply = fake.respond(body)
        except Exception as exc:  # a broken script shows up as a 500 naming the error
            self._send_json(500, {"error": {"message": f"fake responder failed: {exc!r}",
                                            "type": "server_error"}})
            return
        if isinstance(reply, str):
            reply = Reply(reply)
        if reply.raw is not None:
            self._send_raw(reply.status, reply.raw)
            return
        if reply.status != 200:
            self._send_json(reply.status, {"error": {"message": reply.text,
                                                     "type": "invalid_request_error"}})
            return
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else max(
            1, prompt_chars // 4)
        completion_tokens = reply.completion_tokens if reply.completion_tokens is not None \
            else max(1, len(reply.text) // 4)
        payload = {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": reply.model or f"{body.get('model', 'fake')}-fake-1",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply.text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
        if _client_gone(self.connection):
            with fake.lock:
                fake.abandoned += 1
            self.close_connection = True
            return
        # Count before sending: the client may check the counters the moment it has the
        # answer, before this thread runs again. A failed send takes it back.
        key = fingerprint(body)
        with fake.lock:
            fake.successes_by_fingerprint[key] += 1
        if not self._send_json(200, payload):
            with fake.lock:
                fake.successes_by_fingerprint[key] -= 1
                fake.abandoned += 1

    # -- helpers ---------------------------------------------------------------------------
    def _count(self) -> None:
        with self.fake.lock:
            self.fake.requests_by_path[self.path] += 1

    def _note_fault(self, kind: str) -> None:
        with self.fake.lock:
            self.fake.faults_served[kind] += 1

    def _send_json(self, status: int, payload: dict[str, Any],
                   headers: Mapping[str, str] | None = None) -> bool:
        return self._send_raw(status, json.dumps(payload).encode(), headers)

    def _send_raw(self, status: int, data: bytes,
                  headers: Mapping[str, str] | None = None) -> bool:
        with self.fake.lock:
            self.fake.statuses[status] += 1
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True
            with self.fake.lock:
                self.fake.statuses[status] -= 1
            return False
        return True


# -- hostile answers -------------------------------------------------------------------------
_ZEROS = b"0" * (1 << 16)


@functools.cache
def gzip_bomb() -> bytes:
    """1 MB of gzip that expands to ``BOMB_BYTES`` zero bytes: blocks compressed after a
    full flush do not refer back, so one 16 MiB block, compressed once, is repeated."""
    chunk = b"\0" * (1 << 24)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(BOMB_BYTES // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
            + block * (BOMB_BYTES // len(chunk)) + end
            + struct.pack("<II", crc, BOMB_BYTES & 0xFFFFFFFF))


def _stream(handler: _Handler, headers: dict[str, str], chunks: Iterable[bytes],
            chunked: bool = False) -> None:
    """Send a 200 with ``headers`` and the body ``chunks`` until they end or the client
    stops reading; count what was sent."""
    fake = handler.fake
    handler.close_connection = True
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        for key, value in headers.items():
            handler.send_header(key, value)
        if chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for chunk in chunks:
            if fake._stopping.is_set():
                return
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            handler.wfile.flush()
            with fake.lock:
                fake.bytes_sent += len(chunk)
        if chunked:
            handler.wfile.write(b"0\r\n\r\n")
    except OSError:
        pass  # the client hung up: what a bounded client does


def _huge(handler: _Handler) -> None:
    _stream(handler, {"Content-Length": str(HUGE_BYTES)},
            (_ZEROS for _ in range(HUGE_BYTES // len(_ZEROS))))


def _unsized(handler: _Handler) -> None:
    _stream(handler, {"Connection": "close"}, (_ZEROS for _ in range(HUGE_BYTES // len(_ZEROS))))


def _bomb(handler: _Handler) -> None:
    body = gzip_bomb()
    _stream(handler, {"Content-Encoding": "gzip", "Content-Length": str(len(body))},
            (body[i:i + (1 << 16)] for i in range(0, len(body), 1 << 16)))


def _endless(handler: _Handler) -> None:
    _stream(handler, {}, iter(lambda: b'{"choices": [' * 4096, None), chunked=True)


def _drip(handler: _Handler) -> None:
    def drops() -> Iterator[bytes]:
        while not handler.fake._stopping.wait(0.2):
            yield b" "

    _stream(handler, {}, drops(), chunked=True)


def _stall(handler: _Handler) -> None:
    body = json.dumps({"id": "stall", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop", "message": {
                           "role": "assistant", "content": "Summary of nothing."}}]}).encode()

    def silence() -> Iterator[bytes]:
        handler.fake._stopping.wait(3600)
        yield from ()

    _stream(handler, {"Content-Length": str(len(body) + 100_000)},
            itertools.chain([body], silence()))


def _drip_headers(handler: _Handler) -> None:
    """The status line, then one header a byte at a time, never ending the headers: the
    client's socket timeout never fires, only a wall-clock bound ends the exchange."""
    fake = handler.fake
    handler.close_connection = True
    try:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nX-Drip: ")
        handler.wfile.flush()
        while not fake._stopping.wait(0.2):
            handler.wfile.write(b"a")
            handler.wfile.flush()
            with fake.lock:
                fake.bytes_sent += 1
    except OSError:
        pass  # the client hung up: what a bounded client does


_HOSTILE: dict[str, Callable[[_Handler], None]] = {
    "huge": _huge, "unsized": _unsized, "gzip_bomb": _bomb, "endless": _endless,
    "drip": _drip, "stall": _stall, "drip_headers": _drip_headers}
