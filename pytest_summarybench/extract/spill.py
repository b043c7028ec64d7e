"""Units' plain data set aside on disk while the codebase is extracted.

Linking calls across files and ordering the units needs every unit's name, place and
calls, but not its content, signature or docstring: those are most of a unit's weight
(a file unit's content holds its classes', a class's its methods'). The process that
prepares a file (this one or a worker) writes the file's emitted units' data to a file
of its own and keeps a reference; the parent reads one file's data back at a time when
it builds the units, so the memory extraction holds grows with the units' names and
links, not with their code (docs/performance.md, "Memory per unit").

The data are dicts, lists, strings, numbers and None, written with :mod:`marshal`
(several times faster than pickle for such data, and it builds no objects of other
types); the files live in a folder the caller owns and removes.
"""

from __future__ import annotations

import marshal
import os
import uuid
from pathlib import Path
from typing import IO, Any

from .units import FileUnits, RawUnit

SpillRef = tuple[str, int, int]
"""(file name in the folder, offset, length) of one extracted file's units' data."""


def emitted(f: FileUnits) -> list[RawUnit]:
    """The units of ``f`` the configuration emits, in the order their data is written."""
    return [raw for raw in (f.file_unit, *f.units) if raw.uid is not None]


class SpillWriter:
    """Writes extracted files' unit data to one file of ``folder`` (one writer per
    process: the name is unique)."""

    def __init__(self, folder: Path) -> None:
        self.name = f"{os.getpid()}-{uuid.uuid4().hex[:8]}.units"
        self._path = folder / self.name
        self._fh: IO[bytes] | None = None
        self._offset = 0

    def write(self, f: FileUnits) -> None:
        """Write the data of ``f``'s emitted units, note where on ``f.spill``, and let go
        of what nothing after extraction reads (the data, and the fields the data
        carries that call linking does not need)."""
        units = emitted(f)
        if self._fh is None:
            self._fh = open(self._path, "wb")  # noqa: SIM115 (closed by close())
        blob = marshal.dumps([raw.data for raw in units])
        self._fh.write(blob)
        f.spill = (self.name, self._offset, len(blob))
        self._offset += len(blob)
        for raw in (f.file_unit, *f.units):
            raw.data = None
            raw.signature = raw.return_type = raw.visibility = None
            raw.parameters = raw.decorators = raw.exports = None
            raw.doc = None
            raw.deps = {}

    def close(self) -> None:
        """Flush and close: a reader in another process sees every byte written."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class SpillReader:
    """Reads back what :class:`SpillWriter` instances wrote into ``folder``."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._open: dict[str, IO[bytes]] = {}

    def read(self, ref: SpillRef) -> list[dict[str, Any]]:
        """The data of one file's emitted units, in ``emitted`` order."""
        name, offset, length = ref
        fh = self._open.get(name)
        if fh is None:
            fh = self._open[name] = open(self._folder / name, "rb")  # noqa: SIM115
        fh.seek(offset)
        blob = fh.read(length)
        if len(blob) != length:
            raise OSError(f"extraction's working file {self._folder / name} is "
                          f"{offset + len(blob)} bytes, {offset + length} expected")
        data: list[dict[str, Any]] = marshal.loads(blob)
        return data

    def close(self) -> None:
        for fh in self._open.values():
            fh.close()
        self._open.clear()
