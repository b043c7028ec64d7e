"""The store's file: one SQLite connection per process in WAL mode, short write
transactions, reads, and every failure turned into a ``StoreError`` (``errors.py``).

Several processes share a store (xdist workers, two sessions on one output folder): a
process that finds it locked waits, in short steps, for at most ``timeout_s`` seconds in
all (``output.storeWaitS``, default 60) per operation, not SQLite's busy timeout once per
retry (a store held by another process for 170 s used to hold the session silently for
177 s). After ``NOTICE_S`` seconds of waiting it says so once, naming the store and the
processes that have it open (read from ``/proc`` where there is one); at the deadline it
fails with one ``StoreError`` line (exit code 4 in a pytest session, 2 from the command
line)."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ..core.locks import NOTICE_S, held_by, open_in
from ..core.printable import shown_name, shown_path
from .errors import _DAMAGED, _UNWRITABLE, StoreError, store_error
from .schema import SCHEMA, SCHEMA_VERSION

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: How long one store operation waits for a lock another process holds (seconds).
DEFAULT_WAIT_S = 60.0
#: SQLite's own busy wait per attempt; the deadline and the notice are checked between.
_STEP_S = 0.25


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Database:
    """An SQLite file at ``path`` with every table of ``schema.py`` (created on first
    use): connection, transactions and reads, failing closed."""

    def __init__(self, path: str | Path, *, timeout_s: float = DEFAULT_WAIT_S,
                 check: bool = False, notice: Callable[[str], None] | None = None) -> None:
        """``check``: run SQLite's ``quick_check`` when the file is first opened, so that a
        damaged store stops the session before anything reads half of it. The controller
        does (workers do not: it has checked the file by then); on the 208 MB store of a
        10,000-unit run it costs 0.17 s CPU from a warm page cache, 3 to 5 s wall from a
        cold disk (docs/performance.md).

        ``timeout_s``: how long an operation waits for another process's lock before it
        fails; ``notice``: where the line saying that it waits goes (default stderr)."""
        self.path = Path(path)
        self._timeout_s = timeout_s
        self._check = check
        self._notice = notice or _say
        self._gave_up: StoreError | None = None
        """The lock this process waited for in vain: later operations fail at once."""
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
                conn = sqlite3.connect(self.path, timeout=_STEP_S,
                                       isolation_level=None, check_same_thread=False)
                opened = conn
                if self._check:
                    self._waiting(lambda: self._quick_check(opened))
                self._waiting(lambda: opened.execute("PRAGMA journal_mode=WAL"))
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(f"PRAGMA busy_timeout={int(_STEP_S * 1000)}")
                self._waiting(lambda: self._init_schema(opened))
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
        conn.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")
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
        """A write transaction that commits on exit (``BEGIN IMMEDIATE``, waiting while
        another process holds the lock: ``_waiting``).

        An SQLite error inside it, its own or the caller's, rolls back and comes out as a
        ``StoreError``."""
        with self._lock:
            conn = self._connect()
            try:
                self._waiting(lambda: conn.execute("BEGIN IMMEDIATE"))
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
                return self._waiting(lambda: conn.execute(sql, tuple(params)).fetchall())
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
                                   timeout=_STEP_S, check_same_thread=False)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None
        try:
            cursor = self._waiting(lambda: conn.execute(sql, tuple(params)))
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

    def _waiting(self, fn: Callable[[], T]) -> T:
        """``fn()``, tried again while another process holds the store's lock, for at most
        ``timeout_s`` seconds; after ``NOTICE_S`` one line says who it waits for; at the
        deadline a ``StoreError`` line. Any other SQLite error is raised as it is."""
        if self._gave_up is not None:
            raise self._gave_up  # a session that stopped on a lock does not wait twice
        started = time.monotonic()
        told = False
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise
                waited = time.monotonic() - started
                if waited >= self._timeout_s:
                    self._gave_up = StoreError(
                        f"store {shown_path(self.path)} stayed locked for {waited:.0f} s, "
                        f"{_held_by(self.path)}: wait for it to finish, or use another "
                        "--sb-store (output.storeWaitS sets how long a session waits)")
                    raise self._gave_up from None
                if not told and waited >= NOTICE_S:
                    told = True
                    self._notice(f"summarybench: store {shown_path(self.path)} is locked, "
                                 f"{_held_by(self.path)}; waiting up to "
                                 f"{self._timeout_s:g} s (output.storeWaitS)")
                time.sleep(0.05)


def _busy(exc: sqlite3.OperationalError) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def holders(path: Path) -> list[str]:
    """The other processes that have the store (or its ``-wal``, ``-shm``, ``-journal``)
    open, each as ``pid N (its command line)`` (``core/locks.py``). SQLite does not say
    which of them holds the lock; one of them does."""
    real = os.path.realpath(path)
    return open_in([real, *(real + tail for tail in ("-wal", "-shm", "-journal"))])


def _held_by(path: Path) -> str:
    """``held by another process (open in: pid 12 (...), ...)``, or without the list."""
    return held_by(holders(path), "open in: ")
