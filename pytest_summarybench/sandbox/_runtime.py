"""What of the host a sandboxed Python needs: the interpreter, its standard library and the
shared libraries they load. Nothing else of the host is mounted in a sandbox.

The interpreter is the base one (a virtual environment's ``python`` is a link to it, and
its site-packages never enter the sandbox); the standard library's own ``site-packages``
is covered by an empty file system. Shared libraries are the ones the dynamic loader
resolves for the interpreter and every extension module of the standard library (``ldd``),
mounted file by file at the paths the loader looks for them; where ``ldd`` is missing,
the usual library directories are mounted whole (read-only, and they hold no secrets).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: Mounted whole when ``ldd`` cannot say which libraries are needed.
LIBRARY_DIRS = ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32")
_LDD_PATH = re.compile(r"(/\S+)")


@dataclass(frozen=True)
class PythonRuntime:
    """The read-only host paths a sandboxed interpreter needs."""

    executable: str
    """The base interpreter (real path)."""
    directories: tuple[str, ...]
    """Mounted read-only: the standard library and its extension modules."""
    hidden: tuple[str, ...]
    """Directories inside ``directories`` covered by an empty file system."""
    files: tuple[str, ...]
    """Mounted read-only one by one: shared libraries and the dynamic loader."""

    def mounts(self) -> list[tuple[str, str]]:
        """(host path, sandbox path) pairs, every one read-only, parents before children."""
        pairs = [(self.executable, self.executable)]
        pairs += [(d, d) for d in self.directories]
        pairs += [(f, f) for f in self.files if not _within(f, self.directories)]
        return pairs


def _within(path: str, dirs: tuple[str, ...]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _stdlib_dirs() -> list[str]:
    stdlib = os.path.realpath(os.path.dirname(os.__file__))
    dirs = [stdlib]
    for entry in sys.path:
        if entry.endswith("lib-dynload") and os.path.isdir(entry):
            real = os.path.realpath(entry)
            if not _within(real, tuple(dirs)):
                dirs.append(real)
    return dirs


def _extension_modules(dirs: list[str]) -> list[str]:
    found = []
    for directory in dirs:
        for dirpath, dirnames, filenames in os.walk(directory):
            dirnames[:] = [d for d in dirnames if d not in ("site-packages", "dist-packages",
                                                            "test", "tests", "__pycache__")]
            found += [os.path.join(dirpath, f) for f in filenames if f.endswith(".so")]
    return sorted(found)


def _shared_libraries(binaries: list[str]) -> list[str] | None:
    """Every library the loader resolves for ``binaries`` (None when ``ldd`` is missing or
    fails), with the paths as the loader asks for them."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    libs: set[str] = set()
    for start in range(0, len(binaries), 200):
        try:
            out = subprocess.run([ldd, *binaries[start:start + 200]], capture_output=True,
                                 text=True, timeout=60, env={"LC_ALL": "C"}).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        for line in out.splitlines():
            line = line.strip()
            if line.endswith(":") or "not found" in line:
                continue  # a file header, or a library the module lacks (it fails to import)
            target = line.split("=>", 1)[-1]
            match = _LDD_PATH.search(target)
            if match:
                libs.add(match.group(1))
    return sorted(lib for lib in libs if os.path.exists(lib))


@functools.cache
def python_runtime() -> PythonRuntime:
    """The runtime of the interpreter running this process (computed once)."""
    executable = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
    dirs = _stdlib_dirs()
    hidden = tuple(p for d in dirs for p in (os.path.join(d, "site-packages"),
                                             os.path.join(d, "dist-packages"))
                   if os.path.isdir(p))
    libs = _shared_libraries([executable, *_extension_modules(dirs)])
    if libs is None:
        dirs += [d for d in LIBRARY_DIRS if os.path.isdir(d) and not Path(d).is_symlink()]
        libs = []
    # The interpreter's own directory holds other programs (pip, idle...): only the binary.
    return PythonRuntime(executable=executable, directories=tuple(dirs), hidden=hidden,
                         files=tuple(libs))
