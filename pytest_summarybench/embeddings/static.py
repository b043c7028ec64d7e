"""Static token vectors distilled from the shipped MiniLM: a cheap stand-in for the model
over a whole codebase.

A word piece of the model's vocabulary goes through the model alone (``[CLS] piece
[SEP]``, pooled as the model pools), which gives it one vector. A text's static vector is
the weighted mean of its pieces' vectors: a tokenizer pass and a sparse product, thousands
of texts a second where the model does tens. It ranks texts by what they are about well
enough to find a short list of candidates for the model to score
(``evaluators/contrastive/candidates.py``); it never stands in for the model in a score.

Pieces are distilled when a text first uses them (code uses a fraction of the 30,522:
some 2,000 for the bundled sample, most of them for a large codebase, about 10 s of model
work on 2 cores for all of them) and kept in the store's embedding cache, as float16, so
a re-run and a larger run on the same store distil only what is new.

A piece's weight is its inverse document frequency over the texts being compared (rare
identifiers say more about a unit than ``self`` or ``return``), counted on a sample of
them (``fit``), so that one pass suffices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .base import EmbeddingError

if TYPE_CHECKING:
    import numpy as np

    from ..store import Store
    from .base import Matrix
    from .minilm import MiniLMBackend

#: Pieces per model call when pieces are distilled (windows of 3 pieces each).
_TABLE_RUN = 512
#: Texts tokenized per batch when texts are embedded.
_BATCH = 512
#: Texts the document frequencies are counted on.
DF_SAMPLE = 4000
#: The model's vector size (all-MiniLM-L6-v2).
DIM = 384


class StaticVectors:
    """The static piece vectors of ``backend`` (a ``MiniLMBackend``), cached in ``store``."""

    def __init__(self, backend: MiniLMBackend, store: Store | None = None) -> None:
        self.backend = backend
        self.store = store
        self._table: Matrix | None = None
        self._have: np.ndarray | None = None
        self._idf: Matrix | None = None
        self.distilled = 0
        """Pieces this object put through the model (cache misses), for tests."""

    @property
    def cache_key(self) -> str:
        return f"{self.backend.cache_key}:static-piece"

    # -- the pieces -------------------------------------------------------------------
    def _ensure(self, ids: np.ndarray) -> Matrix:
        """The table, with a vector for every piece of ``ids`` (distilled if new)."""
        import numpy as np

        tokenizer, _ = self.backend.load()
        if self._table is None or self._have is None:
            size = tokenizer.get_vocab_size()
            self._table = np.zeros((size, DIM), dtype=np.float32)
            self._have = np.zeros(size, dtype=bool)
        wanted = np.unique(ids)
        wanted = wanted[~self._have[wanted]]
        if not len(wanted):
            return self._table
        if self.store is not None:
            found = self.store.embeddings.lookup(self.cache_key, {str(i) for i in wanted})
            for key, (dim, blob) in found.items():
                vector = np.frombuffer(blob, dtype=np.float16)
                if vector.shape[0] == dim == self._table.shape[1]:
                    self._table[int(key)] = vector
                    self._have[int(key)] = True
            wanted = wanted[~self._have[wanted]]
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        for start in range(0, len(wanted), _TABLE_RUN):
            part = [int(i) for i in wanted[start:start + _TABLE_RUN]]
            vectors = self.backend.run_windows([[cls_id, i, sep_id] for i in part])
            if vectors.shape[1] != self._table.shape[1]:
                raise EmbeddingError(f"static vectors: {self.backend.name} gave vectors of "
                                     f"{vectors.shape[1]} dimensions, not "
                                     f"{self._table.shape[1]}")
            self._table[part] = vectors
            self._have[part] = True
            self.distilled += len(part)
            if self.store is not None:
                self.store.embeddings.save(self.cache_key, [
                    (str(i), int(v.shape[0]), v.astype(np.float16).tobytes())
                    for i, v in zip(part, vectors, strict=True)])
        return self._table

    # -- texts ------------------------------------------------------------------------
    def _pieces(self, texts: Sequence[str]) -> list[list[int]]:
        return self.backend.pieces(list(texts))

    def fit(self, texts: Sequence[str]) -> None:
        """Set the pieces' weights from ``texts`` (a sample of those to be embedded)."""
        self.fit_pieces(self._pieces(texts))

    def fit_pieces(self, pieces: Sequence[Sequence[int]]) -> None:
        """``fit`` from the texts' word pieces (``backend.pieces``), already tokenized."""
        import numpy as np

        tokenizer, _ = self.backend.load()
        df = np.zeros(tokenizer.get_vocab_size(), dtype=np.float64)
        for ids in pieces:
            df[np.unique(np.asarray(ids, dtype=np.int64))] += 1
        n = max(len(pieces), 1)
        self._idf = (np.log((n + 1) / (df + 1)) + 1.0).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Unit-length static vectors of ``texts``."""
        import numpy as np

        out = np.empty((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            part = texts[start:start + _BATCH]
            out[start:start + len(part)] = self.embed_pieces(self._pieces(part))
        return out

    def embed_pieces(self, pieces: Sequence[Sequence[int]]) -> Matrix:
        """``embed`` from the texts' word pieces (``backend.pieces``): the cheap stage
        tokenizes each unit once, for the weights and the vectors both."""
        import numpy as np
        from scipy import sparse

        out: Matrix | None = None
        for start in range(0, len(pieces), _BATCH):
            chunk = pieces[start:start + _BATCH]
            indptr = [0]
            cols: list[np.ndarray] = []
            for ids in chunk:
                cols.append(np.asarray(ids, dtype=np.int64))
                indptr.append(indptr[-1] + len(ids))
            col = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
            table = self._ensure(col)
            idf = self._idf if self._idf is not None else np.ones(table.shape[0],
                                                                   dtype=np.float32)
            weights = sparse.csr_matrix((idf[col], col, indptr),
                                        shape=(len(chunk), table.shape[0]))
            part = np.asarray(weights @ table, dtype=np.float32)
            if out is None:
                out = np.empty((len(pieces), table.shape[1]), dtype=np.float32)
            norms = np.linalg.norm(part, axis=1, keepdims=True)
            out[start:start + len(chunk)] = part / np.clip(norms, 1e-12, None)
        return out if out is not None else np.zeros((0, DIM), dtype=np.float32)

