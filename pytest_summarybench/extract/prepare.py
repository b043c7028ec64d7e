"""The per-file half of building CodeUnits: which units are emitted, their content hashes
and their fields as plain data.

It runs where the file was extracted (this process or a worker), so only compact plain
data crosses processes; the parent de-duplicates ids, links calls across files and builds
the CodeUnit objects (``engine/pipeline.py``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from .config import ExtractionConfig
from .units import FileUnits, RawUnit, unit_content


def prepare(f: FileUnits, config: ExtractionConfig) -> None:
    """Set ``uid`` and ``data`` on every unit of ``f`` the configuration emits, then
    release the file's bytes (nothing after this step reads them)."""
    types = config.extraction
    enabled = {"function": types.functions, "class": types.classes,
               "method": types.methods, "file": types.files}
    low = config.filters.min_lines
    high = config.filters.max_lines
    strip = config.strip_docstrings
    src = f.source
    for raw in (f.file_unit, *f.units):
        if enabled.get(raw.type, False) and not raw.has_error \
                and low <= raw.end_line - raw.start_line + 1 <= high:
            raw.uid = _unit_id(src, raw)
            raw.data = _fields(src, raw, strip)
            raw.line = raw.data["metadata"]["start_line"]
    f.source = b""


def _unit_id(src: bytes, unit: RawUnit) -> str:
    digest = hashlib.sha256(f"{unit.path}\0{unit.type}\0{unit.name}\0".encode())
    digest.update(src[unit.start_byte:unit.end_byte])
    return digest.hexdigest()[:16]


def _fields(src: bytes, raw: RawUnit, strip: bool) -> dict[str, Any]:
    """Every CodeUnit field but ``id`` and ``relationships``, as plain data."""
    doc = raw.doc
    # Lines span the content models see: a stripped leading doc comment is not in it.
    start_line = raw.start_line
    if strip and doc is not None and doc.leading and raw.type != "file":
        start_line = raw.decl_line
    return {
        "path": raw.path, "name": raw.name, "type": raw.type, "language": raw.language,
        "content": unit_content(src, raw, strip),
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
    }
