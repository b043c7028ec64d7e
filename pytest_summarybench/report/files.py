"""Report files on disk: each format's file name, and publishing a session's reports all
or nothing (``publish``: every new file written first, then the earlier session's moved
aside and the new ones moved in; on any failure the folder is left as it was)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..core.errors import InputError
from ..core.printable import shown_path
from ..core.regular import create_fresh, target_kind

#: File name of each format inside the output directory.
FILE_NAMES = {"json": "results.json", "markdown": "report.md", "html": "report.html"}
#: The explorer's page, written beside report.html (``report/explorer.py``).
EXPLORER_FILE = "explorer.html"
#: Every file a session publishes in the output directory, in the order it moves them.
PUBLISHED = (*FILE_NAMES.values(), EXPLORER_FILE)


class PublishRefused(InputError, OSError):
    """A published path (or where its earlier version goes) is something publishing must
    not replace: a folder, a FIFO, a device, a socket. Nothing was written. An input
    error (the output folder's content), and an ``OSError`` as every other failure to
    write the reports, which the session's end catches as one."""


def write_temporary(path: Path, text: str) -> Path:
    """``text`` in a temporary file beside ``path``, flushed to disk (none is left behind
    when writing fails, e.g. on a full disk). The temporary name is created afresh
    (``O_EXCL``, not following a link): whatever was at that name is removed first, and a
    FIFO there cannot block the write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = create_fresh(tmp)
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file: a reader sees the old file or
    the whole new one, never half. Only a regular file or nothing is replaced
    (``PublishRefused`` otherwise, nothing written)."""
    _check_replaceable(path)
    os.replace(write_temporary(path, text), path)
    return path


def previous_name(name: str) -> str:
    """Where ``publish`` moves an earlier report: ``results.json`` -> ``results.previous.json``."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.previous.{ext}" if dot else f"{name}.previous"


def publish(output_dir: Path, texts: Mapping[str, str], *, copies: Iterable[Path] = (),
            rotate: bool = True) -> dict[str, Path]:
    """Publish ``texts`` (file name -> text) in ``output_dir`` and in each of ``copies``,
    all or nothing; file name -> its path in ``output_dir``.

    The one place that replaces a session's published files: (1) every path it will
    replace or move is checked to be a regular file or absent (a symbolic link, folder,
    FIFO, device or socket there is a ``PublishRefused`` naming it; nothing is opened, so
    a FIFO cannot block; a rename over a link would replace the link the user made);
    (2) every new file is written to a temporary name and flushed to disk; (3) only
    then, with ``rotate``, each earlier file of ``PUBLISHED`` is renamed to its
    ``previous_name`` (the older ``*.previous.*`` are replaced) and the new files are
    renamed in. A failure at any step removes the temporaries and undoes the renames
    already made, so the folder's published files are byte for byte what they were.
    A reader sees the old set or the new one; a process killed before (3) leaves the old
    set in place.
    """
    directories = [output_dir, *copies]
    for directory in directories:
        names = [*texts, *(previous_name(n) for n in PUBLISHED)] \
            if rotate and directory == output_dir else list(texts)
        for name in names:
            _check_replaceable(directory / name)
    written: dict[Path, Path] = {}
    try:
        for directory in directories:
            for name, text in texts.items():
                target = directory / name
                written[target] = write_temporary(target, text)
    except BaseException:
        for tmp in written.values():
            tmp.unlink(missing_ok=True)
        raise
    moves: list[tuple[Path, Path]] = []  # each rename made, (from, to), to undo in reverse
    backups: list[Path] = []
    try:
        if rotate:
            for name in PUBLISHED:
                path = output_dir / name
                if not os.path.lexists(path):
                    continue
                previous = output_dir / previous_name(name)
                if os.path.lexists(previous):
                    # kept aside until the new set is in: undoing restores it too
                    backup = previous.with_name(f"{previous.name}.{os.getpid()}.old")
                    _move(previous, backup, moves)
                    backups.append(backup)
                _move(path, previous, moves)
        for target, tmp in written.items():
            _move(tmp, target, moves)
    except BaseException:
        for source, target in reversed(moves):
            try:
                os.replace(target, source)
            except OSError:
                pass  # undo what can be undone; the cause is what the caller shows
        for tmp in written.values():
            tmp.unlink(missing_ok=True)
        raise
    for backup in backups:
        backup.unlink(missing_ok=True)
    for directory in directories:
        _sync_directory(directory)
    return {name: output_dir / name for name in texts}


def _check_replaceable(path: Path) -> None:
    """A ``PublishRefused`` when something other than a regular file is at ``path`` (a
    link included: the rename would replace the link, not the file it points to)."""
    kind = target_kind(path)
    if kind is not None:
        raise PublishRefused(f"{shown_path(path.name)} there is {kind}, not a file: move it "
                             "away")


def _move(source: Path, target: Path, moves: list[tuple[Path, Path]]) -> None:
    os.replace(source, target)
    moves.append((source, target))


def _sync_directory(directory: Path) -> None:
    """Flush the renames to disk (best effort: not every file system allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
