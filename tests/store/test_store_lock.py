"""A store locked by another process (issue 34, the store): a bounded wait, one line
saying who holds it, then one ``StoreError`` line; a lock held briefly (another session's
short transaction) is waited for in silence."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_summarybench.store import Store, StoreError

LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


@contextlib.contextmanager
def _locked(path: Path, seconds: float, store: Store) -> Iterator[subprocess.Popen[bytes]]:
    """Another process holding ``path``'s write lock for ``seconds`` (killed at the end,
    when ``store`` is closed too)."""
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(path), str(seconds)],
                              stdout=subprocess.PIPE)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == b"locked\n"
        yield locker
    finally:
        locker.kill()
        locker.wait()
        store.close()


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "store.sqlite"
    Store(path).close()  # created, in WAL mode, with its tables
    return path


def test_a_long_lock_ends_in_one_line_naming_the_holder(tmp_path: Path) -> None:
    # Payload: another process holds the write lock for 120 s. Before: each attempt
    # waited SQLite's busy timeout (60 s) and was retried 20 times: a session waited as
    # long as the lock lasted (177 s for a 170 s lock), silently.
    path = _store(tmp_path)
    said: list[str] = []
    store = Store(path, timeout_s=3, notice=said.append)
    with _locked(path, 120, store) as locker:
        started = time.monotonic()
        with pytest.raises(StoreError) as caught:
            with store.transaction() as conn:
                conn.execute("INSERT INTO meta VALUES ('k', 'v')")
        elapsed = time.monotonic() - started
    assert 3 <= elapsed < 30, elapsed
    message = str(caught.value)
    assert message.startswith(f"store {path} stayed locked for ")
    assert f"held by another process (open in: pid {locker.pid} (" in message
    assert "use another --sb-store (output.storeWaitS" in message
    assert "\n" not in message
    assert len(said) == 1, said
    assert said[0].startswith(f"summarybench: store {path} is locked, held by another "
                              f"process (open in: pid {locker.pid} (")
    assert said[0].endswith("waiting up to 3 s (output.storeWaitS)")
    assert "\\n" not in said[0]  # the holder's command line on one line, no escapes


def test_a_process_that_gave_up_on_a_lock_does_not_wait_twice(tmp_path: Path) -> None:
    # A session stopped by the lock reads the store again on its way out: it waited the
    # whole wait a second time (two notices, twice the time).
    path = _store(tmp_path)
    said: list[str] = []
    store = Store(path, timeout_s=2.5, notice=said.append)
    with _locked(path, 120, store):
        with pytest.raises(StoreError):
            store.execute("SELECT 1")
        started = time.monotonic()
        with pytest.raises(StoreError, match="stayed locked"):
            store.execute("SELECT 1")
        assert time.monotonic() - started < 1
    assert len(said) == 1


def test_a_short_lock_is_waited_for_in_silence(tmp_path: Path) -> None:
    # Two sessions on one folder share the store: another's transaction of a second or so
    # is waited for, and nothing is printed.
    path = _store(tmp_path)
    said: list[str] = []
    store = Store(path, timeout_s=30, notice=said.append)
    with _locked(path, 1.0, store):
        with store.transaction() as conn:
            conn.execute("INSERT INTO meta VALUES ('k', 'v')")
        assert store.execute("SELECT value FROM meta WHERE key = 'k'") == [("v",)]
    assert said == []


def test_a_store_locked_before_it_is_opened_waits_boundedly_too(tmp_path: Path) -> None:
    # The lock taken before the session opens the store (its schema check needs a write).
    path = _store(tmp_path)
    store = Store(path, timeout_s=2, check=True, notice=lambda line: None)
    with _locked(path, 120, store):
        started = time.monotonic()
        with pytest.raises(StoreError, match="stayed locked"):
            store.execute("SELECT 1")
        assert time.monotonic() - started < 30
