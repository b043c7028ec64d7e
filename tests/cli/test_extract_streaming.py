"""``summarybench extract`` streams (issue 34, item 10; docs/performance.md, "Memory per
unit"): units go to the JSON-lines file as they are built, so what the command holds
follows the largest file, not the codebase. Measured with tracemalloc (Python's own
allocations: deterministic, whatever the machine's load)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from pytest_summarybench.cli import main
from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.store import Store

FILES = 60
BODY_LINES = 400  # lines of about 100 characters: some 40 KB a file, under maxLines 500


def _codebase(root: Path) -> int:
    """``FILES`` Python files of one long function each; their total bytes."""
    root.mkdir()
    total = 0
    for i in range(FILES):
        body = "".join(f"    v{j} = 'value {i} {j} {'x' * 80}'\n" for j in range(BODY_LINES))
        text = f"def f{i}(a):\n{body}    return a\n"
        (root / f"m{i}.py").write_text(text)
        total += len(text.encode())
    return total


def test_extract_path_holds_about_one_file_not_the_codebase(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            ) -> None:
    source = _codebase(tmp_path / "code")
    out = tmp_path / "units.jsonl"
    main(["extract", str(tmp_path / "code"), "-o", str(tmp_path / "warm.jsonl")])  # imports
    capsys.readouterr()
    tracemalloc.start()
    try:
        assert main(["extract", str(tmp_path / "code"), "-o", str(out)]) == 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Every unit's content (function and file units: twice the source) was held at once
    # before (peak about 6x the source); now one file's units and the units' names.
    assert peak < source / 2, (peak, source)
    lines = out.read_text(encoding="utf-8").splitlines()
    expected = extract_units(ExtractionConfig(root_path=str(tmp_path / "code"))).units
    assert lines == [json.dumps(u.to_json_dict(), ensure_ascii=False) for u in expected]
    assert "0 skipped; 120 units written" in capsys.readouterr().out
    assert not list(tmp_path.glob(".*"))  # no working files or temporary output left


def test_extract_sample_writes_the_sample_in_order(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_summarybench.extract import sample_units

    root = tmp_path / "code"
    root.mkdir()
    for i in range(12):
        (root / f"m{i}.py").write_text(f"def f{i}(a):\n    b = a + {i}\n    return b\n")
    out = tmp_path / "units.jsonl"
    assert main(["extract", str(root), "-o", str(out), "--sample", "5", "--strategy",
                 "random", "--seed", "7"]) == 0
    units = extract_units(ExtractionConfig(root_path=str(root))).units
    expected = sample_units(units, "random", 5, 7)
    assert out.read_text(encoding="utf-8").splitlines() == [
        json.dumps(u.to_json_dict(), ensure_ascii=False) for u in expected]
    printed = capsys.readouterr().out
    assert "5 units written" in printed and "sample: 5 of 24 units" in printed


def test_extract_output_that_cannot_be_written_is_one_line_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "code"
    root.mkdir()
    (root / "a.py").write_text("def f(a):\n    b = a\n    return b\n")
    code = main(["extract", str(root), "-o", str(tmp_path / "missing" / "u.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "cannot write" in err and "No such file" in err
    assert "extraction" not in err  # refused before extracting


def test_configured_extract_reads_the_store_a_batch_at_a_time(
        project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = project / "code"
    for i in range(30):
        (code / f"m{i}.py").write_text(f"def g{i}(a):\n    b = a + {i}\n    return b\n")

    def every_unit(*args: object, **kwargs: object) -> None:
        raise AssertionError("every unit read back from the store at once")

    monkeypatch.setattr(Store, "load_units", every_unit)
    out = project / "units.jsonl"
    assert main(["extract", "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 60  # 30 functions, 30 file units (a.py is too short)
    assert [json.loads(line)["path"] for line in lines] == sorted(
        json.loads(line)["path"] for line in lines)
    printed = capsys.readouterr().out
    assert "of 60 units sampled" in printed and "python" in printed
