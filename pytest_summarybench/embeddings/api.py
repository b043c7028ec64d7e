"""Embedding APIs through litellm, for real runs: ``voyage/voyage-code-3``,
``openai/text-embedding-3-small``, ``gemini/text-embedding-004`` and whatever else litellm
routes, configured as ``embeddingModel`` with litellm's ``provider/model`` name.

Keys come from the provider's usual environment variable (``VOYAGE_API_KEY``,
``OPENAI_API_KEY``...), endpoints from litellm's (``OPENAI_API_BASE``) or ``api_base``.
Texts longer than ``max_chars`` are truncated to their first ``max_chars`` characters:
16,000 characters is some 4,000-5,500 tokens of code, inside the 8,191-token window of the
smallest common API model (text-embedding-3), so the provider never truncates (or rejects)
silently on our behalf; code units longer than that are rare after extraction's
``maxLines`` filter.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from .base import EmbeddingError, normalize_rows

if TYPE_CHECKING:
    from .base import Matrix

MAX_CHARS = 16_000


class LiteLLMBackend:
    """A hosted embedding model called through ``litellm.embedding``."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 batch_size: int = 64, max_chars: int = MAX_CHARS, timeout_s: float = 60.0,
                 num_retries: int = 3, dimensions: int | None = None) -> None:
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self._batch_size = batch_size
        self.max_chars = max_chars
        self.timeout_s = timeout_s
        self.num_retries = num_retries
        self.dimensions = dimensions

    @property
    def name(self) -> str:
        return self.model

    @property
    def cache_key(self) -> str:
        # The endpoint is part of the key: two servers behind one model name may differ.
        where = hashlib.sha256((self.api_base or "").encode()).hexdigest()[:8]
        dims = f":d{self.dimensions}" if self.dimensions else ""
        return f"litellm:{self.model}:{where}:c{self.max_chars}{dims}"

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def batch_chars(self) -> int | None:
        return None

    def embed_batch(self, texts: list[str]) -> Matrix:
        import numpy as np

        from ..llm.providers import litellm
        from ..llm.redaction import redact

        kwargs: dict[str, Any] = {"timeout": self.timeout_s, "num_retries": self.num_retries}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        if self.dimensions:
            kwargs["dimensions"] = self.dimensions
        # An empty input is an error for most APIs; a single space embeds "nothing".
        inputs = [t[: self.max_chars] or " " for t in texts]
        try:
            response = litellm().embedding(model=self.model, input=inputs, **kwargs)
        except Exception as exc:  # litellm raises provider-specific exception types
            raise EmbeddingError(
                f"embedding model {self.model} failed on a batch of {len(texts)} texts: "
                f"{redact(str(exc))}") from None  # the raw exception may carry the key
        data = sorted(response.data, key=lambda d: _field(d, "index"))
        if len(data) != len(texts):
            raise EmbeddingError(f"embedding model {self.model} returned {len(data)} vectors "
                                 f"for {len(texts)} texts")
        matrix = np.asarray([_field(d, "embedding") for d in data], dtype=np.float32)
        return normalize_rows(matrix)


def _field(item: Any, key: str) -> Any:
    return item[key] if isinstance(item, dict) else getattr(item, key)
