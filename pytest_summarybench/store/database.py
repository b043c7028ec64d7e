"""The store's file: one SQLite connection per process in WAL mode with a busy timeout,
short write transactions retried while another process holds the lock, reads, and every
failure turned into a ``StoreError`` (``errors.py``)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ..core.printable import shown_name, shown_path
from .errors import _DAMAGED, _UNWRITABLE, StoreError, store_error
from .schema import SCHEMA, SCHEMA_VERSION

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class Database:
    """An SQLite file at ``path`` with every table of ``schema.py`` (created on first
    use): connection, transactions and reads, failing closed."""

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

    # -- connection -------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the store's directory {shown_path(self.path.parent)} "
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
            raise StoreError(f"store {shown_path(self.path)} is damaged (quick_check: "
                             f"{problem}): {_DAMAGED.format(path=shown_path(self.path))}")

    def _init_schema(self, conn: sqlite3.Connection) -> None:
        _retry(lambda: conn.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;"))
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
        elif str(row[0]) != str(SCHEMA_VERSION):
            # The file's own text (a version, or anything): bounded and escaped.
            found = shown_name(str(row[0])[:40])
            raise StoreError(
                f"store {shown_path(self.path)} has schema version {found}, this "
                f"summarybench needs {SCHEMA_VERSION}; use a new --sb-store path")

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

    def stream(self, sql: str, params: Iterable[object] = (),
               size: int = 1000) -> Iterator[list[tuple]]:
        """Run a read query and yield its rows ``size`` at a time, so that a caller holds
        one chunk, not the result (on a connection of its own, read-only: the process's
        connection stays free for other threads meanwhile)."""
        self._connect()  # the file exists and has its tables
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                   timeout=self._timeout_s, check_same_thread=False)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None
        try:
            cursor = conn.execute(sql, tuple(params))
            while True:
                rows = cursor.fetchmany(size)
                if not rows:
                    return
                yield rows
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None
        finally:
            conn.close()

    def parse(self, model: type[M], text: str) -> M:
        """A stored row's JSON as ``model``; a row that no longer parses is a damaged
        store (``StoreError``), not a validation error deep in a report."""
        try:
            return model.model_validate_json(text)
        except ValueError as exc:
            raise store_error(self.path, exc) from None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


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
