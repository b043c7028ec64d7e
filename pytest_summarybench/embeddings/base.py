"""What an embedding backend is: a named function from a batch of texts to unit vectors.

Backends do the model work only; batching across calls, de-duplication and the content-hash
cache live in ``embedder.py`` so that every backend gets them the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..core.errors import RunError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]


class EmbeddingError(RunError, RuntimeError):
    """An embedding backend could not be loaded or failed on a batch."""


@runtime_checkable
class EmbeddingBackend(Protocol):
    """A model that turns texts into L2-normalised vectors."""

    @property
    def name(self) -> str:
        """The model as configured (``builtin/minilm``, ``voyage/voyage-code-3``)."""

    @property
    def cache_key(self) -> str:
        """Everything that changes the vectors: model, weights version, chunking rule.

        Cached vectors are keyed by this and the text's hash, so changing any of these
        never serves a stale vector.
        """

    @property
    def batch_size(self) -> int:
        """How many texts one call to ``embed_batch`` should get, at most."""

    @property
    def batch_chars(self) -> int | None:
        """How many characters of text one call to ``embed_batch`` should get, at most
        (None: no bound); a longer text goes alone. What bounds a local model's memory."""

    def embed_batch(self, texts: list[str]) -> Matrix:
        """Embed ``texts`` (already de-duplicated, all uncached): ``[len(texts), dim]``
        float32 rows of unit length."""


def normalize_rows(matrix: Matrix) -> Matrix:
    """Scale each row to unit length (zero rows stay zero)."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)
