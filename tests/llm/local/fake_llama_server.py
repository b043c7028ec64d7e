"""A stand-in for ``llama_cpp.server``: the same command line, the same two endpoints.

Run by the launcher in ``llm/local.py`` exactly as the real server is (``-m MODULE`` with
``--model ... --host ... --port ...``), so tests exercise process start, readiness
polling, sharing, the watchdog and shutdown without llama-cpp-python. Answers to a
``response_format`` carrying a ``schema`` are instances of that schema; every request is
appended to the JSON-lines file named by ``FAKE_LLAMA_LOG``. ``FAKE_LLAMA_FAIL`` makes
it exit at start-up with that message, as the real server does on unreadable weights;
``FAKE_LLAMA_GROW_MB`` makes every request keep that many more MiB resident, as
llama-cpp-python's prompt cache did; a request whose text holds ``FAKE_LLAMA_EXIT_ON``
makes it print a fatal line and exit with status 3, as a crash would;
``FAKE_LLAMA_DELAY_S`` makes every answer take that long (after the growth), and like the
real server it answers ``/v1/models`` only between requests (one model lock).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOG_ENV = "FAKE_LLAMA_LOG"
FAIL_ENV = "FAKE_LLAMA_FAIL"
GROW_ENV = "FAKE_LLAMA_GROW_MB"
EXIT_ENV = "FAKE_LLAMA_EXIT_ON"
DELAY_ENV = "FAKE_LLAMA_DELAY_S"
#: What the requests keep alive (grown memory).
_kept: list[bytearray] = []


def instance(schema: dict[str, Any]) -> Any:
    """The first value ``schema`` allows (enums first, then the type's simplest value)."""
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema.get("type")
    if kind == "object":
        return {k: instance(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema.get("items", {}))]
    return {"integer": 3, "number": 3.0, "boolean": True}.get(str(kind), "fake reasoning")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--model_alias")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n_ctx", type=int)
    parser.add_argument("--n_threads", type=int)
    parser.add_argument("--cache")
    parser.add_argument("--logits_all")
    args = parser.parse_args()
    if os.environ.get(FAIL_ENV):
        print(f"error loading model: {os.environ[FAIL_ENV]}", flush=True)
        sys.exit(1)
    alias = args.model_alias or args.model
    model_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            return

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/v1/models":
                with model_lock:
                    pass
                self._send(200, {"object": "list", "data": [{"id": alias,
                                                             "object": "model"}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            with model_lock:
                self._answer()

        def _answer(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            marker = os.environ.get(EXIT_ENV)
            if marker and marker in json.dumps(body):
                print(f"GGML_ASSERT failed: fake crash on {marker}", flush=True)
                os._exit(3)
            grow = int(os.environ.get(GROW_ENV) or 0) << 20
            if grow:
                # One page written in every 4 KiB, so all of it is resident, and never more
                # than ``grow`` at once: ``bytearray(b"\x01" * grow)`` held the bytes and
                # their copy together for a moment, twice the growth, and a supervisor that
                # read the size in that moment stopped the server a request early.
                kept = bytearray(grow)
                kept[::4096] = b"\x01" * len(range(0, grow, 4096))
                _kept.append(kept)
            # after growing: the answer waits with the new size already there to be seen
            time.sleep(float(os.environ.get(DELAY_ENV) or 0))
            if os.environ.get(LOG_ENV):
                with open(os.environ[LOG_ENV], "a") as log:
                    log.write(json.dumps({"pid": os.getpid(), "body": body}) + "\n")
            fmt = body.get("response_format") or {}
            if "schema" in fmt:
                text = json.dumps(instance(fmt["schema"]))
            else:
                text = f"A summary from {os.path.basename(args.model)}."
            self._send(200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                "model": body.get("model", alias),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    print(f"fake llama server on {args.host}:{args.port}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
