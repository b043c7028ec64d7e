"""Issue 34, item 10: extraction and storing hold the code of a few units, not of all.

Linking calls across files needs every unit's name and calls, never its content; storing
needs a batch of units, not all of them. A codebase of large units (each file one long
function: its file unit and its function unit both carry the whole body) is extracted
and stored by ``ensure_units`` under tracemalloc, and the peak of the memory Python
allocates must stay a small share of the units' total content, whatever that total.
Measured on this test's 33 MB of content: 68 MB before (every unit's content was held
until its batch of 2,000 was stored, and the batch's JSON beside it), 5 MB after."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

from pytest_summarybench.engine import pipeline
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store

FILES = 96
LINES = 450
"""Lines per function (under the default maxLines of 500, so every function is a unit)."""
LINE_CHARS = 400
"""Characters per line (under the 500 of a minified, generated file)."""


def _codebase(root: Path, files: int) -> int:
    """``files`` Python files, each one long function of distinct lines; their bytes."""
    rng = random.Random(34)
    root.mkdir()
    total = 0
    for n in range(files):
        lines = [f"def big{n}(a):"]
        for i in range(LINES):
            words = []
            while sum(len(w) + 1 for w in words) < LINE_CHARS - 40:
                words.append(f"w{rng.randrange(10**6)}")
            lines.append(f"    x{i} = a + {i}  # " + " ".join(words))
        lines.append(f"    return x{LINES - 1}")
        text = "\n".join(lines) + "\n"
        (root / f"f{n}.py").write_text(text)
        total += len(text)
    return total


def _settings(tmp_path: Path, root: Path):  # noqa: ANN202 (Settings)
    return load_settings(None, {"codebase.root": str(root),
                                "output.directory": str(tmp_path / f"out-{root.name}"),
                                "extraction.workers": 1}, base_dir=tmp_path,
                         families=BUILTIN_FAMILIES)


def test_extraction_and_storing_hold_far_less_than_every_units_content(
        tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    (small / "a.py").write_text("def f(a):\n    b = a\n    return b\n")
    store = Store(tmp_path / "store.sqlite")
    try:
        # Imports and grammars are loaded before tracing starts.
        pipeline.ensure_units(_settings(tmp_path, small), store)
        source = _codebase(tmp_path / "big", FILES)
        settings = _settings(tmp_path, tmp_path / "big")
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            ctx = pipeline.ensure_units(settings, store)
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
        content = sum(len(text) for text in
                      store.unit_contents(u.id for u in ctx.all_units).values())
    finally:
        store.close()
    # Each file gives a file unit and a function unit of about its size.
    assert content >= 2 * source * 0.99 > 20_000_000
    assert peak < content / 3, (
        f"peak traced memory {peak / 1e6:.1f} MB for {content / 1e6:.1f} MB of units' "
        f"content ({source / 1e6:.1f} MB of source in {FILES} files)")
