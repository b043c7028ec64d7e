"""``builtin/hashing``: a lexical embedding by feature hashing, with no model at all.

Words and code identifiers are split into lower-case sub-words (``parseISBN`` and
``parse_isbn`` both give ``parse``, ``isbn``), each hashed with a fixed hash (BLAKE2, not
Python's salted ``hash``) to one of ``dim`` signed buckets, weighted by ``1 + log(tf)``,
and the vector is normalised. Cosine similarity is then a smoothed sub-word overlap: a
bag-of-words baseline for fast runs, and a deterministic, dependency-free stand-in for a
neural model in tests. It has no window, so nothing is chunked or truncated.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import TYPE_CHECKING

from .base import normalize_rows

if TYPE_CHECKING:
    from .base import Matrix

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def subwords(text: str) -> list[str]:
    """Lower-case sub-words of ``text``, splitting camelCase, snake_case and digits."""
    return [w.lower() for w in _WORD.findall(text)]


class HashingBackend:
    """Signed feature hashing of sub-words into ``dim`` buckets."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim

    @property
    def name(self) -> str:
        return "builtin/hashing"

    @property
    def cache_key(self) -> str:
        return f"hashing-blake2:d{self.dim}"

    @property
    def batch_size(self) -> int:
        return 1024

    @property
    def batch_chars(self) -> int | None:
        return None

    def embed_batch(self, texts: list[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word, count in Counter(subwords(text)).items():
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "big")
                sign = 1.0 if value & 1 else -1.0
                out[row, (value >> 1) % self.dim] += sign * (1.0 + math.log(count))
        return normalize_rows(out)
