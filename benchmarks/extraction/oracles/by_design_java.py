"""Java differences from javac's parser that are so by design (docs/extraction.md, "## Java")."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compare import Difference, Sources  # noqa: E402


def binary_file(diff: Difference, sources: Sources) -> bool:
    """A file with a NUL byte in its first 8 KiB is skipped as binary (fuzzing inputs
    kept in test sources); javac reads it as text."""
    o = diff.oracle
    if diff.kind != "only oracle" or o is None:
        return False
    with open(os.path.join(sources.root, o.path), "rb") as fh:
        return b"\0" in fh.read(8192)


BY_DESIGN = {
    "files with NUL bytes are skipped as binary": binary_file,
}
