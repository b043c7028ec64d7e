"""A real, local Ollama-compatible HTTP server for the compliance tests.

It answers ``GET /api/tags`` with the models it was given and ``POST /api/chat`` (the
endpoint litellm's ``ollama_chat`` provider calls) with a scripted reply or error, so the
classifier goes through the real model layer: litellm, HTTP, JSON, timeouts. It listens
on 127.0.0.1 with an ephemeral port in a background thread and counts chat requests.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], str]


class FakeOllama:
    """``with FakeOllama(models=[...], respond=fn) as server: server.url``."""

    def __init__(self, *, models: tuple[str, ...] = ("air-compliance-v2:latest",),
                 respond: Responder | None = None, chat_status: int = 200,
                 delay_s: float = 0.0, refuse_schema: bool = False,
                 drip_headers: bool = False) -> None:
        self.models = models
        self.drip_headers = drip_headers
        """True: a chat gets its status line, then a header a byte every 0.2 s that never
        ends (each read of the client gets a byte well within its socket timeout)."""
        self._stopping = threading.Event()
        # True: a chat whose ``format`` is a JSON schema gets HTTP 400, as an Ollama older
        # than 0.5 (which knew only ``format: "json"``) answers it.
        self.refuse_schema = refuse_schema
        self.delay_s = delay_s
        """How long each chat takes (the most chats answered at once: ``peak``)."""
        self.active = 0
        self.peak = 0
        # Not 200: every chat gets that error (a server that is up and lists the model,
        # but fails to run it).
        self.chat_status = chat_status
        self.respond: Responder = respond or (lambda body: "ARTICLE: NONE\nSEVERITY: NONE")
        self.chat_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/api/tags":
                    self._send(200, {"models": [{"name": m} for m in server.models]})
                else:
                    self._send(404, {"error": f"no route {self.path}"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/api/chat":
                    self._send(404, {"error": f"no route {self.path}"})
                    return
                with server._lock:
                    server.chat_requests.append(body)
                    server.active += 1
                    server.peak = max(server.peak, server.active)
                try:
                    time.sleep(server.delay_s)
                    self._chat(body)
                finally:
                    with server._lock:
                        server.active -= 1

            def _drip(self) -> None:
                self.close_connection = True
                head = [b"HTTP/1.1 200 OK\r\nX-Drip: "]
                try:
                    for piece in itertools.chain(head, iter(lambda: b"a", None)):
                        self.wfile.write(piece)
                        self.wfile.flush()
                        if server._stopping.wait(0.2):
                            return
                except OSError:
                    return  # the client hung up

            def _chat(self, body: dict[str, Any]) -> None:
                if server.drip_headers:
                    self._drip()
                    return
                if server.refuse_schema and isinstance(body.get("format"), dict):
                    self._send(400, {"error": "invalid format: expected \"json\""})
                    return
                if server.chat_status != 200:
                    self._send(server.chat_status, {"error": "scripted failure: model crashed"})
                    return
                text = server.respond(body)
                self._send(200, {
                    "model": body.get("model", ""), "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": text}, "done": True,
                    "done_reason": "stop", "prompt_eval_count": 120,
                    "eval_count": max(1, len(text) // 4),
                })

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
