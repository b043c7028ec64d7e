"""Attacks on the store and the output directory (issue 18, item 6): the session must fail
closed.

Each test damages a real store of a real run (or the directory the reports go to) and then
runs pytest with the plugin in a subprocess. What must hold afterwards: a non-zero exit
(4, pytest's usage error, for an unusable store or output directory; 1 for a gate), one
``ERROR: summarybench: ...`` line naming the file and what to do, no traceback and no
INTERNALERROR, a configured gate that never passes on a session that scored nothing or
stopped early, and an output folder whose published reports are byte for byte what they
were after a session that failed, was refused or was killed (publishing is all or
nothing, and the last thing a session does): its ``results.json`` is always that of the
last complete session that published.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.project import TEST_MODULE, run_session, session_results

CODE = {
    "shop/pricing.py": '''
        def apply_discount(price: float, pct: float) -> float:
            """Reduce a price by a percentage discount, never below zero."""
            cut = price * pct / 100
            return max(price - cut, 0.0)


        def add_tax(price: float, rate: float = 0.2) -> float:
            """Add value-added tax to a net price."""
            gross = price * (1 + rate)
            return round(gross, 2)
        ''',
}

# A deterministic evaluator (hook-provided): 1.0 when the summary shares a word with the
# unit's name. SB_FAIL=all makes every item an error, SB_FAIL=second fails the second
# item it scores (for -x), SB_KILL kills the process in the middle of the run, SB_NONE
# leaves the matrix empty.
EVALUATOR = '''
    import os

    from pytest_summarybench.evaluators import EvaluationError, Evaluator
    from pytest_summarybench.schemas import ScoreRecord

    SEEN = []


    class NameOverlap(Evaluator):
        name = "contrastive/embedding"
        family = "contrastive"

        def evaluate(self, item, ctx):
            SEEN.append(item.test_id)
            if os.environ.get("SB_KILL") and len(SEEN) == 3:
                os._exit(9)
            mode = os.environ.get("SB_FAIL")
            if mode == "all" or (mode == "second" and len(SEEN) == 2):
                raise EvaluationError("scripted failure")
            unit = ctx.unit(item.unit_id)
            summary = ctx.summary(item.unit_id, item.model_id).summary.lower()
            hit = any(w in summary for w in unit.short_name.lower().split("_"))
            return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                evaluator=self.name, metrics={"correct": float(hit)})]


    def pytest_summarybench_evaluators(config):
        return [] if os.environ.get("SB_NONE") else [NameOverlap()]
'''


def _write_project(root: Path, gate: str = "{minOverall: 0.99}", contrastive: bool = True,
                   output: str = "{}") -> None:
    for rel, text in CODE.items():
        path = root / "code" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    (root / "conftest.py").write_text(textwrap.dedent(EVALUATOR))
    (root / "test_bench.py").write_text(textwrap.dedent(TEST_MODULE))
    (root / "summarybench.yaml").write_text(textwrap.dedent(f"""
        name: store-attacks
        codebase: {{root: code, languages: [python]}}
        extraction: {{minLines: 2}}
        evaluation:
          sampling: all
          judge: {{enabled: false}}
          contrastive: {{enabled: {str(contrastive).lower()}}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        gate: {gate}
        output: {output}
        """))


def _project(pytester: pytest.Pytester, gate: str = "{minOverall: 0.99}",
             contrastive: bool = True, output: str = "{}") -> None:
    _write_project(pytester.path, gate, contrastive, output)


def _run(pytester: pytest.Pytester, *args: str, output: str = "out",
         env: dict[str, str] | None = None) -> pytest.RunResult:
    mp = pytest.MonkeyPatch()
    for key, value in (env or {}).items():
        mp.setenv(key, value)
    try:
        return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                             "--sb-output", output, *args, timeout=300)
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project after one healthy session (its gate fails: builtin/shuffled scores
    below 0.99; it leaves results.json behind), run once for the module: most attacks
    damage the store or the output folder of such a run, and each test takes a copy of it
    (``_healthy_copy``) instead of running that session again (a pytest session of its
    own, some 1.5 s of CPU each)."""
    project = tmp_path_factory.mktemp("healthy") / "project"
    project.mkdir()
    _write_project(project)
    result = run_session(project, "-p", "summarybench", "-p", "no:cacheprovider",
                         "--sb-output", "out")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["GATE FAILED: builtin/shuffled: overall * < gate.minOverall*"])
    return project


def _healthy_copy(pytester: pytest.Pytester, healthy: Path, output: str | None = None) -> dict:
    """This test's project: a copy of the healthy session's (its store, reports and
    files; with ``output``, its configuration's ``output`` section rewritten); the copied
    results.json."""
    shutil.copytree(healthy, pytester.path, dirs_exist_ok=True)
    if output is not None:
        _write_project(pytester.path, output=output)
    return json.loads((pytester.path / "out" / "results.json").read_text())


def _assert_one_error_line(result: pytest.RunResult, *needles: str) -> str:
    """Exactly one line says what failed, where and what to do; nothing else is a trace."""
    lines = result.stdout.lines + result.stderr.lines
    text = "\n".join(lines)
    assert "Traceback" not in text and "INTERNALERROR" not in text, text
    assert not [line for line in lines if line.startswith("E  ")], text
    errors = [line for line in lines if line.startswith("ERROR: summarybench:")]
    assert len(errors) == 1, text
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert len(errors[0]) < 600
    return errors[0]


def _assert_untouched(out: Path, previous: dict) -> None:
    """A session refused when its store was opened renamed nothing: the earlier session's
    reports are where they were, and no ``results.previous.json`` (a gate's baseline) was
    overwritten. The session's exit code (4) and its ERROR line say it did not run."""
    assert json.loads((out / "results.json").read_text()) == previous
    assert not (out / "results.previous.json").exists()
    assert not list(out.glob("*.tmp"))


_PUBLISHED = ("results.json", "report.md", "report.html", "explorer.html")


def _published(out: Path) -> dict[str, object]:
    """The output folder's published reports, their ``*.previous.*`` and any temporary
    file beside them: a regular file's bytes, else its kind (a FIFO is never opened)."""
    names = {*_PUBLISHED, "results.previous.json", "report.previous.md",
             "report.previous.html", "explorer.previous.html"}
    found: dict[str, object] = {}
    for path in sorted(out.iterdir()):
        if path.name in names or path.name.endswith((".tmp", ".old")):
            mode = os.lstat(path).st_mode
            found[path.name] = path.read_bytes() if stat.S_ISREG(mode) else stat.S_IFMT(mode)
    return found


def _data_pages(store: Path, tables: tuple[str, ...]) -> list[int]:
    with contextlib.closing(sqlite3.connect(store)) as conn:
        rows = conn.execute("SELECT name, pageno FROM dbstat").fetchall()
    return [page for name, page in rows if name in tables]


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_three_garbage_pages_stop_the_session(pytester: pytest.Pytester, healthy: Path,
                                              mode: list[str]) -> None:
    # Payload: three 4 KiB pages of random bytes in the tables a session reads first
    # (units, the run's unit list, summaries). Before: "1 skipped", exit 0, the gate that
    # fails on a healthy store passed, the old results.json stayed in place.
    previous = _healthy_copy(pytester, healthy)
    store = pytester.path / "out" / "store.sqlite"
    pages = _data_pages(store, ("units", "run_units", "summaries"))[:3]
    assert len(pages) == 3
    with open(store, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * 4096)
            fh.write(os.urandom(4096))

    result = _run(pytester, *mode)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _assert_one_error_line(result, str(store), "is damaged", "move it aside")
    result.stdout.no_fnmatch_line("*skipped*")
    # Refused when the store was opened: nothing in the output folder was renamed.
    _assert_untouched(pytester.path / "out", previous)


def test_truncated_store_is_one_line_with_advice(pytester: pytest.Pytester,
                                                 healthy: Path) -> None:
    # Payload: the store cut to half its size (a copy interrupted, a disk that filled up).
    # Before: a 30-line traceback and no advice.
    previous = _healthy_copy(pytester, healthy)
    store = pytester.path / "out" / "store.sqlite"
    os.truncate(store, store.stat().st_size // 2)

    result = _run(pytester)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _assert_one_error_line(result, str(store), "move it aside", "re-run")
    _assert_untouched(pytester.path / "out", previous)


def _refused_stores(out: Path) -> dict[str, tuple[Path, str]]:
    """Stores refused when they are opened, and what the ERROR line says of each."""
    folder = out / "folder.sqlite"
    folder.mkdir()
    fifo = out / "fifo.sqlite"
    os.mkfifo(fifo)
    noise = out / "noise.sqlite"
    noise.write_bytes(os.urandom(64 * 1024))
    newer = out / "newer.sqlite"
    newer.write_bytes((out / "store.sqlite").read_bytes())
    with contextlib.closing(sqlite3.connect(newer)) as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
        conn.commit()
    return {"a folder": (folder, "cannot be opened"), "a FIFO": (fifo, "I/O error"),
            "random bytes": (noise, "is not an SQLite database"),
            "schema version 999": (newer, "has schema version 999")}


def test_a_store_refused_when_opened_renames_nothing(pytester: pytest.Pytester,
                                                      healthy: Path) -> None:
    # Payload: the store is a folder, a FIFO, random bytes or a store of schema version
    # 999. Before: each session had already renamed results.json and both reports to
    # *.previous.*, overwriting results.previous.json, the gate's baseline.
    previous = _healthy_copy(pytester, healthy)
    out = pytester.path / "out"
    (out / "results.previous.json").write_text('{"the gate": "baseline"}')
    reports = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    for kind, (store, says) in _refused_stores(out).items():
        result = _run(pytester, "--sb-store", str(store))
        assert result.ret == pytest.ExitCode.USAGE_ERROR, kind
        _assert_one_error_line(result, str(store), says)
        assert json.loads((out / "results.json").read_text()) == previous, kind
        assert {p.name: p.read_bytes() for p in out.iterdir()
                if p.is_file() and p.name in reports} == reports, kind


def test_a_row_that_no_longer_parses_is_a_damaged_store(tmp_path: Path) -> None:
    # Payload: a unit row rewritten with garbage JSON (the b-tree intact, so SQLite's own
    # checks pass). Before: a pydantic ValidationError from deep inside the run.
    from pytest_summarybench.schemas import CodeUnit
    from pytest_summarybench.store import Store, StoreError

    store = Store(tmp_path / "store.sqlite")
    unit = CodeUnit.model_validate({"id": "u1", "path": "a.py", "name": "f",
                                    "type": "function", "language": "python",
                                    "content": "def f():\n    return 1\n",
                                    "metadata": {"startLine": 1, "endLine": 2}})
    store.save_units("run", [unit], {"u1"})
    with store.transaction() as conn:
        conn.execute("UPDATE units SET json = '{\"id\": 1' WHERE id = 'u1'")
    with pytest.raises(StoreError, match=r"store .*store\.sqlite holds a damaged row .*"
                                         r"move it aside"):
        store.load_units("run")
    store.close()


@contextlib.contextmanager
def _tmpfs(path: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at ``path`` (root only: the test is skipped otherwise)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """``path`` read-only: chmod for a normal user; root writes anywhere, so for root a
    read-only tmpfs holding the same files."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        try:
            yield
        finally:
            path.chmod(0o755)
        return
    saved = {p.name: p.read_bytes() for p in path.iterdir() if p.is_file()}
    with _tmpfs(path, "size=4m"):
        for name, data in saved.items():
            (path / name).write_bytes(data)
        subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)
        yield


def test_unwritable_output_directory_stops_before_the_run(pytester: pytest.Pytester) -> None:
    # Payload: the output directory is read-only (the store lives elsewhere, so the tests
    # could run). Before: the run went through and ended in a 150-line INTERNALERROR when
    # the reports were written.
    _project(pytester)
    store = str(pytester.path / "elsewhere" / "store.sqlite")
    _run(pytester, "--sb-store", store)
    out = pytester.path / "out"
    with _read_only(out):
        result = _run(pytester, "--sb-store", store)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _assert_one_error_line(result, str(out), "not writable", "--sb-output")
    assert "passed" not in result.stdout.str()  # stopped before any test ran


def test_store_in_a_read_only_directory_is_one_line(pytester: pytest.Pytester,
                                                     healthy: Path) -> None:
    # Payload: the store's own directory is read-only.
    _healthy_copy(pytester, healthy)
    out = pytester.path / "out"
    with _read_only(out):
        result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _assert_one_error_line(result, str(out / "store.sqlite"), "writable")


def _fill(directory: Path) -> None:
    with contextlib.suppress(OSError), open(directory / "filler", "wb") as fh:
        while True:
            fh.write(b"\0" * 4096)
            fh.flush()


def test_full_disk_for_the_reports_is_one_line_and_publishes_nothing(
        pytester: pytest.Pytester) -> None:
    # Payload: the output directory is a 512 KiB tmpfs, filled up after an earlier
    # session's reports were put there; the store is on another disk, so the tests run
    # and only the reports cannot be written. Before: INTERNALERROR, a results.json.tmp;
    # then the reports renamed *.previous.* and the folder left without a results.json.
    _project(pytester)
    store = str(pytester.path / "elsewhere" / "store.sqlite")
    _run(pytester, "--sb-store", store)
    out = pytester.path / "out"
    with _tmpfs(pytester.path / "full", "size=512k") as full:
        for name in _PUBLISHED:
            (full / name).write_bytes((out / name).read_bytes())
        before = _published(full)
        _fill(full)
        result = _run(pytester, "--sb-store", store, output="full")
        assert _published(full) == before
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        _assert_one_error_line(result, "cannot write the reports", str(full),
                               "No space left on device", "nothing was published",
                               "summarybench report")
        assert sorted(p.name for p in full.iterdir()) == sorted([*_PUBLISHED, "filler"])


def test_full_disk_for_the_store_and_the_reports_publishes_nothing(
        pytester: pytest.Pytester, healthy: Path) -> None:
    # Payload: a complete run's folder (store and reports) on an 8 MiB tmpfs, filled up
    # to 48 KiB free: the store opens, then cannot grow. Before: the ERROR line was right
    # (the disk is full) but results.json, report.md, report.html and explorer.html had
    # been renamed *.previous.*: the folder had no results.json.
    _healthy_copy(pytester, healthy)
    out = pytester.path / "out"
    with _tmpfs(pytester.path / "full", "size=8m") as full:
        for path in out.iterdir():
            if path.is_file():
                (full / path.name).write_bytes(path.read_bytes())
        before = _published(full)
        assert set(before) == set(_PUBLISHED)
        free = os.statvfs(full).f_bavail * os.statvfs(full).f_frsize
        with open(full / "filler", "wb") as fh:
            fh.write(b"\0" * max(free - 48 * 1024, 0))
        result = _run(pytester, output="full")
        assert _published(full) == before
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        _assert_one_error_line(result, str(full / "store.sqlite"))
        assert "nothing was published" in result.stdout.str() + result.stderr.str()


def test_a_fifo_and_a_folder_at_report_paths_publish_nothing(
        pytester: pytest.Pytester, healthy: Path) -> None:
    # Payload: results.json replaced by a FIFO and report.md by a folder, after two
    # complete sessions (so the *.previous.* exist too). Before: one good ERROR line, but
    # report.html and explorer.html renamed *.previous.* with no new ones, and
    # explorer.html.PID.tmp, report.html.PID.tmp and report.md.PID.tmp left behind.
    _healthy_copy(pytester, healthy)
    _run(pytester)
    out = pytester.path / "out"
    (out / "results.json").unlink()
    os.mkfifo(out / "results.json")
    (out / "report.md").unlink()
    (out / "report.md").mkdir()
    before = _published(out)
    assert {"report.html", "explorer.html", "results.previous.json"} <= set(before)
    result = _run(pytester)  # never opens the FIFO: runpytest_subprocess's timeout holds
    assert _published(out) == before
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    line = _assert_one_error_line(result, "cannot write the reports", "nothing was published",
                                  "summarybench report --run")
    assert "results.json there is a FIFO" in line, line


_LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(300)
"""


def test_a_store_locked_by_another_process_is_one_line_in_bounded_time(
        pytester: pytest.Pytester, healthy: Path) -> None:
    # Payload: another process holds the store's write lock (BEGIN EXCLUSIVE) for 300 s
    # while a session starts; output.storeWaitS is 4. Before: the session waited as long
    # as the lock lasted (177 s for a 170 s lock), printing nothing.
    _healthy_copy(pytester, healthy, output="{storeWaitS: 4}")
    out = pytester.path / "out"
    before = _published(out)
    locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(out / "store.sqlite")],
                              stdout=subprocess.PIPE)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == b"locked\n"
        started = time.monotonic()
        result = _run(pytester)
        elapsed = time.monotonic() - started
    finally:
        locker.kill()
        locker.wait()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _assert_one_error_line(result, str(out / "store.sqlite"), "stayed locked",
                           f"held by another process (open in: pid {locker.pid} (",
                           "output.storeWaitS")
    text = result.stdout.str() + result.stderr.str()
    assert text.count(f"summarybench: store {out / 'store.sqlite'} is locked, held by "
                      f"another process (open in: pid {locker.pid}") == 1, text
    assert "waiting up to 4 s (output.storeWaitS)" in text
    assert elapsed < 120, elapsed  # a session of its own takes ~10 s; the lock, 300 s
    assert _published(out) == before


def test_full_disk_for_the_store_is_one_line(pytester: pytest.Pytester) -> None:
    # Payload: the store and the output directory on a full 64 KiB tmpfs.
    _project(pytester)
    with _tmpfs(pytester.path / "full", "size=64k") as full:
        _fill(full)
        result = _run(pytester, output="full")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        _assert_one_error_line(result, str(full / "store.sqlite"), "disk is full")


# -- the gate never passes on a run that did not score -----------------------------------
def test_gate_fails_when_nothing_was_scored(pytester: pytest.Pytester) -> None:
    # Payload: no evaluator can run, so the matrix is one skipped placeholder. Before:
    # exit 0 with "1 skipped", the gate silently passed.
    _project(pytester, gate="{minOverall: 0.5}", contrastive=False)
    result = _run(pytester, env={"SB_NONE": "1"})
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["GATE FAILED: no unit was scored in this session *"])
    assert not (pytester.path / "out" / "results.json").exists()


def test_gate_fails_when_every_item_errored(pytester: pytest.Pytester) -> None:
    # Payload: every evaluation fails, and the gate has only a family threshold (which
    # had nothing to compare). Before: gateFailures was empty, the gate "passed".
    _project(pytester, gate="{minFamily: {contrastive: 0.5}}")
    result = _run(pytester, env={"SB_FAIL": "all"})
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["GATE FAILED: no unit was scored in this run *"])
    # Nothing scored: a partial run, whose report is in its own run folder.
    data = session_results(result)
    assert data["metadata"]["run"]["complete"] is False
    assert any("no unit was scored" in msg for msg in data["gateFailures"])
    assert data["gateFailures"][0].startswith("the run is unhealthy (")


def test_gate_fails_when_the_session_stopped_early(pytester: pytest.Pytester) -> None:
    # Payload: -x stops the session at its second item; the gate's threshold (0.0) holds
    # for what was scored. Before: gateFailures was empty for a run of one item in ten.
    _project(pytester, gate="{minOverall: 0.0}")
    result = _run(pytester, "-x", env={"SB_FAIL": "second"})
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["GATE FAILED: the session stopped early (*"])
    # A session stopped early is a partial run: its report is in its own run folder.
    (path,) = (pytester.path / "out" / "runs").glob("*/results.json")
    data = json.loads(path.read_text())
    assert data["metadata"]["run"]["complete"] is False
    assert any("stopped early" in msg for msg in data["gateFailures"])


def test_a_killed_session_leaves_the_previous_results_in_place(
        pytester: pytest.Pytester, healthy: Path) -> None:
    # Payload: the process dies in the middle of evaluation (os._exit, as an OOM kill
    # would). The output folder's results.json is that of the last complete session that
    # finished: the earlier one's, untouched (the reports used to be renamed when
    # evaluation started, and a killed or hung session left the folder without any).
    previous = _healthy_copy(pytester, healthy)
    result = _run(pytester, env={"SB_KILL": "1"})
    assert result.ret == 9
    _assert_untouched(pytester.path / "out", previous)
