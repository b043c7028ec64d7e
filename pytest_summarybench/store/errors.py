"""How the store fails: one ``StoreError`` line naming the file and what to do, for every
SQLite error (a damaged file, a full disk, a read-only directory, a lock held too long)
and every row that no longer parses."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..core.errors import InputError
from ..core.printable import shown_path


class StoreError(InputError, RuntimeError):
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
    shown = shown_path(path)  # pasted back into a shell by whoever reads the advice
    return StoreError(f"store {shown} {what} ({detail}): {advice.format(path=shown)}")
