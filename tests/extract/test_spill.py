"""Extraction with the units' data written aside (``extract/spill.py``): the same units,
and nothing of their code held by what linking and ordering keep."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.extract.codebase import _extract_files, stream_units

DATA = Path(__file__).parent / "data" / "langs"


@pytest.mark.parametrize("workers", [1, 2])
def test_streamed_units_with_data_written_aside_equal_extract_units(
        tmp_path: Path, workers: int) -> None:
    config = ExtractionConfig(root_path=str(DATA), workers=workers)
    expected = extract_units(ExtractionConfig(root_path=str(DATA), workers=1)).units
    stream = stream_units(config, spill=tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    got = list(stream.units)
    assert stream.total == len(expected) > 50
    assert got == expected
    # One file per process that extracted something (a worker's and this one's).
    assert 1 <= len(written) <= workers
    assert all(p.stat().st_size > 0 for p in tmp_path.iterdir())


def test_units_kept_for_linking_hold_no_code(tmp_path: Path) -> None:
    """What extraction holds for every unit until the units are built: names, places
    and calls, not the data (content, signature, parameters, docstring)."""
    config = ExtractionConfig(root_path=str(DATA), workers=1)
    _, files = _extract_files(config, None, tmp_path)
    raws = [raw for f in files for raw in (f.file_unit, *f.units)]
    assert sum(raw.uid is not None for raw in raws) > 50
    assert all(f.spill is not None and f.source == b"" for f in files)
    held = [raw for raw in raws if raw.data is not None or raw.doc is not None
            or raw.signature is not None or raw.parameters is not None or raw.deps]
    assert held == []
    _, kept = _extract_files(config, None, None)
    assert any(raw.data is not None for f in kept for raw in f.units)  # the contrast


def test_a_damaged_working_file_is_an_error_naming_it(tmp_path: Path) -> None:
    stream = stream_units(ExtractionConfig(root_path=str(DATA), workers=1), spill=tmp_path)
    (working,) = tmp_path.iterdir()
    working.write_bytes(working.read_bytes()[:100])
    with pytest.raises(OSError, match="extraction's working file"):
        list(stream.units)
