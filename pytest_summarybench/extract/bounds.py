"""What one file may cost extraction: how deep its syntax and its definitions nest, and
how much CPU time its extraction takes. A file over a limit is skipped with the reason.

The work per file is linear in its size (``extract/units.py``, ``languages/_base.py``),
so these limits only stop hostile or degenerate input: of the 19,413 Python and
JavaScript files measured for them one nests its syntax deeper than 500 levels (a
generated sympy table) and none deeper than 1,000, the deepest nesting of definitions in
real code is a few dozen, and the slowest file took 0.5 s (docs/extraction.md, "Files
that are skipped, and the limits per file").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..core.errors import InputError

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_SYNTAX_DEPTH = 1000
"""Levels of the syntax tree (tree-sitter's query cursor and ``Node.parent`` cost time
in proportion to depth; at 65,536 levels the query cursor took minutes)."""
MAX_DEFINITION_DEPTH = 100
"""Definitions inside definitions (each unit's qualified name and content grow with it)."""
CPU_SECONDS_PER_FILE = 10.0
"""CPU time (not wall time, so that a loaded machine skips nothing more) for one file's
parse, query and units; checked between steps, a backstop behind the limits above."""


class FileTooComplex(InputError):
    """A file over one of the limits; the message is the skip reason (bad input: the file
    is skipped and listed, the run goes on)."""


def deeper_than(root: Node, limit: int) -> bool:
    """Whether a node lies more than ``limit`` levels below ``root``.

    Only subtrees with enough nodes to reach past the limit are entered (each node stores
    how many it holds), so a usual tree costs a few dozen steps and a degenerate one about
    ``limit`` times its branching.
    """
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in node.children:
            # A subtree of n nodes is at most n - 1 levels deep below its top.
            if depth + child.descendant_count > limit:
                stack.append((child, depth + 1))
    return False


def check_syntax_depth(root: Node) -> None:
    if deeper_than(root, MAX_SYNTAX_DEPTH):
        raise FileTooComplex(f"syntax nested more than {MAX_SYNTAX_DEPTH} levels deep "
                             "(the limit per file)")


def definition_depth(spans: list[tuple[int, int]]) -> int:
    """How deep ``spans`` (start, end; sorted by start, outer first) nest."""
    ends: list[int] = []
    deepest = 0
    for start, end in spans:
        while ends and ends[-1] <= start:
            ends.pop()
        ends.append(end)
        deepest = max(deepest, len(ends))
    return deepest


def check_definition_depth(spans: list[tuple[int, int]]) -> None:
    depth = definition_depth(spans)
    if depth > MAX_DEFINITION_DEPTH:
        raise FileTooComplex(f"definitions nested {depth} deep, more than "
                             f"{MAX_DEFINITION_DEPTH} (the limit per file)")


class Budget:
    """CPU time left to one file's extraction."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = CPU_SECONDS_PER_FILE if seconds is None else seconds
        self._started = time.thread_time()

    def check(self, step: str) -> None:
        """Raise ``FileTooComplex`` once the file has used its time (``step``: where)."""
        if time.thread_time() - self._started > self.seconds:
            raise FileTooComplex(f"extraction used more than {self.seconds:g} s of CPU time "
                                 f"(the limit per file), stopped {step}")
