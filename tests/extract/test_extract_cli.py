"""``summarybench extract``: JSON lines with spec field names, counts, reported skips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_summarybench.cli import main

DATA = Path(__file__).parent / "data" / "langs"


def test_extract_writes_json_lines_and_counts(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "units.jsonl"
    code = main(["extract", str(DATA), "--languages", "python", "go", "--output", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["language"] for r in rows} == {"python", "go"}
    place = next(r for r in rows if r["name"] == "OrderService.place")
    assert set(place) == {"id", "path", "name", "type", "language", "content", "docstring",
                          "metadata", "relationships"}
    assert place["metadata"]["startLine"] == 39 and place["metadata"]["endLine"] == 53
    assert {"callsIds", "calledByIds", "childIds", "parentId", "unresolvedCalls"} \
        <= set(place["relationships"])
    printed = capsys.readouterr().out
    table = {line.split()[0]: line.split()[1:] for line in printed.splitlines()[1:4]}
    # columns: file class function method total
    assert table["go"] == ["1", "3", "2", "2", "8"]
    # The default minLines of 3 leaves out the five two-line Python functions/methods.
    assert table["python"] == ["1", "3", "0", "3", "7"]
    assert f"{len(rows)} units written" in printed


def test_extract_sample_and_skips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ok.py").write_text("def f(a):\n    b = a\n    return b\n")
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe\x00\x00")
    out = tmp_path / "u.jsonl"
    assert main(["extract", str(tmp_path), "-o", str(out), "--sample", "1",
                 "--strategy", "random", "--seed", "3"]) == 0
    assert len(out.read_text().splitlines()) == 1
    captured = capsys.readouterr()
    assert "warning: bad.py: skipped: binary file" in captured.err
    # Once: logging's last-resort handler must not repeat the line.
    assert [line for line in captured.err.splitlines() if "bad.py" in line] == [
        "warning: bad.py: skipped: binary file (NUL byte in the first 8 KiB)"]
    assert "sample: 1 of 2 units (random, seed 3)" in captured.out
    assert main(["extract", str(tmp_path), "--sample", "0"]) == 2
    assert capsys.readouterr().err == ("summarybench extract: --sample 0: must be at least 1 "
                                       "(leave it out to write every unit)\n")


def test_extract_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main(["extract", str(tmp_path), "--languages", "cobol"]) == 2
    assert "unknown language(s) ['cobol']" in capsys.readouterr().err
    assert main(["extract", str(tmp_path), "--min-lines", "-5"]) == 2
    err = capsys.readouterr().err
    assert err == ("summarybench extract: invalid options: --min-lines -5: Input should be "
                   "greater than or equal to 1\n")
