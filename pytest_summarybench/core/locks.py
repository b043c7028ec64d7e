"""Waiting for a lock another process holds: the processes that hold it or have a file
open (read from ``/proc`` where there is one), and one way to take a ``filelock`` lock
that says once that it waits and for whom, and gives up at a deadline with one line.

Every file lock of the package is taken through :func:`acquire_file_lock` (the store's
extraction lock, a local model server's start lock), as every SQLite operation of the
store waits through ``store.database``: a lock file held by another process (a stuck
session, ``flock`` in a shell) used to hold a session silently for as long as it was held.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .errors import InputError
from .printable import shown_name, shown_path

#: After this long waiting, the process says once that it waits, and for whom (seconds).
NOTICE_S = 2.0
#: At most this many processes are named.
HOLDERS_SHOWN = 3
_POLL_S = 0.1


class LockWaitError(InputError, TimeoutError):
    """A lock file stayed held by another process past the wait; the message is one line
    naming the file, the holder when it can be known, and what to do."""


def _command(pid: int) -> str:
    """``pid N (its command line)``, or ``pid N`` when it cannot be read."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(400)
    except OSError:
        return f"pid {pid}"
    command = " ".join(raw.decode("utf-8", "replace").replace("\0", " ").split())
    command = command if len(command) <= 80 else command[:79] + "\u2026"
    return f"pid {pid} ({shown_name(command)})" if command else f"pid {pid}"


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def open_in(names: Iterable[str]) -> list[str]:
    """The other processes that have one of the files ``names`` (real paths) open, each as
    ``pid N (its command line)`` (empty where there is no ``/proc`` or where their file
    descriptors cannot be read)."""
    wanted = set(names)
    try:
        pids = sorted(int(d) for d in os.listdir("/proc") if d.isdigit())
    except OSError:
        return []
    found = []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue  # gone, or not ours to read
        if any(_readlink(f"/proc/{pid}/fd/{fd}") in wanted for fd in fds):
            found.append(_command(pid))
    return found


def lock_holders(path: str | Path) -> list[str]:
    """The processes that hold a ``flock``/``fcntl`` lock on ``path`` (``/proc/locks``),
    else those that have it open; each as ``pid N (its command line)``."""
    try:
        st = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read(1_000_000).splitlines()
    except OSError:
        lines = []
    else:
        key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
        pids = []
        for line in lines:
            fields = line.split()
            # "1: FLOCK  ADVISORY  WRITE 1234 00:2f:5678 0 EOF" ("->" marks a waiter)
            if len(fields) >= 6 and fields[1] != "->" and fields[5] == key \
                    and fields[4].isdigit() and int(fields[4]) != os.getpid():
                pids.append(int(fields[4]))
        if pids:
            return [_command(pid) for pid in sorted(set(pids))]
    return open_in([os.path.realpath(path)])


def held_by(found: list[str], how: str = "") -> str:
    """``held by another process ({how}pid 12 (...), ...)``, or without the list."""
    if not found:
        return "held by another process"
    more = f" and {len(found) - HOLDERS_SHOWN} more" if len(found) > HOLDERS_SHOWN else ""
    return f"held by another process ({how}{', '.join(found[:HOLDERS_SHOWN])}{more})"


def acquire_file_lock(lock_file: str | Path, *, wait_s: float,
                      notice: Callable[[str], None], what: str,
                      setting: str | None = None) -> Any:
    """The ``filelock`` lock ``lock_file``, acquired (the caller releases it). While another
    process holds it: after ``NOTICE_S`` one ``notice`` line names the file, ``what`` it
    guards and its holder; after ``wait_s`` seconds a ``LockWaitError`` line (``setting``,
    if any, names what sets the wait). An ``OSError`` creating the file is raised as it is."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_file))
    raise_it = f", or raise {setting}" if setting else ""
    started = time.monotonic()
    told = False
    while True:
        waited = time.monotonic() - started
        try:
            lock.acquire(timeout=min(_POLL_S, max(0.0, wait_s - waited)),
                         poll_interval=0.05)
            break
        except Timeout:
            waited = time.monotonic() - started
            if waited >= wait_s:
                raise LockWaitError(
                    f"lock file {shown_path(str(lock_file))} ({what}) stayed locked for "
                    f"{waited:.0f} s, {held_by(lock_holders(lock_file))}: wait for it to "
                    f"finish or stop it{raise_it}") from None
            if not told and waited >= NOTICE_S:
                told = True
                notice(f"summarybench: lock file {shown_path(str(lock_file))} ({what}) is "
                       f"{held_by(lock_holders(lock_file))}; waiting up to {wait_s:g} s"
                       + (f" ({setting})" if setting else ""))
    return lock
