"""Python differences from ``ast`` that are so by design (docs/extraction.md, "## Python")."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compare import Difference, Sources, distinguished_name, plain_name  # noqa: E402

_OVERLOAD = re.compile(r"\s*@(typing\.|typing_extensions\.|t\.)?overload\s*(#.*)?$")
_ACCESSOR = re.compile(r"\s*@(\w+)\.(setter|getter|deleter)\s*(#.*)?$")


def trailing_comment(diff: Difference, sources: Sources) -> bool:
    """tree-sitter's block ends at a comment indented into it; ``ast`` at the last
    statement. Only comment and blank lines lie between the two ends."""
    o, e = diff.oracle, diff.extracted
    if diff.kind != "end line" or o is None or e is None or e.end_line <= o.end_line:
        return False
    lines = [sources.line(o.path, n).strip() for n in range(o.end_line + 1, e.end_line + 1)]
    return any(lines) and all(not line or line.startswith("#") for line in lines)


def _decorators(path: str, start: int, sources: Sources) -> list[str]:
    """The decorator lines from ``start`` up to the ``def``."""
    out = []
    number = start
    while True:
        line = sources.line(path, number)
        if not line.lstrip().startswith("@"):
            return out
        out.append(line)
        number += 1


def overload_stub(diff: Difference, sources: Sources) -> bool:
    """``@overload`` stubs are signatures for type checkers, not units."""
    o = diff.oracle
    return diff.kind == "only oracle" and o is not None and o.type != "class" and any(
        _OVERLOAD.match(d) for d in _decorators(o.path, o.start_line, sources))


def property_accessor(diff: Difference, sources: Sources) -> bool:
    """A property's setter or deleter is named ``x.setter`` / ``x.deleter``; the names of
    definitions nested in it follow."""
    o, e = diff.oracle, diff.extracted
    if diff.kind != "name" or o is None or e is None:
        return False
    for decorator in _decorators(e.path, e.start_line, sources):
        m = _ACCESSOR.match(decorator)
        if m and o.name.endswith("." + m.group(1)) or m and o.name == m.group(1):
            return plain_name(e.name) == f"{o.name}.{m.group(2)}"
    return False


def nested_in_renamed(diff: Difference, sources: Sources) -> bool:
    """Definitions inside a property setter or deleter carry its name."""
    o, e = diff.oracle, diff.extracted
    if diff.kind != "name" or o is None or e is None:
        return False
    plain = re.sub(r"\.(setter|getter|deleter)(?=\.)", "", e.name)
    return plain != e.name and distinguished_name(
        Difference("name", o, e._replace(name=plain)), sources)


BY_DESIGN = {
    "trailing comment in a body": trailing_comment,
    "overload stubs are not units": overload_stub,
    "property setters and deleters": property_accessor,
    "same-named units are told apart": distinguished_name,
    "nested in a renamed definition": nested_in_renamed,
}
