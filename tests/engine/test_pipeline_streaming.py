"""Issue 32: extraction streams into the store. The run's stored units, their order, the
sample, the group counts and the codebase figures are those of extracting into a list and
sampling it, and no step keeps every ``CodeUnit`` (the units come one at a time)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from pytest_summarybench.engine import pipeline
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.extract import extract_units, sample_units
from pytest_summarybench.extract.codebase import stream_units
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store, StoreError

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "sample_codebase"


def test_streamed_extraction_stores_what_a_list_would(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "_STORE_BATCH", 7)  # many batches on a small codebase
    settings = load_settings(None, {"codebase.root": str(SAMPLE),
                                    "output.directory": str(tmp_path / "out"),
                                    "evaluation.sampleSize": 30}, base_dir=tmp_path,
                             families=BUILTIN_FAMILIES)
    store = Store(tmp_path / "store.sqlite")
    try:
        ctx = pipeline.ensure_units(settings, store)
        listed = [u for u in extract_units(settings.extraction_config()).units
                  if u.type in settings.extraction.types]
        ev = settings.evaluation
        sampled = sample_units(listed, ev.sampling, ev.sample_size, ev.seed)
        assert [u.id for u in ctx.all_units] == [u.id for u in listed]
        assert ctx.all_units == listed
        assert [u.id for u in ctx.units] == [u.id for u in sampled]
        groups: dict[tuple[str, str], int] = {}
        for u in listed:
            groups[(u.language, u.type)] = groups.get((u.language, u.type), 0) + 1
        assert store.unit_groups(ctx.run_id) == groups
        info = store.load_run(ctx.run_id).codebase_info  # type: ignore[union-attr]
        assert (info.total_code_units, info.sampled_code_units) == (len(listed), 30)
        assert info.languages == sorted({u.language for u in listed})
        # A fresh context reads a unit by id without reading the others.
        again = pipeline.ensure_units(settings, store)
        assert again.unit(listed[-1].id) == listed[-1]
        assert "all" not in vars(again.stored_units)
        # Extraction's working folder (extract/spill.py) is gone with the run's units.
        assert [p.name for p in tmp_path.iterdir()
                if p.name.startswith(".summarybench-extraction-")] == []
        assert (tmp_path / "store.sqlite").is_file()
    finally:
        store.close()


def test_a_full_disk_under_extraction_is_one_store_error(tmp_path: Path, monkeypatch) -> None:
    from pytest_summarybench.extract import spill

    def full(self: object, f: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(spill.SpillWriter, "write", full)
    settings = load_settings(None, {"codebase.root": str(SAMPLE)}, base_dir=tmp_path,
                             families=BUILTIN_FAMILIES)
    store = Store(tmp_path / "store.sqlite")
    try:
        with pytest.raises(StoreError, match=r"working files in .*No space left on device"):
            pipeline.ensure_units(settings, store)
    finally:
        store.close()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".summarybench-")]


def test_the_stream_yields_each_unit_once_in_order() -> None:
    settings = load_settings(None, {"codebase.root": str(SAMPLE)}, families=BUILTIN_FAMILIES)
    stream = stream_units(settings.extraction_config())
    streamed = list(stream.units)
    assert stream.total == len(streamed)
    assert streamed == extract_units(settings.extraction_config()).units
