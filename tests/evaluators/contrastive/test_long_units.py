"""Issue 34: distractor selection over long units (the candidate search, the default).

A sample of targets in a group larger than ``candidatesPerTarget``: the evaluation model
ranks each target's shortlist on the first ``RANKING_WINDOWS`` windows of each unit, and
embeds whole only the targets and the distractors picked, never every candidate (a
20-unit sample of 600 units of 250 KB embedded 466 texts whole, 8 windows each: 400 s);
and the units' code is read from the store a few units at a time, never the code of every
candidate at once (669 MB peak there)."""

from __future__ import annotations

import copy
import random
import tracemalloc
from pathlib import Path

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.embeddings import Embedder
from pytest_summarybench.embeddings.hashing import HashingBackend
from pytest_summarybench.evaluators.contrastive import candidates
from pytest_summarybench.evaluators.contrastive.sets import ensure_distractor_sets
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.schemas import CodeUnit
from pytest_summarybench.schemas.units import UnitMetadata
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store

UNITS = 120
SAMPLED = 4
PER_TARGET = 20
DISTRACTORS = 9
LINES = 500
"""Lines of 400 characters: 200 KB of code per unit, 24 MB in all."""
WINDOW_CHARS = 1000


class _Windowed(HashingBackend):
    """A model that embeds the first ``max_windows`` windows of a text (as builtin/minilm
    does, by characters here), recording how many texts it embedded at each setting."""

    def __init__(self, log: list[tuple[int, int]], max_windows: int = 8) -> None:
        super().__init__()
        self.max_windows = max_windows
        self.log = log

    @property
    def cache_key(self) -> str:
        return f"windowed:w{self.max_windows}"

    @property
    def batch_chars(self) -> int:
        return 16_384

    @property
    def max_pieces(self) -> int:
        return self.max_windows * WINDOW_CHARS

    def with_windows(self, max_windows: int) -> _Windowed:
        other = copy.copy(self)
        other.max_windows = max_windows
        return other

    def embed_batch(self, texts: list[str]):  # noqa: ANN201 (Matrix)
        self.log.append((self.max_windows, len(texts)))
        return super().embed_batch([t[:self.max_pieces] for t in texts])


def _units(lines: int) -> list[CodeUnit]:
    rng = random.Random(34)
    vocab = [f"w{n}" for n in range(3000)]
    units = []
    for i in range(UNITS):
        body = [f"def long{i}(a):"]
        body.extend(f"    x{n} = a + {n}  # {' '.join(rng.choices(vocab, k=70))}"[:400]
                    for n in range(lines))
        units.append(CodeUnit(
            id=f"u{i:03d}", path=f"m{i}.py", name=f"long{i}", type="function",
            language="python", content="\n".join(body) + "\n",
            metadata=UnitMetadata(start_line=1, end_line=lines + 1,
                                  signature=f"def long{i}(a):")))
    return units


def _select(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            lines: int) -> tuple[list[tuple[int, int]], int, int]:
    """Select the sets of ``SAMPLED`` targets among ``UNITS`` units of ``lines`` lines:
    the model's (windows, texts) per batch, the peak traced while the evaluation model's
    vectors are made, and the units' code size."""
    folder = tmp_path / f"lines{lines}"
    folder.mkdir()
    settings = load_settings(None, {
        "output.directory": str(folder / "out"), "codebase.root": str(folder),
        "evaluation.contrastive.candidatesPerTarget": PER_TARGET,
        "evaluation.contrastive.distractors": DISTRACTORS}, base_dir=folder,
        families=BUILTIN_FAMILIES)
    store = Store(folder / "store.sqlite")
    units = _units(lines)
    content = sum(len(u.content) for u in units)
    sampled = {u.id for u in units[::UNITS // SAMPLED]}
    store.save_units("run-test", units, sampled)
    store.save_unit_groups("run-test", {("python", "function"): UNITS})
    del units
    ctx = RunContext(settings, store, "run-test")
    log: list[tuple[int, int]] = []
    embedder = Embedder(_Windowed(log), store)
    peaks: list[int] = []
    need = candidates._ModelVectors.need

    def traced(self: candidates._ModelVectors, ids: list[str]) -> None:
        """The model's stage, traced on its own: the cheap stage before it allocates a
        table of every word piece (some 47 MB) whatever the units' length."""
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            need(self, ids)
            peaks.append(tracemalloc.get_traced_memory()[1] - before)
        finally:
            tracemalloc.stop()

    monkeypatch.setattr(candidates._ModelVectors, "need", traced)
    try:
        assert len(ctx.units) == SAMPLED
        sets = ensure_distractor_sets(ctx, embedder)
    finally:
        store.close()
    assert sorted(sets) == sorted(sampled)
    assert all(len(s.distractor_ids) == DISTRACTORS for s in sets.values())
    return log, max(peaks), content


def test_long_units_rank_candidates_on_their_first_windows_and_read_a_few_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, peak, content = _select(tmp_path, monkeypatch, LINES)
    whole = sum(n for windows, n in log if windows == 8)
    first = sum(n for windows, n in log if windows < 8)
    # Whole: the targets and their distractors, not every candidate of the shortlists.
    assert whole <= SAMPLED * (1 + DISTRACTORS), log
    assert first >= PER_TARGET, log  # the shortlists, ranked on their first windows
    # The code of a few units at a time, not of every candidate (some 80 here).
    assert peak < content / 5, (f"peak {peak / 1e6:.1f} MB while embedding, for "
                                f"{content / 1e6:.1f} MB of code")
