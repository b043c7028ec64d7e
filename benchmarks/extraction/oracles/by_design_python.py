"""Python differences from ``ast`` that are so by design (docs/extraction.md, "## Python")."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compare import Difference, Sources  # noqa: E402


def trailing_comment(diff: Difference, sources: Sources) -> bool:
    """tree-sitter's block ends at a comment indented into it; ``ast`` at the last
    statement. Only comment and blank lines lie between the two ends."""
    o, e = diff.oracle, diff.extracted
    if diff.kind != "end line" or o is None or e is None or e.end_line <= o.end_line:
        return False
    lines = [sources.line(o.path, n).strip() for n in range(o.end_line + 1, e.end_line + 1)]
    return any(lines) and all(not line or line.startswith("#") for line in lines)


BY_DESIGN = {"trailing comment in a body": trailing_comment}
