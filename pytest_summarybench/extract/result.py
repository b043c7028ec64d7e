"""What an extraction run returns: the units, and every file it could not (fully) read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..schemas.units import CodeUnit


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file left out of the extraction, and why."""

    path: str
    """Relative to the extraction root."""
    reason: str


@dataclass(slots=True)
class ExtractionResult:
    """Units sorted by (path, start line, type, name), plus what went wrong on the way."""

    units: list[CodeUnit] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """One line per problem, naming the file and the reason (also logged)."""
    files_scanned: int = 0
    """Files parsed (fully or partly)."""
    bytes_scanned: int = 0
