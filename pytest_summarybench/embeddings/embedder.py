"""Batched, de-duplicated embedding with a content-hash cache in the run's store.

Every vector is stored under (the backend's ``cache_key``, sha256 of the text), so a re-run
embeds nothing it has embedded before, whatever the run or the evaluator, and xdist workers
read what the controller computed in ``prepare`` instead of loading a model.

Texts the cache lacks go to the backend in batches of at most ``batch_size`` texts and
``batch_chars`` characters, and each batch's vectors are written to the cache as soon as
they exist, so a killed run keeps what it embedded and progress advances batch by batch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from .base import EmbeddingBackend, EmbeddingError

if TYPE_CHECKING:
    import threading

    from ..core.progress import Phase, Progress
    from ..store import Store
    from .base import Matrix


#: Texts ``Embedder.embed_read`` holds at a time (4 code units of 250 KB: 1 MB).
READ_CHUNK = 4


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Embedder:
    """Embeds texts with ``backend``, reading and filling the cache in ``store``."""

    def __init__(self, backend: EmbeddingBackend, store: Store | None = None,
                 progress: Progress | None = None) -> None:
        self.backend = backend
        self.store = store
        self.progress = progress
        """Where embedding phases report (None: nowhere)."""
        self.computed = 0
        """Texts this embedder sent to the backend (cache misses), for reports and tests."""

    @property
    def name(self) -> str:
        return self.backend.name

    def embed(self, texts: Sequence[str], what: str = "texts") -> Matrix:
        """Unit vectors for ``texts``, one row each, in order.

        :param what: what the texts are, for the progress display ("code", "summaries").
        """
        import numpy as np

        hashes = [text_hash(t) for t in texts]
        found = self._lookup(set(hashes))
        self._compute(texts, hashes, found, what, stop=None)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)

    def fill(self, texts: Sequence[str], what: str, stop: threading.Event) -> bool:
        """Embed what the cache lacks of ``texts`` into the cache, batch by batch, as
        ``embed`` would (the same batches, hence the same vectors), stopping between
        batches once ``stop`` is set. Whether every text is now in the cache.

        For work started before it is known to be needed (``Evaluator.warm_up``)."""
        hashes = [text_hash(t) for t in texts]
        found = self._lookup(set(hashes))
        return self._compute(texts, hashes, found, what, stop=stop)

    def _compute(self, texts: Sequence[str], hashes: list[str], found: dict[str, Matrix],
                 what: str, stop: threading.Event | None) -> bool:
        """Embed the texts ``found`` lacks, adding their vectors to it and to the cache;
        False when ``stop`` cut it short."""
        missing: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in found and h not in missing:
                missing[h] = t
        # Batches cut from the texts sorted by length: texts of similar length pad little
        # in a local model's calls (measured: batches cut in the order given ran some 10%
        # slower). They run in an order that keeps the texts done in step with the
        # characters done, so that the rate in texts, and the time left, holds for the
        # rest (sent longest first, the time left shown at the start was six times too
        # long).
        pending = sorted(missing.items(), key=lambda item: -len(item[1]))
        batches = even_order(list(self.batches(pending)))
        if not pending:
            return True
        from ..core.progress import Progress

        progress = self.progress or Progress.off()
        with progress.phase(f"summarybench embedding {what} ({self.name})", len(pending),
                            unit="text") as phase:
            return self._run(batches, found, phase, stop)

    def _run(self, batches: list[list[tuple[str, str]]], found: dict[str, Matrix],
             phase: Phase, stop: threading.Event | None) -> bool:
        """Embed ``batches`` of (hash, text) into ``found`` and the cache; False when
        ``stop`` cut it short (checked between batches)."""
        for batch in batches:
            if stop is not None and stop.is_set():
                return False
            vectors = self.backend.embed_batch([t for _, t in batch])
            if vectors.shape[0] != len(batch):
                raise EmbeddingError(f"{self.name} returned {vectors.shape[0]} "
                                     f"vectors for {len(batch)} texts")
            fresh = {h: vectors[i] for i, (h, _) in enumerate(batch)}
            self._save(fresh)
            found.update(fresh)
            self.computed += len(batch)
            phase.advance(len(batch))
        return True

    def embed_read(self, keys: Sequence[str], read: Callable[[list[str]], dict[str, str]],
                   what: str, stop: threading.Event | None = None,
                   chunk: int = READ_CHUNK) -> dict[str, Matrix] | None:
        """The vectors of the texts ``read`` gives for ``keys`` (``read(some_keys)``: key
        -> text; a key it leaves out is the empty text), by key; None when ``stop`` cut
        it short.

        What ``embed`` does (the same cache, the same vectors), holding at most ``chunk``
        texts at a time instead of all of them: long texts (code units of 250 KB) are
        read twice, once to hash them and once, if the cache lacks them, to embed them.
        """
        from ..core.progress import Progress

        hashes: dict[str, str] = {}
        for part in _chunks(list(keys), chunk):
            texts = read(part)
            hashes.update((k, text_hash(texts.get(k) or "")) for k in part)
        found = self._lookup(set(hashes.values()))
        todo: dict[str, str] = {}  # a key per missing hash
        for k in keys:
            if hashes[k] not in found:
                todo.setdefault(hashes[k], k)
        progress = self.progress or Progress.off()
        with progress.phase(f"summarybench embedding {what} ({self.name})", len(todo),
                            unit="text") as phase:
            for part in _chunks(list(todo.values()), chunk):
                texts = read(part)
                pending = sorted(((hashes[k], texts.get(k) or "") for k in part),
                                 key=lambda item: -len(item[1]))
                if not self._run(list(self.batches(pending)), found, phase, stop):
                    return None
                del texts, pending
        return {k: found[hashes[k]] for k in keys}

    def batches(self, pending: list[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
        """``pending`` (hash, text) in order, cut at ``batch_size`` texts or
        ``batch_chars`` characters, whichever comes first; a longer text goes alone."""
        size = max(1, self.backend.batch_size)
        chars = self.backend.batch_chars
        batch: list[tuple[str, str]] = []
        held = 0
        for item in pending:
            if batch and (len(batch) >= size
                          or (chars is not None and held + len(item[1]) > chars)):
                yield batch
                batch, held = [], 0
            batch.append(item)
            held += len(item[1])
        if batch:
            yield batch

    def cached(self, texts: Sequence[str]) -> Matrix | None:
        """Vectors for ``texts`` from the cache only; None if any is missing.

        For workers, which must not load a model for what ``prepare`` should have done.
        """
        import numpy as np

        hashes = [text_hash(t) for t in texts]
        found = self._lookup(set(hashes))
        if any(h not in found for h in hashes):
            return None
        return np.stack([found[h] for h in hashes]) if hashes else None

    # -- cache --------------------------------------------------------------------------
    def _lookup(self, hashes: set[str]) -> dict[str, Matrix]:
        import numpy as np

        if self.store is None or not hashes:
            return {}
        found: dict[str, Matrix] = {}
        for h, (dim, blob) in self.store.embeddings.lookup(self.backend.cache_key,
                                                           hashes).items():
            vector = np.frombuffer(blob, dtype=np.float32)
            if vector.shape[0] == dim:  # a damaged row is embedded again
                found[h] = vector
        return found

    def _save(self, vectors: dict[str, Matrix]) -> None:
        import numpy as np

        if self.store is None or not vectors:
            return
        self.store.embeddings.save(self.backend.cache_key, [
            (h, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for h, v in vectors.items()])


def _chunks(keys: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(keys), max(1, size)):
        yield keys[start:start + size]


def even_order(batches: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    """``batches`` of (hash, text) reordered so that, after each, the share of characters
    embedded is as near as it can be to the share of texts: a batch of long texts when
    characters lag, one of short texts when they lead. Deterministic."""
    by_density = sorted(batches, key=lambda b: sum(len(t) for _, t in b) / len(b))
    total_texts = sum(len(b) for b in batches)
    total_chars = sum(len(t) for b in batches for _, t in b)
    out: list[list[tuple[str, str]]] = []
    texts = chars = 0
    low, high = 0, len(by_density) - 1
    while low <= high:
        if chars * total_texts < texts * total_chars:  # characters lag behind texts
            batch, high = by_density[high], high - 1
        else:
            batch, low = by_density[low], low + 1
        out.append(batch)
        texts += len(batch)
        chars += sum(len(t) for _, t in batch)
    return out


def load_backend(spec: str) -> EmbeddingBackend:
    """The backend for an ``embeddingModel`` value.

    ``builtin/minilm`` (the default, offline) and ``builtin/hashing`` (lexical, no model)
    are built in; any other ``provider/model`` goes to litellm (e.g. ``voyage/voyage-code-3``).
    """
    if spec == "builtin/minilm":
        from .minilm import shared_backend

        return shared_backend()
    if spec == "builtin/hashing":
        from .hashing import HashingBackend

        return HashingBackend()
    if spec.startswith("builtin/") or "/" not in spec:
        raise EmbeddingError(
            f"unknown embedding model {spec!r}: use builtin/minilm, builtin/hashing or a "
            f"litellm provider/model name such as voyage/voyage-code-3 or "
            f"openai/text-embedding-3-small")
    from .api import LiteLLMBackend

    return LiteLLMBackend(spec)


def get_embedder(spec: str, store: Store | None = None,
                 progress: Progress | None = None) -> Embedder:
    """An ``Embedder`` for ``spec`` caching in ``store``, reporting to ``progress``."""
    return Embedder(load_backend(spec), store, progress)
