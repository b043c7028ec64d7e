"""The extraction run: walk, read, extract each file, filter, link calls, build CodeUnits.

Bad input never stops a run: every file that cannot be (fully) extracted is reported once,
as a :class:`SkippedFile` and/or one warning line naming the file and the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.collector import cycle_collection_paused
from ..schemas.units import CodeUnit
from .callgraph import link_calls
from .config import ExtractionConfig
from .files import GENERATED, walk
from .parallel import extract_all
from .result import ExtractionResult, SkippedFile
from .units import FILE, FileUnits, RawUnit

if TYPE_CHECKING:
    from ..core.progress import Progress

logger = logging.getLogger("pytest_summarybench.extract")


def _warn(result: ExtractionResult, path: str, reason: str) -> None:
    line = f"{path}: {reason}"
    result.warnings.append(line)
    logger.warning("summarybench extract: %s", line)


def _skip(result: ExtractionResult, path: str, reason: str, warn: bool = True) -> None:
    result.skipped.append(SkippedFile(path, reason))
    if warn:
        _warn(result, path, f"skipped: {reason}")


def sort_key(unit: CodeUnit) -> tuple[str, int, str, str, str]:
    """The canonical order of units everywhere: (path, start line, type, name, id)."""
    return (unit.path, unit.metadata.start_line, unit.type, unit.name, unit.id)


def extract_units(config: ExtractionConfig, progress: Progress | None = None) -> ExtractionResult:
    """Extract the units of every wanted file under ``config.root_path``.

    Units come back sorted by (path, start line, type, name); ids are content hashes, so
    the result is identical across processes and runs.

    :param progress: where to show files extracted of files found (None: nowhere).
    """
    with cycle_collection_paused():
        result, files = _extract_files(config, progress)
        plan = _plan(files)
        result.units = [_unit(uid, data) for uid, data in plan]
        return result


@dataclass
class UnitStream:
    """``stream_units``: what extraction found, and its units one at a time."""

    result: ExtractionResult
    """Skipped files, warnings and counts (``units`` stays empty)."""
    total: int
    """How many units ``units`` yields."""
    units: Iterator[CodeUnit]
    """The units in ``extract_units``' order, each validated when it is reached."""


def stream_units(config: ExtractionConfig, progress: Progress | None = None) -> UnitStream:
    """``extract_units`` for a caller that stores units as they come (the run's pipeline):
    no list of every ``CodeUnit`` is ever built, and each unit's plain data is let go once
    it is yielded."""
    with cycle_collection_paused():
        result, files = _extract_files(config, progress)
        plan = _plan(files)
    del files

    def units() -> Iterator[CodeUnit]:
        with cycle_collection_paused():
            for i, (uid, data) in enumerate(plan):
                plan[i] = (uid, None)
                yield _unit(uid, data)

    return UnitStream(result, len(plan), units())


def _extract_files(config: ExtractionConfig,
                   progress: Progress | None) -> tuple[ExtractionResult, list[FileUnits]]:
    result = ExtractionResult()
    walk_skips: list[SkippedFile] = []
    sources = walk(config, walk_skips)
    for skip in walk_skips:
        _skip(result, skip.path, skip.reason)
    files: list[FileUnits] = []
    if progress is None:
        outcomes = extract_all(sources, config)
    else:
        with progress.phase("summarybench extraction", len(sources), unit="file") as phase:
            outcomes = extract_all(sources, config, phase.advance)
    for source, extracted, reason in outcomes:
        if extracted is None:
            _skip(result, source.path, reason, warn=not reason.startswith(GENERATED))
            continue
        result.files_scanned += 1
        result.bytes_scanned += extracted.size
        if extracted.error_line is not None:
            clean = sum(1 for u in extracted.units if not u.has_error)
            span = extracted.error_span
            where = (f" (errors cover lines {span[0]}-{span[1]}: definitions there may be "
                     f"lost to the parser's recovery)" if span and span[1] > span[0] else "")
            _warn(result, source.path,
                  f"syntax error at line {extracted.error_line}{where}; partly extracted: "
                  f"{clean} of the {len(extracted.units)} definitions found are outside the "
                  f"errors, the file unit and definitions containing errors are left out")
        elif extracted.file_unit.end_line > config.filters.max_lines and config.extraction.files:
            _warn(result, source.path,
                  f"{extracted.file_unit.end_line} lines > maxLines "
                  f"{config.filters.max_lines}; file unit left out, its smaller units kept")
        files.append(extracted)
    return result, files


def _plan(files: list[FileUnits]) -> list[tuple[str, dict[str, Any] | None]]:
    """Every emitted unit's id and plain data (with its relationships), in order."""
    emitted: dict[int, str] = {}
    chosen: list[tuple[FileUnits, RawUnit]] = []
    taken: set[str] = set()
    for f in files:
        for raw in (f.file_unit, *f.units):
            if raw.uid is None:  # not emitted (see prepare.py)
                continue
            uid = raw.uid
            n = 2
            base = uid
            while uid in taken:  # identical definitions under one name: keep both
                uid = f"{base}-{n}"
                n += 1
            taken.add(uid)
            emitted[id(raw)] = uid
            chosen.append((f, raw))
    calls = link_calls(files, emitted)

    # Relationships as plain data first, so each unit is validated once, complete.
    rels: dict[str, dict[str, Any]] = {}
    for _, raw in chosen:
        calls_ids, unresolved = calls[id(raw)]
        rels[emitted[id(raw)]] = {"parent_id": None, "child_ids": [], "calls_ids": calls_ids,
                                  "called_by_ids": [], "unresolved_calls": unresolved}
    # Parents are the nearest emitted enclosing unit, else the file unit.
    for f, raw in chosen:
        if raw.type == "file":
            continue
        parent = raw.parent
        while parent != FILE and id(f.units[parent]) not in emitted:
            parent = f.units[parent].parent
        parent_raw = f.units[parent] if parent != FILE else f.file_unit
        parent_id = emitted.get(id(parent_raw))
        if parent_id is not None:
            uid = emitted[id(raw)]
            rels[uid]["parent_id"] = parent_id
            rels[parent_id]["child_ids"].append(uid)
    ordered = sorted(((emitted[id(raw)], raw.data) for _, raw in chosen),
                     key=lambda e: _data_key(e[0], e[1]))
    for uid, _ in ordered:
        for callee_id in rels[uid]["calls_ids"]:
            callers = rels[callee_id]["called_by_ids"]
            if uid not in callers:
                callers.append(uid)
    position = {uid: i for i, (uid, _) in enumerate(ordered)}
    out: list[tuple[str, dict[str, Any] | None]] = []
    for uid, data in ordered:
        rels[uid]["child_ids"].sort(key=position.__getitem__)
        assert data is not None  # set with uid by prepare()
        data["id"] = uid
        data["relationships"] = rels[uid]
        out.append((uid, data))
    return out


def _unit(uid: str, data: dict[str, Any] | None) -> CodeUnit:
    # One validation per unit, from plain data (pydantic-core builds the nested models
    # several times faster than constructing them one by one, and faster than
    # ``model_construct``).
    assert data is not None, uid
    return CodeUnit.model_validate(data)


def _data_key(uid: str, data: dict[str, Any] | None) -> tuple[str, int, str, str, str]:
    """``sort_key`` of the unit ``data`` will become."""
    assert data is not None
    return (data["path"], data["metadata"]["start_line"], data["type"], data["name"], uid)
