"""TypeScript differences from the ``typescript`` package's parser that are so by design
(docs/extraction.md, "## TypeScript and JavaScript")."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compare import Difference, Sources  # noqa: E402


@lru_cache(maxsize=64)
def _error_lines(language: str, path: str) -> tuple[tuple[int, int], ...]:
    """The line ranges of tree-sitter's ERROR and MISSING nodes in ``path``."""
    from tree_sitter import QueryCursor

    from pytest_summarybench.extract.parsing import get_error_query, get_parser, grammar_key

    key = grammar_key(language, path)
    with open(path, "rb") as fh:
        tree = get_parser(key).parse(fh.read())
    if not tree.root_node.has_error:
        return ()
    found = QueryCursor(get_error_query(key)).captures(tree.root_node)
    return tuple((n.start_point.row + 1, n.end_point.row + 1)
                 for nodes in found.values() for n in nodes)


def grammar_error_rule(language: str) -> Callable[[Difference, Sources], bool]:
    """A definition with syntax the tree-sitter grammar does not know inside it (in
    TypeScript: variance annotations ``in T``/``out T``, ``export type *``) is left out,
    as every definition with a syntax error is: what the parser's recovery made of it
    cannot be trusted. (JavaScript's rule too: by_design_javascript.py.)"""

    def grammar_error(diff: Difference, sources: Sources) -> bool:
        o = diff.oracle
        if diff.kind != "only oracle" or o is None:
            return False
        errors = _error_lines(language, os.path.join(sources.root, o.path))
        return any(o.start_line <= last and first <= o.end_line for first, last in errors)

    return grammar_error


BY_DESIGN = {
    "definitions the grammar cannot parse are left out": grammar_error_rule("typescript"),
}
