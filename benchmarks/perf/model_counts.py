"""A pytest plugin for the perf scripts: what went through the evaluation model.

Loaded into a measured run with ``-p model_counts`` (``benchmarks/perf`` on the path), it
wraps ``MiniLMBackend.embed_batch`` and ``MiniLMBackend.run_windows`` (the class, so every
copy of the backend counts) and, at the end of the session, writes one JSON object to the
file named by ``SB_MODEL_COUNTS`` (rewritten after every batch too, so a run stopped early
leaves its counts so far):

- ``texts``: texts embedded (cache misses; a cached text costs nothing);
- ``windows``: their windows of at most 256 word pieces run through the model;
- ``pieces``: word pieces in those windows (``[CLS]`` and ``[SEP]`` included, no padding);
- ``static_pieces``: word pieces distilled into static vectors (``embeddings/static.py``:
  each new piece once, alone, as a window of 3), counted apart since they are cheap;
- ``model_wall_s``: wall seconds inside ``embed_batch`` (the CPU is in the scripts' figures
  of the whole process: onnxruntime computes in threads of its own, and the warm-up
  embeds while the main thread works, so no clock isolates the model's CPU).

The counts do not depend on the machine's load: they compare methods where wall time
cannot. Measurement only: it wraps functions, it changes no result. It works on any
checkout whose backend has these two methods (main's too).
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from typing import Any

import pytest

_COUNTS = {"texts": 0, "windows": 0, "pieces": 0, "static_pieces": 0, "model_wall_s": 0.0}
_LOCK = threading.Lock()
_IN_TEXTS = threading.local()


def _wrap() -> None:
    from pytest_summarybench.embeddings.minilm import MiniLMBackend

    embed_batch = MiniLMBackend.embed_batch
    run_windows = MiniLMBackend.run_windows

    @functools.wraps(embed_batch)
    def counted_embed(self: Any, texts: list[str]) -> Any:
        wall = time.monotonic()
        _IN_TEXTS.on = True
        try:
            return embed_batch(self, texts)
        finally:
            _IN_TEXTS.on = False
            with _LOCK:
                _COUNTS["texts"] += len(texts)
                _COUNTS["model_wall_s"] += time.monotonic() - wall
                _write()

    @functools.wraps(run_windows)
    def counted_run(self: Any, windows: list[list[int]]) -> Any:
        # A text's windows run on the caller's thread and on the backend's lanes
        # (threads named summarybench-minilm-N); static pieces only on the caller's.
        lane = threading.current_thread().name.startswith("summarybench-minilm-")
        with _LOCK:
            if lane or getattr(_IN_TEXTS, "on", False):
                _COUNTS["windows"] += len(windows)
                _COUNTS["pieces"] += sum(len(w) for w in windows)
            else:
                _COUNTS["static_pieces"] += len(windows)
        return run_windows(self, windows)

    MiniLMBackend.embed_batch = counted_embed  # type: ignore[method-assign]
    MiniLMBackend.run_windows = counted_run  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    _wrap()


def _write() -> None:
    """The counts so far into ``SB_MODEL_COUNTS`` (after every batch, so that a run
    stopped by a timeout leaves what it did)."""
    path = os.environ.get("SB_MODEL_COUNTS")
    if path:
        with open(path + ".part", "w", encoding="utf-8") as fh:
            json.dump({k: round(v, 2) if isinstance(v, float) else v
                       for k, v in _COUNTS.items()}, fh)
        os.replace(path + ".part", path)


def pytest_unconfigure(config: pytest.Config) -> None:
    with _LOCK:
        _write()


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The counts a run wrote (empty when it wrote none)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data: dict[str, Any] = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data


def line(counts: dict[str, Any]) -> str:
    """The counts as the scripts print them."""
    if not counts:
        return "model: no counts"
    return (f"model: {counts['texts']:,} texts, {counts['windows']:,} windows, "
            f"{counts['pieces']:,} word pieces ({counts.get('static_pieces', 0):,} pieces "
            f"distilled), {counts.get('model_wall_s', 0):.1f} s wall in it")
