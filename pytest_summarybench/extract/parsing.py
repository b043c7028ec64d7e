"""Tree-sitter parsers and compiled queries, built once per language per process.

Grammars come from the official ``tree-sitter-<lang>`` wheels installed with the package;
nothing is downloaded. TSX files use the TypeScript package's TSX grammar.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from .languages import get_spec

if TYPE_CHECKING:
    from tree_sitter import Language, Parser, Query, Tree

TSX = "tsx"
ERROR_PATTERNS = "(ERROR) @error\n(MISSING) @missing\n"
"""Syntax errors. Unlike ``Node.has_error`` this ignores MISSING nodes of hidden grammar
rules (tree-sitter-kotlin inserts ``_class_member_semi`` into valid one-line class bodies)."""


@cache
def get_language(key: str) -> Language:
    """The tree-sitter ``Language`` for a language key (or ``"tsx"``)."""
    from tree_sitter import Language

    if key == TSX:
        module, func = "tree_sitter_typescript", "language_tsx"
    else:
        module, func = get_spec(key).grammar
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise RuntimeError(
            f"extracting {key} requires the grammar package {module.replace('_', '-')}. "
            f"Install with: pip install {module.replace('_', '-')}"
        ) from exc
    return Language(getattr(mod, func)())


@cache
def get_parser(key: str) -> Parser:
    from tree_sitter import Parser

    return Parser(get_language(key))


@cache
def get_query(key: str) -> Query:
    """The language's one-pass query (definitions, calls, branches, imports)."""
    from tree_sitter import Query

    if key == TSX:
        from .languages.typescript import TypeScriptSpec

        return Query(get_language(key), TypeScriptSpec.tsx_query)
    return Query(get_language(key), get_spec(key).query)


@cache
def get_error_query(key: str) -> Query:
    """ERROR and MISSING nodes; run only on trees that report an error."""
    from tree_sitter import Query

    return Query(get_language(key), ERROR_PATTERNS)


@cache
def get_misread_query(key: str) -> Query | None:
    """The language's ``LanguageSpec.misread_query``, None when it has none."""
    from tree_sitter import Query

    text = get_spec(key).misread_query if key != TSX else ""
    return Query(get_language(key), text) if text else None


def _misread(key: str, tree: Tree) -> bool:
    """Whether a tree without syntax errors holds something the grammar is known to read
    wrongly (``LanguageSpec.misread_query``)."""
    from tree_sitter import QueryCursor

    query = get_misread_query(key)
    return query is not None and bool(QueryCursor(query).captures(tree.root_node))


@cache
def get_declaration_query(key: str) -> Query:
    """Every class and function node of the language (``misread`` re-parses are judged by
    their count)."""
    from tree_sitter import Query

    spec = get_spec(key)
    types = " ".join(f"({t})" for t in sorted(spec.class_types | spec.function_types))
    return Query(get_language(key), f"[{types}] @declaration")


def _declarations(key: str, tree: Tree) -> int:
    from tree_sitter import QueryCursor

    found = QueryCursor(get_declaration_query(key)).captures(tree.root_node)
    return len(found.get("declaration", ()))


def _error_size(key: str, tree: Tree) -> int:
    """How much of the text syntax errors cover: bytes under ERROR nodes (outermost
    ones), one for each MISSING node. A count would prefer one ERROR over the whole file
    to two small ones."""
    from tree_sitter import QueryCursor

    found = QueryCursor(get_error_query(key)).captures(tree.root_node)
    size = len(found.get("missing", ()))
    end = -1
    for start, stop in sorted((n.start_byte, n.end_byte) for n in found.get("error", ())):
        if stop > end:
            size += stop - max(start, end)
            end = stop
    return size


def parse(key: str, src: bytes) -> Tree:
    """``src`` parsed; where it has syntax errors and the language can rewrite what its
    grammar wrongly rejects (``LanguageSpec.repair``), the rewrite's parse when that has
    less text under errors. A parse without errors is rewritten too where it holds what
    the grammar misreads (``LanguageSpec.misread_query``); the rewrite's parse is then
    used only when it has no errors either and holds more declarations. Node offsets hold
    for ``src`` either way."""
    tree = get_parser(key).parse(src)
    if key == TSX:
        return tree
    clean = not tree.root_node.has_error
    if clean and not _misread(key, tree):
        return tree
    fixed = get_spec(key).repair(src)
    if fixed is None or fixed == src:
        return tree
    if len(fixed) != len(src):
        raise RuntimeError(f"{key}: repair changed the text's length ({len(src)} to "
                           f"{len(fixed)} bytes); it must rewrite in place")
    repaired = get_parser(key).parse(fixed)
    if clean:
        # A misread only: the rewrite must read more declarations, and no errors.
        better = not repaired.root_node.has_error \
            and _declarations(key, repaired) > _declarations(key, tree)
        return repaired if better else tree
    if not repaired.root_node.has_error:
        return repaired
    return repaired if _error_size(key, repaired) < _error_size(key, tree) else tree


def grammar_key(language: str, path: str) -> str:
    """Which grammar parses ``path``: TSX files need the TSX variant."""
    return TSX if language == "typescript" and path.endswith(".tsx") else language
