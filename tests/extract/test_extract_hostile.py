"""Hostile codebases: names that are not regular files, folders nested past any sense,
code nested or chained to make extraction quadratic. Each costs one line naming the file
and the reason, within 30 s and 600 MB of peak resident memory (measured in a child
process, under an address-space cap so that a regression fails instead of swapping), and
every other file is extracted as usual."""

from __future__ import annotations

import os
import random
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.core.walk import walk_folders
from pytest_summarybench.extract import ExtractionConfig, ExtractionFilters, bounds, extract_units
from pytest_summarybench.extract.languages._base import _CALLEE_NAME, _trailing_name
from tests.fakes.hostile import DEEP_CODE, GOOD, call_chains, codebase, extract_in_child

SECONDS = 30.0
PEAK_MB = 600.0


def _extract_bounded(root: Path) -> dict[str, Any]:
    """Extract ``root`` in a child process; what it found, checked to have ended within
    ``SECONDS`` and ``PEAK_MB``."""
    started = time.monotonic()
    found = extract_in_child(root, SECONDS * 2)
    if found is None:
        pytest.fail(f"extraction of {root.name} still running after {SECONDS * 2:g} s")
    elapsed = time.monotonic() - started
    assert elapsed < SECONDS, f"{root.name}: {elapsed:.1f} s"
    assert found["peak_mb"] < PEAK_MB, f"{root.name}: {found['peak_mb']:.0f} MB"
    return found


def _codebase(tmp_path: Path, name: str, text: str) -> Path:
    return codebase(tmp_path / "code", name, text)


@pytest.mark.parametrize("case", sorted(DEEP_CODE))
def test_deep_nesting_is_one_line_in_bounded_time_and_memory(tmp_path: Path,
                                                             case: str) -> None:
    name, text = DEEP_CODE[case]
    found = _extract_bounded(_codebase(tmp_path, name, text))
    assert found["skipped"] == {
        name: f"syntax nested more than {bounds.MAX_SYNTAX_DEPTH} levels deep (the limit "
              "per file)"}
    assert found["warnings"] == [f"{name}: skipped: {found['skipped'][name]}"]
    assert found["units"] == ["ok.py"]


def test_long_call_chains_under_the_limits_cost_linear_time_and_memory(
        tmp_path: Path) -> None:
    """A chain of N calls holds N texts of the chain before each: N^2 bytes. A megabyte of
    900-call chains (under the depth limit) took 650 MB of them; the file is extracted."""
    root = _codebase(tmp_path, *call_chains())
    found = _extract_bounded(root)
    assert found["skipped"] == {}
    assert found["units"] == ["A.java", "ok.py"]


def _skipped_by_the_cli(root: Path) -> list[str]:
    try:
        done = subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", "extract",
                               str(root)], capture_output=True, text=True, timeout=SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"summarybench extract still running after {SECONDS:g} s")
    assert done.returncode == 0, done.stderr
    return [line for line in done.stderr.splitlines() if "skipped" in line]


def test_a_fifo_is_skipped_with_its_kind(tmp_path: Path) -> None:
    """A FIFO blocked extraction for ever (nothing writes to it)."""
    root = _codebase(tmp_path, "ok2.py", GOOD)
    os.mkfifo(root / "f.py")
    found = _extract_bounded(root)
    assert found["skipped"] == {"f.py": "not a regular file: a FIFO (named pipe)"}
    assert found["units"] == ["ok.py", "ok2.py"]
    assert _skipped_by_the_cli(root) == [
        "warning: f.py: skipped: not a regular file: a FIFO (named pipe)"]


def test_a_name_that_is_not_utf8_is_skipped_with_one_escaped_line(tmp_path: Path) -> None:
    """``bad\\xff.py`` crashed ``summarybench extract`` with a UnicodeEncodeError (the unit
    id hashes the path as UTF-8), and the benchmark run at collection (the codebase's
    fingerprint did too). A file or a folder so named is skipped, shown as a shell reads
    it back; the rest is extracted."""
    root = _codebase(tmp_path, "ok2.py", GOOD)
    (root / os.fsdecode(b"bad\xff.py")).write_text(GOOD)
    (root / os.fsdecode(b"d\xfe") / "sub").mkdir(parents=True)
    (root / os.fsdecode(b"d\xfe") / "sub" / "x.py").write_text(GOOD)
    found = _extract_bounded(root)
    assert found["skipped"] == {
        os.fsdecode(b"bad\xff.py"): "file name is not valid UTF-8 (rename it to extract it)",
        os.fsdecode(b"d\xfe"): "folder name is not valid UTF-8 (rename it to extract it)"}
    assert found["units"] == ["ok.py", "ok2.py"]
    assert sorted(_skipped_by_the_cli(root)) == [
        "warning: $'bad\\xff.py': skipped: file name is not valid UTF-8 (rename it to "
        "extract it)",
        "warning: $'d\\xfe': skipped: folder name is not valid UTF-8 (rename it to extract "
        "it)"]
    from pytest_summarybench.engine.pipeline import codebase_fingerprint

    assert len(codebase_fingerprint(root)) == 16


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_character_device_is_skipped_with_its_kind(tmp_path: Path) -> None:
    """``/dev/zero`` under a source name reports size 0 and was read until memory ran
    out."""
    root = _codebase(tmp_path, "ok2.py", GOOD)
    os.mknod(root / "zero.py", stat.S_IFCHR | 0o644, os.makedev(1, 5))
    found = _extract_bounded(root)
    assert found["skipped"] == {"zero.py": "not a regular file: a character device"}
    assert found["units"] == ["ok.py", "ok2.py"]
    assert _skipped_by_the_cli(root) == [
        "warning: zero.py: skipped: not a regular file: a character device"]


def test_a_file_replaced_by_a_fifo_after_the_walk_is_not_read(tmp_path: Path) -> None:
    """The kind is checked again on the opened file (without blocking on a FIFO). Were
    the FIFO opened to be read, a writer opened after 10 s ends the wait, so that the
    test fails instead of hanging (it hung for ever before)."""
    import contextlib
    import threading

    from pytest_summarybench.extract.files import SourceFile, read_source

    fifo = tmp_path / "f.py"
    os.mkfifo(fifo)

    def unblock() -> None:
        with contextlib.suppress(OSError):  # no reader: nothing waits
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(10.0, unblock)
    timer.daemon = True
    timer.start()
    try:
        config = ExtractionConfig(root_path=str(tmp_path))
        src, reason = read_source(SourceFile("f.py", str(fifo), "python"), config)
    finally:
        timer.cancel()
    assert (src, reason) == (None, "not a regular file: a FIFO (named pipe)")


def test_the_byte_limit_holds_while_reading(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that grows after its size was read is cut at the limit, not read whole."""
    from pytest_summarybench.extract import files

    path = tmp_path / "grows.py"
    path.write_text(GOOD)
    real_fstat = os.fstat

    def small(fd: int) -> os.stat_result:  # the size a file had when it was opened
        st = real_fstat(fd)
        return os.stat_result((*st[:6], 10, *st[7:]))

    monkeypatch.setattr(files.os, "fstat", small)
    path.write_text(GOOD * 100)
    config = ExtractionConfig(root_path=str(tmp_path),
                              filters=ExtractionFilters(max_file_bytes=len(GOOD) * 2))
    src, reason = files.read_source(files.SourceFile("grows.py", str(path), "python"),
                                    config)
    assert src is None
    assert reason == (f"file too large: more than maxFileBytes {len(GOOD) * 2} bytes (it "
                      "grew while read)")


@pytest.fixture
def deep_folders(tmp_path: Path) -> Iterator[Path]:
    """``code/d/d/.../d/deep.py``, 2,000 folders deep, made and removed by descriptor (the
    path outgrows PATH_MAX on the way, and ``shutil.rmtree`` recurses once per level)."""
    root = tmp_path / "code"
    root.mkdir()
    (root / "ok.py").write_text(GOOD)
    fds = [os.open(root, os.O_RDONLY)]
    try:
        for _ in range(2000):
            os.mkdir("d", dir_fd=fds[-1])
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        with open(os.open("deep.py", os.O_WRONLY | os.O_CREAT, dir_fd=fds[-1]), "w") as fh:
            fh.write(GOOD)
        yield root
    finally:
        if len(fds) == 2001:
            os.unlink("deep.py", dir_fd=fds[-1])
        os.close(fds.pop())
        while fds:
            os.rmdir("d", dir_fd=fds[-1])
            os.close(fds.pop())


def test_folders_nested_2000_deep_cost_no_recursion(deep_folders: Path) -> None:
    """``os.walk`` recursed once per level: a RecursionError after 28 s."""
    found = _extract_bounded(deep_folders)
    assert "ok.py" in found["units"]
    # The deepest folders are past the system's path length: one line at most says so.
    assert len(found["warnings"]) <= 1
    assert all("File name too long" in line for line in found["warnings"])


def test_the_cpu_budget_per_file_skips_with_the_reason(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(bounds, "CPU_SECONDS_PER_FILE", 0.0)
    (tmp_path / "ok.py").write_text(GOOD)
    result = extract_units(ExtractionConfig(root_path=str(tmp_path), workers=1))
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("ok.py", "extraction used more than 0 s of CPU time (the limit per file), stopped "
                  "after parsing")]
    assert result.units == []


def test_the_walk_visits_folders_as_os_walk_does(tmp_path: Path) -> None:
    for path in ("a/b/c", "a/d", "e", "f/g"):
        (tmp_path / path).mkdir(parents=True)
    for path in ("x.py", "a/y.py", "a/b/c/z.py", "f/g/w.py"):
        (tmp_path / path).write_text("")
    os.symlink(tmp_path / "a", tmp_path / "link")
    for follow in (False, True):
        ours = [(f.path, sorted(d.name for d in f.dirs), sorted(e.name for e in f.files))
                for f in walk_folders(str(tmp_path), follow_links=follow)]
        theirs = [(p, sorted(d), sorted(n))
                  for p, d, n in os.walk(str(tmp_path), followlinks=follow)]
        assert sorted(ours) == sorted(theirs)
    real = {f.rel: f.real for f in walk_folders(str(tmp_path), follow_links=True)}
    assert real["link/b"] == os.path.realpath(tmp_path / "a" / "b")
    assert real["a/b/c"] == os.path.join(os.path.realpath(tmp_path), "a", "b", "c")


def test_the_callee_name_is_found_as_a_full_search_finds_it() -> None:
    """``_trailing_name`` looks near the end first; it must agree with the regex."""
    rng = random.Random(7)
    alphabet = "ab_$1\u00e9.!?( )"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 5, 1100, 3000])))
        text += rng.choice(["x", "1", "\u00e9", "$", "1x"]) * rng.randint(0, 2100)
        text += rng.choice(["", "!", "?"])
        expected = _CALLEE_NAME.search(text)
        got = _trailing_name(text)
        assert (got and got.span()) == (expected and expected.span()), re.escape(text[-40:])
