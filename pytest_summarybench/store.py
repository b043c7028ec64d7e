"""The SQLite store: runs, units, summaries and evaluation records.

One file holds everything a report needs, so a report can be rebuilt and a run resumed
without calling a model again. SQLite in WAL mode with a busy timeout lets several
xdist workers read (and, for caches, write) while the controller writes; every write is a
short transaction that commits at once, so a killed process loses at most the row it was
writing.

The store fails closed: every SQLite error (a damaged file, a full disk, a read-only
directory, a lock held too long) and every row that no longer parses comes out as one
``StoreError`` naming the file and what to do, never as a half-read run.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from .schemas import BenchmarkRun, CodeUnit, GeneratedSummary, ScoreRecord

SCHEMA_VERSION = 1
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    json TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS units (
    id TEXT PRIMARY KEY,
    json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_units (
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    unit_id TEXT NOT NULL,
    sampled INTEGER NOT NULL,
    PRIMARY KEY (run_id, unit_id)
);
CREATE TABLE IF NOT EXISTS run_summaries (
    run_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    summary_id TEXT,
    error TEXT,
    PRIMARY KEY (run_id, unit_id, model_id)
);
CREATE TABLE IF NOT EXISTS summaries (
    id TEXT PRIMARY KEY,
    unit_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS summaries_by_model ON summaries (model_id, unit_id);
CREATE TABLE IF NOT EXISTS records (
    run_id TEXT NOT NULL,
    nodeid TEXT NOT NULL,
    seq INTEGER NOT NULL,
    benchmark TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    evaluator TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, nodeid, seq)
);
CREATE INDEX IF NOT EXISTS records_by_run ON records (run_id, benchmark);
"""


class StoreError(RuntimeError):
    """The store cannot be used (damaged, not a summarybench store, unwritable, full or
    locked); the message is one line naming the file and what to do."""


#: What to do, by SQLite's primary result code (``sqlite3.Error.sqlite_errorname``).
_DAMAGED = ("move it aside (mv {path} {path}.damaged) and re-run: a new store is created, "
            "and the summaries, scores and cached model answers it held are lost (models "
            "are called again)")
_UNWRITABLE = ("make it and its directory writable, or point --sb-store (output.store) at "
               "a writable path")
_ADVICE = {
    "SQLITE_CORRUPT": ("is damaged", _DAMAGED),
    "SQLITE_NOTADB": ("is not an SQLite database", _DAMAGED),
    "SQLITE_FULL": ("cannot grow: the disk is full",
                    "free space on its disk, or point --sb-store (output.store) elsewhere"),
    "SQLITE_READONLY": ("is read-only", _UNWRITABLE),
    "SQLITE_CANTOPEN": ("cannot be opened", _UNWRITABLE),
    "SQLITE_PERM": ("cannot be written", _UNWRITABLE),
    "SQLITE_IOERR": ("cannot be read or written (I/O error)",
                     "check its disk (full? read-only? removed?) and re-run"),
    "SQLITE_BUSY": ("stayed locked by another process",
                    "wait for the other run to finish, or use another --sb-store"),
    "SQLITE_LOCKED": ("stayed locked by another process",
                      "wait for the other run to finish, or use another --sb-store"),
}
# Python 3.10 has no sqlite_errorname: the same codes, recognised by their messages.
_MESSAGES = {
    "malformed": "SQLITE_CORRUPT", "not a database": "SQLITE_NOTADB",
    "is full": "SQLITE_FULL", "readonly": "SQLITE_READONLY",
    "unable to open": "SQLITE_CANTOPEN", "disk i/o": "SQLITE_IOERR", "locked": "SQLITE_BUSY",
}


def store_error(path: Path, exc: BaseException) -> BaseException:
    """The one-line ``StoreError`` for an SQLite error (or an unparsable row) on ``path``;
    a constraint or SQL error is a bug of ours, not of the file, and is returned as is."""
    if isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError,
                        sqlite3.InterfaceError)):
        return exc
    detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", None) or ""
        primary = "_".join(name.split("_")[:2])
        if primary not in _ADVICE:
            lowered = detail.lower()
            primary = next((code for text, code in _MESSAGES.items() if text in lowered), "")
        what, advice = _ADVICE.get(primary, ("failed", "if it happens again, " + _DAMAGED))
    else:  # a row whose JSON no longer parses: the file was changed under us
        what, advice = "holds a damaged row", _DAMAGED
    return StoreError(f"store {path} {what} ({detail}): {advice.format(path=path)}")


class Store:
    """A summarybench SQLite store at ``path`` (created on first use)."""

    def __init__(self, path: str | Path, *, timeout_s: float = 60.0,
                 check: bool = False) -> None:
        """``check``: run SQLite's ``quick_check`` when the file is first opened, so that a
        damaged store stops the session before anything reads half of it. The controller
        does (workers do not: it has checked the file by then); on the 208 MB store of a
        10,000-unit run it costs 0.17 s CPU from a warm page cache, 3 to 5 s wall from a
        cold disk (docs/performance.md)."""
        self.path = Path(path)
        self._timeout_s = timeout_s
        self._check = check
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._run_summaries: tuple[tuple[str, int, int],
                                   dict[tuple[str, str], GeneratedSummary | str]] | None = None

    # -- connection -------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the store's directory {self.path.parent} "
                    f"({exc.strerror or exc}): {_UNWRITABLE}") from None
            conn: sqlite3.Connection | None = None
            try:
                conn = sqlite3.connect(self.path, timeout=self._timeout_s,
                                       isolation_level=None, check_same_thread=False)
                if self._check:
                    self._quick_check(conn)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(f"PRAGMA busy_timeout={int(self._timeout_s * 1000)}")
                self._init_schema(conn)
            except (sqlite3.Error, StoreError) as exc:
                if conn is not None:
                    conn.close()
                if isinstance(exc, StoreError):
                    raise
                raise store_error(self.path, exc) from None
            self._conn = conn
        return self._conn

    def _quick_check(self, conn: sqlite3.Connection) -> None:
        """SQLite's structural check of every page (no index-content comparison): garbage
        pages and truncation are found here, before the run reads half of them."""
        problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            problem = " ".join(str(problem).split())[:200]  # SQLite's text has newlines
            raise StoreError(f"store {self.path} is damaged (quick_check: {problem}): "
                             f"{_DAMAGED.format(path=self.path)}")

    def _init_schema(self, conn: sqlite3.Connection) -> None:
        _retry(lambda: conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;"))
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
        elif int(row[0]) != SCHEMA_VERSION:
            raise StoreError(
                f"store {self.path} has schema version {row[0]}, this summarybench needs "
                f"{SCHEMA_VERSION}; use a new --sb-store path")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that commits on exit (``BEGIN IMMEDIATE``, retried when busy).

        An SQLite error inside it, its own or the caller's, rolls back and comes out as a
        ``StoreError``."""
        with self._lock:
            conn = self._connect()
            try:
                _retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            except sqlite3.Error as exc:
                raise store_error(self.path, exc) from None
            try:
                yield conn
            except BaseException as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # SQLite already rolled back (a full disk does); keep the cause
                if isinstance(exc, sqlite3.Error):
                    raise store_error(self.path, exc) from None
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise store_error(self.path, exc) from None

    def execute(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        """Run a read query and return all rows."""
        with self._lock:
            conn = self._connect()
            try:
                return conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                raise store_error(self.path, exc) from None

    def parse(self, model: type[M], text: str) -> M:
        """A stored row's JSON as ``model``; a row that no longer parses is a damaged
        store (``StoreError``), not a validation error deep in a report."""
        try:
            return model.model_validate_json(text)
        except ValueError as exc:
            raise store_error(self.path, exc) from None

    def ensure_table(self, ddl: str) -> None:
        """Create a table (or index) that another module owns, e.g. a cache."""
        with self.transaction() as conn:
            conn.execute(ddl)

    def close(self) -> None:
        with self._lock:
            self._run_summaries = None  # its version numbers belong to the connection
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- runs -------------------------------------------------------------------------
    def save_run(self, run: BenchmarkRun) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?)",
                         (run.id, run.model_dump_json(by_alias=True), time.time()))

    def load_run(self, run_id: str) -> BenchmarkRun | None:
        rows = self.execute("SELECT json FROM runs WHERE id = ?", (run_id,))
        return self.parse(BenchmarkRun, rows[0][0]) if rows else None

    def latest_run_id(self) -> str | None:
        rows = self.execute("SELECT id FROM runs ORDER BY updated_at DESC LIMIT 1")
        return rows[0][0] if rows else None

    # -- units ------------------------------------------------------------------------
    def save_units(self, run_id: str, units: list[CodeUnit], sampled: set[str]) -> None:
        """Store every extracted unit of the run, in order, flagging the sampled ones
        (replacing any previous list for the run)."""
        with self.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO units VALUES (?, ?)",
                             [(u.id, u.model_dump_json(by_alias=True)) for u in units])
            conn.execute("DELETE FROM run_units WHERE run_id = ?", (run_id,))
            conn.executemany("INSERT INTO run_units VALUES (?, ?, ?, ?)",
                             [(run_id, i, u.id, int(u.id in sampled))
                              for i, u in enumerate(units)])

    def load_units(self, run_id: str, *, sampled_only: bool = False) -> list[CodeUnit]:
        sql = ("SELECT u.json FROM run_units r JOIN units u ON u.id = r.unit_id "
               "WHERE r.run_id = ?")
        if sampled_only:
            sql += " AND r.sampled = 1"
        rows = self.execute(sql + " ORDER BY r.position", (run_id,))
        return [self.parse(CodeUnit, r[0]) for r in rows]

    def sampled_unit_ids(self, run_id: str) -> list[str]:
        rows = self.execute("SELECT unit_id FROM run_units WHERE run_id = ? AND sampled = 1 "
                            "ORDER BY position", (run_id,))
        return [r[0] for r in rows]

    # -- summaries --------------------------------------------------------------------
    def save_summary(self, summary: GeneratedSummary) -> None:
        self.save_summaries([summary])

    def save_summaries(self, summaries: list[GeneratedSummary]) -> None:
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?)",
                [(s.id, s.code_unit_id, s.model_id, s.model_dump_json(by_alias=True))
                 for s in summaries])

    def link_summary(self, run_id: str, unit_id: str, model_id: str,
                     summary_id: str | None, error: str | None = None) -> None:
        """Record which summary (or which error) a run uses for a unit and model."""
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO run_summaries VALUES (?, ?, ?, ?, ?)",
                         (run_id, unit_id, model_id, summary_id, error))

    def run_summaries(self, run_id: str) -> dict[tuple[str, str], GeneratedSummary | str]:
        """(unit_id, model_id) -> the summary the run uses, or the generation error text.

        The last answer is kept until the database changes: the controller reads every
        summary of a run twice (generation checks what is linked, then the run's context),
        and parsing 10,000 summaries again was a visible share of a cached re-run. Each
        call gets its own dict; the summaries in it are shared, and read-only.
        """
        with self._lock:
            conn = self._connect()
            try:
                # total_changes counts this connection's writes; data_version changes when
                # another connection (another process) commits.
                version = (run_id, conn.total_changes,
                           conn.execute("PRAGMA data_version").fetchone()[0])
                if self._run_summaries is not None and self._run_summaries[0] == version:
                    return dict(self._run_summaries[1])
                rows = conn.execute(
                    "SELECT r.unit_id, r.model_id, s.json, r.error FROM run_summaries r "
                    "LEFT JOIN summaries s ON s.id = r.summary_id WHERE r.run_id = ?",
                    (run_id,)).fetchall()
            except sqlite3.Error as exc:
                raise store_error(self.path, exc) from None
        out: dict[tuple[str, str], GeneratedSummary | str] = {}
        for unit_id, model_id, text, error in rows:
            out[(unit_id, model_id)] = (self.parse(GeneratedSummary, text)
                                        if text else (error or "no summary generated"))
        with self._lock:
            self._run_summaries = (version, out)
        return dict(out)

    # -- records ----------------------------------------------------------------------
    def save_records(self, run_id: str, nodeid: str, records: list[ScoreRecord]) -> None:
        """Replace the records of one test (so a re-run of a test overwrites, not adds)."""
        self.save_records_batch(run_id, [(nodeid, records)])

    def save_records_batch(self, run_id: str,
                           tests: list[tuple[str, list[ScoreRecord]]]) -> None:
        """``save_records`` for many tests in one transaction (a later entry for the same
        test replaces an earlier one)."""
        self.save_record_rows(run_id, [(nodeid, [record_row(r) for r in records])
                                       for nodeid, records in tests])

    def save_record_rows(self, run_id: str, tests: list[tuple[str, list[RecordRow]]]) -> None:
        """``save_records_batch`` for records already made rows by ``record_row``."""
        with self.transaction() as conn:
            conn.executemany("DELETE FROM records WHERE run_id = ? AND nodeid = ?",
                             [(run_id, nodeid) for nodeid, _ in tests])
            latest = dict(tests)
            conn.executemany(
                "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, nodeid, i, *row)
                 for nodeid, rows in latest.items() for i, row in enumerate(rows)])

    def load_records(self, run_id: str, benchmark: str | None = None) -> list[ScoreRecord]:
        sql = "SELECT json FROM records WHERE run_id = ?"
        params: list[object] = [run_id]
        if benchmark is not None:
            sql += " AND benchmark = ?"
            params.append(benchmark)
        sql += " ORDER BY nodeid, seq"
        return [self.parse(ScoreRecord, r[0]) for r in self.execute(sql, params)]


#: A record as the store keeps it: benchmark, unit id, model id, evaluator and its JSON.
RecordRow = tuple[str, str, str, str, str]


def record_row(record: ScoreRecord) -> RecordRow:
    """The record's row in the store; ``ScoreRecord.model_validate_json`` reads its JSON."""
    return (record.benchmark, record.unit_id, record.model_id, record.evaluator,
            record.model_dump_json(by_alias=True))


def _retry(fn: Callable[[], T], attempts: int = 20, delay_s: float = 0.05) -> T:
    """Run ``fn`` again when the database stayed locked beyond the busy timeout."""
    for attempt in range(attempts):
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(delay_s * (attempt + 1))
    raise AssertionError("unreachable")


def dumps(obj: object) -> str:
    """Compact, key-sorted JSON for hashing and storage."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
