"""Files a user names, read and written as regular files only.

A path given to summarybench (a source file, ``summarybench.yaml``, a dataset, an
``--output``) may name a FIFO, a device, a folder or a link to any of them. Reading one
blocked (a FIFO without a writer) or never ended (``/dev/zero`` took 21.8 GB), and
writing one by a rename over it replaced it: ``report --output /dev/stdout`` turned the
machine's ``/dev/stdout`` link into a regular file. ``read_regular`` reads a regular file
with a byte limit kept while reading; ``target_kind`` says what a path to be replaced is
when it is anything but a regular file (a link included: a rename would replace the
link, not what it points to); ``create_fresh`` opens a new file under a name nothing
else holds.
"""

from __future__ import annotations

import os

from .errors import InputError
from .walk import file_kind

__all__ = ["UnreadableFile", "create_fresh", "read_regular", "target_kind"]

_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
"""Opening never blocks (a FIFO without a writer) nor takes a terminal as ours."""
_CHUNK = 1 << 20


class UnreadableFile(InputError, OSError):
    """A file that is not read, and why (``problem``: ``not a regular file: a FIFO (named
    pipe)``, ``file too large: ...``). An ``OSError`` too, as every other failure to
    read a file, so that callers catching those catch it."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem

    def __str__(self) -> str:
        return self.problem


def read_regular(path: str | os.PathLike[str], limit: int, *, limit_name: str = "") -> bytes:
    """The bytes of the regular file at ``path`` (a link is followed), at most ``limit``.

    Anything else is refused with its kind before it is opened and again after (it may
    have been replaced meanwhile). The limit is kept while reading, not by a size checked
    first: a device reports size 0, and a file may grow. ``limit_name`` names the limit
    in the message (``maxFileBytes``). Raises ``UnreadableFile``, or the ``OSError`` of
    a file that cannot be opened.
    """
    named = f"{limit_name} " if limit_name else ""
    kind = file_kind(os.stat(path).st_mode)
    if kind is not None:
        raise UnreadableFile(f"not a regular file: {kind}")
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        kind = file_kind(st.st_mode)
        if kind is not None:
            raise UnreadableFile(f"not a regular file: {kind}")
        if st.st_size > limit:
            raise UnreadableFile(f"file too large: {st.st_size} bytes > {named}{limit}")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnreadableFile(f"file too large: more than {named}{limit} bytes "
                                     "(it grew while read)")
    finally:
        os.close(fd)


def target_kind(path: str | os.PathLike[str]) -> str | None:
    """What is at ``path`` when a write must not replace it: ``a symbolic link``, ``a
    FIFO (named pipe)``, ``a character device``, ``a folder``...; None when nothing is
    there or a regular file is (a path that cannot be looked at is left to the write,
    which says why it fails)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return file_kind(mode)


def create_fresh(path: str | os.PathLike[str], mode: int = 0o666) -> int:
    """A file descriptor open for writing on a new file at ``path``: whatever was at that
    name is removed first, the file is created exclusively (``O_EXCL``) and a link there
    is not followed, so a FIFO or a link planted at the name cannot block the write or
    redirect it. For temporary names only: the caller renames the file into place."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                   | getattr(os, "O_CLOEXEC", 0), mode)
