"""The SQLite store: runs, units, summaries and evaluation records.

One file holds everything a report needs, so a report can be rebuilt and a run resumed
without calling a model again. SQLite in WAL mode with a busy timeout lets several
xdist workers read (and, for caches, write) while the controller writes; every write is a
short transaction that commits at once, so a killed process loses at most the row it was
writing.
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

from .schemas import BenchmarkRun, CodeUnit, GeneratedSummary, ScoreRecord

SCHEMA_VERSION = 1
T = TypeVar("T")

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
    """The store file cannot be opened or is not a summarybench store."""


class Store:
    """A summarybench SQLite store at ``path`` (created on first use)."""

    def __init__(self, path: str | Path, *, timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self._timeout_s = timeout_s
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._run_summaries: tuple[tuple[str, int, int],
                                   dict[tuple[str, str], GeneratedSummary | str]] | None = None

    # -- connection -------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=self._timeout_s,
                                       isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(f"PRAGMA busy_timeout={int(self._timeout_s * 1000)}")
                self._init_schema(conn)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"cannot open store {self.path}: {exc}") from exc
            self._conn = conn
        return self._conn

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
        """A write transaction that commits on exit (``BEGIN IMMEDIATE``, retried when busy)."""
        with self._lock:
            conn = self._connect()
            _retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    def execute(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        """Run a read query and return all rows."""
        with self._lock:
            return self._connect().execute(sql, tuple(params)).fetchall()

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
        return BenchmarkRun.model_validate_json(rows[0][0]) if rows else None

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
        return [CodeUnit.model_validate_json(r[0]) for r in rows]

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
        out: dict[tuple[str, str], GeneratedSummary | str] = {}
        for unit_id, model_id, text, error in rows:
            out[(unit_id, model_id)] = (GeneratedSummary.model_validate_json(text)
                                        if text else (error or "no summary generated"))
        with self._lock:
            self._run_summaries = (version, out)
        return dict(out)

    def get_summary(self, summary_id: str) -> GeneratedSummary | None:
        rows = self.execute("SELECT json FROM summaries WHERE id = ?", (summary_id,))
        return GeneratedSummary.model_validate_json(rows[0][0]) if rows else None

    def get_summaries(self, ids: Iterable[str]) -> dict[str, GeneratedSummary]:
        wanted = list(ids)
        found: dict[str, GeneratedSummary] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for (text,) in self.execute(
                    f"SELECT json FROM summaries WHERE id IN ({marks})", chunk):
                s = GeneratedSummary.model_validate_json(text)
                found[s.id] = s
        return found

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
        return [ScoreRecord.model_validate_json(r[0]) for r in self.execute(sql, params)]


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
