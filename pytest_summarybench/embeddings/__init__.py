"""Embeddings for the objective evaluators (contrastive matching and retrieval).

``get_embedder(spec, store)`` gives an ``Embedder``: batched, de-duplicated, cached by
content hash in the store. By default the model is ``builtin/minilm`` (all-MiniLM-L6-v2,
int8 ONNX, weights from a package: nothing downloads at run time); ``builtin/hashing`` is a
lexical baseline with no model; any litellm ``provider/model`` name calls that API.
"""

from __future__ import annotations

from .base import EmbeddingBackend, EmbeddingError, normalize_rows
from .embedder import Embedder, get_embedder, load_backend, text_hash

__all__ = ["EmbeddingBackend", "EmbeddingError", "Embedder", "get_embedder", "load_backend",
           "normalize_rows", "text_hash"]
