"""Walking a folder tree without recursion, each folder's resolved path computed as it goes.

``os.walk`` recurses once per folder level before Python 3.12 (a tree 2,000 folders deep
ended in a RecursionError), and resolving every path with ``os.path.realpath`` costs a
system call per component, so a deep tree cost time quadratic in its depth. Here a stack
holds the folders still to visit, and a folder's resolved path is its parent's plus its
name unless it is a symlink (only links are resolved).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass
class Folder:
    """One folder of the walk: what it holds, and where it is."""

    path: str
    """As reached from the top (joined with ``os.sep``; symlinks not resolved)."""
    rel: str
    """Relative to the top, with ``/`` between parts; ``""`` for the top itself."""
    real: str
    """Resolved path (symlinks followed)."""
    dirs: list[os.DirEntry[str]]
    """Sub-folders (symlinks to folders included), in the order the system listed them.
    The caller may reorder or remove entries in place: only those left are visited, in
    that order."""
    files: list[os.DirEntry[str]]
    """Everything else: files, and links, FIFOs, devices and sockets named like files."""

    def child_rel(self, name: str) -> str:
        return f"{self.rel}/{name}" if self.rel else name


def walk_folders(top: str, *, follow_links: bool = False,
                 on_error: Callable[[OSError], None] | None = None) -> Iterator[Folder]:
    """Every folder under ``top`` (itself first), depth first and top down, as ``os.walk``
    visits them, without recursion.

    :param follow_links: visit folders reached through symlinks (the caller guards
        against loops, e.g. by ``Folder.real``).
    :param on_error: told of a folder that cannot be listed (then skipped).
    """
    stack: list[tuple[str, str, str]] = [(top, "", os.path.realpath(top))]
    while stack:
        path, rel, real = stack.pop()
        try:
            with os.scandir(path) as listing:
                entries = list(listing)
        except OSError as exc:
            if on_error is not None:
                on_error(exc)
            continue
        dirs: list[os.DirEntry[str]] = []
        files: list[os.DirEntry[str]] = []
        for entry in entries:
            (dirs if _is_dir(entry) else files).append(entry)
        folder = Folder(path, rel, real, dirs, files)
        yield folder
        for entry in reversed(folder.dirs):
            link = entry.is_symlink()
            if link and not follow_links:
                continue
            child_real = os.path.realpath(entry.path) if link \
                else os.path.join(real, entry.name)
            stack.append((entry.path, folder.child_rel(entry.name), child_real))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"))


def file_kind(mode: int) -> str | None:
    """What a non-regular file is (``a FIFO (named pipe)``...; ``a symbolic link`` for a
    mode from ``lstat``); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"
