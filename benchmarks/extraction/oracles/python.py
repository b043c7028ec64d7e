"""Python units per Python's own ``ast``, for benchmarks/extraction/compare.py.

Every function, method and class: the name is qualified by the enclosing classes and
functions, the type is ``method`` for a function whose nearest enclosing definition is a
class, the start line is that of the first decorator (units include their decorators) and
the end line that of the last statement. Standard library only::

    python benchmarks/extraction/oracles/python.py ROOT
"""

from __future__ import annotations

import ast
import json
import os
import sys
from collections.abc import Iterator
from typing import Any


def file_units(tree: ast.AST, path: str) -> Iterator[dict[str, Any]]:
    stack: list[tuple[ast.AST, str, str | None]] = [(tree, "", None)]
    while stack:
        node, prefix, enclosing = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}.{child.name}" if prefix else child.name
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if enclosing == "class" else "function"
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                yield {"path": path, "name": qual, "type": kind, "start_line": start,
                       "end_line": child.end_lineno or child.lineno}
                stack.append((child, qual, kind))
            else:
                stack.append((child, prefix, enclosing))


def units(root: str) -> Iterator[dict[str, Any]]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if not name.endswith(".py") or not os.path.isfile(full):
                continue
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            try:
                with open(full, "rb") as fh:
                    tree = ast.parse(fh.read(), filename=rel)
            except (SyntaxError, ValueError) as exc:
                yield {"unparsable": rel, "error": str(exc)}
                continue
            yield {"file": rel}
            yield from file_units(tree, rel)


def main(argv: list[str]) -> int:
    out = sys.stdout
    for record in units(argv[1]):
        out.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
