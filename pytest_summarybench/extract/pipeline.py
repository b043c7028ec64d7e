"""The extraction run: walk, read, extract each file, filter, link calls, build CodeUnits.

Bad input never stops a run: every file that cannot be (fully) extracted is reported once,
as a :class:`SkippedFile` and/or one warning line naming the file and the reason.
"""

from __future__ import annotations

import hashlib
import logging

from ..schemas.units import CodeUnit
from .callgraph import link_calls
from .config import ExtractionConfig
from .files import GENERATED, walk
from .parallel import extract_all
from .result import ExtractionResult, SkippedFile
from .units import FILE, FileUnits, RawUnit, unit_content

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


def extract_units(config: ExtractionConfig) -> ExtractionResult:
    """Extract the units of every wanted file under ``config.root_path``.

    Units come back sorted by (path, start line, type, name); ids are content hashes, so
    the result is identical across processes and runs.
    """
    result = ExtractionResult()
    walk_skips: list[SkippedFile] = []
    sources = walk(config, walk_skips)
    for skip in walk_skips:
        _skip(result, skip.path, skip.reason)
    files: list[FileUnits] = []
    for source, extracted, reason in extract_all(sources, config):
        if extracted is None:
            _skip(result, source.path, reason, warn=not reason.startswith(GENERATED))
            continue
        result.files_scanned += 1
        result.bytes_scanned += len(extracted.source)
        if extracted.error_line is not None:
            clean = sum(1 for u in extracted.units if not u.has_error)
            _warn(result, source.path,
                  f"syntax error at line {extracted.error_line}; partly extracted: "
                  f"{clean} of {len(extracted.units)} definitions are outside the error "
                  f"region, the file unit and definitions containing errors are left out")
        elif extracted.file_unit.end_line > config.filters.max_lines and config.extraction.files:
            _warn(result, source.path,
                  f"{extracted.file_unit.end_line} lines > maxLines "
                  f"{config.filters.max_lines}; file unit left out, its smaller units kept")
        files.append(extracted)
    result.units = _build(files, config)
    return result


def _wanted(unit: RawUnit, config: ExtractionConfig) -> bool:
    types = config.extraction
    enabled = {"function": types.functions, "class": types.classes,
               "method": types.methods, "file": types.files}
    if not enabled.get(unit.type, False) or unit.has_error:
        return False
    lines = unit.end_line - unit.start_line + 1
    return config.filters.min_lines <= lines <= config.filters.max_lines


def _unit_id(src: bytes, unit: RawUnit) -> str:
    digest = hashlib.sha256(f"{unit.path}\0{unit.type}\0{unit.name}\0".encode())
    digest.update(src[unit.start_byte:unit.end_byte])
    return digest.hexdigest()[:16]


def _build(files: list[FileUnits], config: ExtractionConfig) -> list[CodeUnit]:
    emitted: dict[int, str] = {}
    chosen: list[tuple[FileUnits, RawUnit]] = []
    taken: set[str] = set()
    for f in files:
        for raw in [f.file_unit, *f.units]:
            if not _wanted(raw, config):
                continue
            uid = _unit_id(f.source, raw)
            n = 2
            base = uid
            while uid in taken:  # identical definitions under one name: keep both
                uid = f"{base}-{n}"
                n += 1
            taken.add(uid)
            emitted[id(raw)] = uid
            chosen.append((f, raw))
    calls = link_calls(files, emitted)

    units: dict[int, CodeUnit] = {}
    for f, raw in chosen:
        units[id(raw)] = _code_unit(f, raw, emitted[id(raw)], calls[id(raw)],
                                    config.strip_docstrings)
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
            units[id(raw)].relationships.parent_id = parent_id
            units[id(parent_raw)].relationships.child_ids.append(emitted[id(raw)])
    by_id = {u.id: u for u in units.values()}
    ordered = sorted(units.values(), key=sort_key)
    for unit in ordered:
        for callee_id in unit.relationships.calls_ids:
            callers = by_id[callee_id].relationships.called_by_ids
            if unit.id not in callers:
                callers.append(unit.id)
    position = {u.id: i for i, u in enumerate(ordered)}
    for unit in ordered:
        unit.relationships.child_ids.sort(key=position.__getitem__)
    return ordered


def _code_unit(f: FileUnits, raw: RawUnit, uid: str,
               calls: tuple[list[str], list[str]], strip: bool) -> CodeUnit:
    content = unit_content(f.source, raw, strip)
    doc = raw.doc
    # Lines span the content models see: a stripped leading doc comment is not in it.
    start_line = raw.start_line
    if strip and doc is not None and doc.leading and raw.type != "file":
        start_line = raw.decl_line
    # One validation per unit, from plain data (pydantic-core builds the nested models
    # several times faster than constructing them one by one).
    return CodeUnit.model_validate({
        "id": uid, "path": raw.path, "name": raw.name, "type": raw.type,
        "language": raw.language, "content": content,
        "docstring": doc.text if doc is not None else None,
        "metadata": {
            "start_line": start_line, "end_line": raw.end_line, "signature": raw.signature,
            "parameters": raw.parameters, "return_type": raw.return_type,
            "visibility": raw.visibility, "decorators": raw.decorators or None,
            "dependencies": list(raw.deps), "exports": raw.exports,
            # Functions count their own decision points (nested functions are units of
            # their own); classes and files count everything inside them.
            "complexity": 1 + (raw.branches if raw.type in ("function", "method")
                               else raw.total_branches),
        },
        "relationships": {"calls_ids": calls[0], "unresolved_calls": calls[1]},
    })
