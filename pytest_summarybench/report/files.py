"""Report files on disk: each format's file name, atomic writes (a reader sees the old
file or the whole new one, never half), and moving an earlier session's reports aside (and
back, when this session turned out partial)."""

from __future__ import annotations

import os
from pathlib import Path

#: File name of each format inside the output directory.
FILE_NAMES = {"json": "results.json", "markdown": "report.md", "html": "report.html"}
#: The explorer's page, written beside report.html (``report/explorer.py``).
EXPLORER_FILE = "explorer.html"


def write_temporary(path: Path, text: str) -> Path:
    """``text`` in a temporary file beside ``path``, flushed to disk (none is left behind
    when writing fails, e.g. on a full disk)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file: a reader sees the old file or
    the whole new one, never half."""
    os.replace(write_temporary(path, text), path)
    return path


def previous_name(name: str) -> str:
    """Where ``retire_reports`` moves a report: ``results.json`` -> ``results.previous.json``."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.previous.{ext}" if dot else f"{name}.previous"


def retire_reports(output_dir: Path) -> dict[Path, Path]:
    """Rename the reports of an earlier session in ``output_dir`` (each of
    ``FILE_NAMES``, and the explorer) to their ``previous_name``, replacing older ones;
    moved path -> new path.

    A session calls this right before it writes its reports, and when it stops without
    a report (never earlier: a session killed while it evaluates leaves them): a
    ``results.json`` in the output directory is then always the report of the last session
    that finished, never an older one passing for a session that failed.
    """
    moved: dict[Path, Path] = {}
    for name in (*FILE_NAMES.values(), EXPLORER_FILE):
        path = output_dir / name
        if path.is_file():
            target = output_dir / previous_name(name)
            os.replace(path, target)
            moved[path] = target
    return moved


def restore_reports(moved: dict[Path, Path]) -> None:
    """Undo ``retire_reports``: put each moved report back where it was, unless a file is
    there again. A session that started as a complete run and ended partial (stopped
    early) calls this: the reports it moved aside are still the latest complete run's."""
    for original, target in moved.items():
        if target.is_file() and not original.exists():
            os.replace(target, original)
