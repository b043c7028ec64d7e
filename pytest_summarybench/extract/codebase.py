"""The extraction run: walk, read, extract each file, filter, link calls, build CodeUnits.

Bad input never stops a run: every file that cannot be (fully) extracted is reported once,
as a :class:`SkippedFile` and/or one warning line naming the file and the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.collector import cycle_collection_paused
from ..core.printable import neutralise, shown_path
from ..schemas.units import CodeUnit
from .callgraph import link_calls
from .config import ExtractionConfig
from .files import GENERATED, walk
from .parallel import extract_all
from .result import ExtractionResult, SkippedFile
from .spill import SpillReader, SpillRef
from .spill import emitted as emitted_units
from .units import FILE, FileUnits, RawUnit

if TYPE_CHECKING:
    from ..core.progress import Progress

logger = logging.getLogger("pytest_summarybench.extract")


MAX_WARNINGS_SHOWN = 200
"""Warning lines logged one by one; past them, one line counts the rest (each is still in
``ExtractionResult.warnings`` and each skipped file in ``skipped``)."""


def _warn(result: ExtractionResult, path: str, reason: str) -> None:
    # The path is a repository's file name: quoted as a shell reads it back, control
    # characters escaped (a name may hold a newline or a terminal's escape sequence).
    line = f"{shown_path(path)}: {neutralise(reason, one_line=True)}"
    result.warnings.append(line)
    if len(result.warnings) <= MAX_WARNINGS_SHOWN:
        logger.warning("summarybench extract: %s", line)


def _warned_more(result: ExtractionResult) -> None:
    more = len(result.warnings) - MAX_WARNINGS_SHOWN
    if more > 0:
        logger.warning("summarybench extract: %s more warnings like these not shown "
                       "(%s files skipped in all; the first %s warnings are above)",
                       f"{more:,}", f"{len(result.skipped):,}", MAX_WARNINGS_SHOWN)


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
        result, files = _extract_files(config, progress, None)
        plan, sources = _plan(files)
        result.units = [_unit(data) for data in _data(plan, sources, None)]
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


def stream_units(config: ExtractionConfig, progress: Progress | None = None,
                 spill: Path | None = None) -> UnitStream:
    """``extract_units`` for a caller that stores units as they come (the run's pipeline):
    no list of every ``CodeUnit`` is ever built.

    :param spill: a folder (the caller's, removed by it once ``units`` is exhausted) where
        each file's unit data (content, signature, docstring...) is written as soon as the
        file is extracted and read back one file at a time (``spill.py``): what extraction
        holds then grows with the units' names and links, not their code. None keeps the
        data in memory, each unit's let go once it is yielded.
    """
    with cycle_collection_paused():
        result, files = _extract_files(config, progress, spill)
        plan, sources = _plan(files)
    del files

    def units() -> Iterator[CodeUnit]:
        reader = SpillReader(spill) if spill is not None else None
        try:
            with cycle_collection_paused():
                for data in _data(plan, sources, reader):
                    yield _unit(data)
        finally:
            if reader is not None:
                reader.close()

    return UnitStream(result, len(plan), units())


def _extract_files(config: ExtractionConfig, progress: Progress | None,
                   spill: Path | None) -> tuple[ExtractionResult, list[FileUnits]]:
    result = ExtractionResult()
    walk_skips: list[SkippedFile] = []
    sources = walk(config, walk_skips)
    for skip in walk_skips:
        _skip(result, skip.path, skip.reason)
    files: list[FileUnits] = []
    if progress is None:
        outcomes = extract_all(sources, config, spill=spill)
    else:
        with progress.phase("summarybench extraction", len(sources), unit="file") as phase:
            outcomes = extract_all(sources, config, phase.advance, spill)
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
    _warned_more(result)
    return result, files


Planned = tuple[str, int, int, dict[str, Any]]
"""A unit to build: its id, the index of its file, its index among the file's emitted
units (``spill.emitted``) and its relationships."""


def _plan(files: list[FileUnits]) -> tuple[list[Planned], list[SpillRef | list[Any]]]:
    """Every emitted unit in order, with its relationships, and where each file's unit
    data is; reads the units' names, places and calls, never their data."""
    emitted: dict[int, str] = {}
    where: dict[int, tuple[int, int]] = {}
    chosen: list[tuple[FileUnits, RawUnit]] = []
    taken: set[str] = set()
    for fi, f in enumerate(files):
        for k, raw in enumerate(emitted_units(f)):
            assert raw.uid is not None
            uid = raw.uid
            n = 2
            base = uid
            while uid in taken:  # identical definitions under one name: keep both
                uid = f"{base}-{n}"
                n += 1
            taken.add(uid)
            emitted[id(raw)] = uid
            where[id(raw)] = (fi, k)
            chosen.append((f, raw))
    calls = link_calls(files, emitted)

    # Relationships as plain data first, so each unit is validated once, complete.
    rels: dict[str, dict[str, Any]] = {}
    for _, raw in chosen:
        calls_ids, unresolved = calls[id(raw)]
        rels[emitted[id(raw)]] = {"parent_id": None, "child_ids": [], "calls_ids": calls_ids,
                                  "called_by_ids": [], "unresolved_calls": unresolved}
    del calls
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
    # The order of ``sort_key``, from the fields the units' data will carry.
    ordered = sorted(((emitted[id(raw)], raw) for _, raw in chosen),
                     key=lambda e: (e[1].path, e[1].line, e[1].type, e[1].name, e[0]))
    for uid, _ in ordered:
        for callee_id in rels[uid]["calls_ids"]:
            callers = rels[callee_id]["called_by_ids"]
            if uid not in callers:
                callers.append(uid)
    position = {uid: i for i, (uid, _) in enumerate(ordered)}
    plan: list[Planned] = []
    for uid, raw in ordered:
        rels[uid]["child_ids"].sort(key=position.__getitem__)
        plan.append((uid, *where[id(raw)], rels[uid]))
    sources: list[SpillRef | list[Any]] = [
        f.spill if f.spill is not None else [raw.data for raw in emitted_units(f)]
        for f in files]
    return plan, sources


def _data(plan: list[Planned], sources: list[SpillRef | list[Any]],
          reader: SpillReader | None) -> Iterator[dict[str, Any]]:
    """Each planned unit's complete plain data, in order; a file's data is read (or
    taken) when its first unit comes, and each unit's is let go once it is yielded.
    Units are ordered by path first, so one file's data is held at a time."""
    current = -1
    datas: list[Any] = []
    for uid, fi, k, rels in plan:
        if fi != current:
            source = sources[fi]
            if isinstance(source, tuple):
                assert reader is not None, "unit data written aside needs a reader"
                datas = list(reader.read(source))
            else:
                datas = source
            current = fi
        data = datas[k]
        datas[k] = None
        assert data is not None, uid
        data["id"] = uid
        data["relationships"] = rels
        yield data


def _unit(data: dict[str, Any]) -> CodeUnit:
    # One validation per unit, from plain data (pydantic-core builds the nested models
    # several times faster than constructing them one by one, and faster than
    # ``model_construct``).
    return CodeUnit.model_validate(data)
