"""What runs, and when: walking a function's own code, and whether a statement is guarded.

``body_nodes`` and ``scope_nodes`` walk the code a definition runs (without its
decorators; without nested definitions, whose bodies run elsewhere); ``guarded_by``
answers whether a node runs only on the branch where a test held: inside the ``if``, or
after an ``if`` on the same path that returns or raises otherwise; ``is_used`` whether a
helper the module defines is ever called or handed over.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from .facts import CodeFacts


def body_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` except decorator expressions (``@app.post(...)`` is
    registration, not something the function does when it runs)."""
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        yield current
        children = ast.iter_child_nodes(current)
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # By identity, in one pass: ``child in decorator_list`` compares each child
            # with every decorator (50,000 stacked decorators: minutes).
            skip = {id(decorator) for decorator in current.decorator_list}
            children = (child for child in children if id(child) not in skip)
        stack.extend(children)


def parents(root: ast.AST) -> dict[ast.AST, ast.AST]:
    """Child -> parent for every node under ``root``."""
    out: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(root):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def _exits(statements: list[ast.stmt]) -> bool:
    """Whether a block leaves the enclosing path (return, raise, continue, break)."""
    return any(isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break))
               for s in statements)


def _gates_the_path(statement: ast.stmt, is_gate: Callable[[ast.expr], bool]) -> bool:
    """Whether an earlier statement stops the path unless a gate test held: an ``if`` on
    the test with an exiting branch (possibly nested in a condition that scopes the gate
    to some calls, ``if name in CHANGES: ... if answer != "y": return``), or an assert."""
    if isinstance(statement, ast.Assert):
        return is_gate(statement.test)
    if not isinstance(statement, ast.If):
        return False
    if is_gate(statement.test) and (_exits(statement.body) or _exits(statement.orelse)):
        return True
    return any(_gates_the_path(s, is_gate) for s in (*statement.body, *statement.orelse))


def guarded_by(node: ast.AST, parent: dict[ast.AST, ast.AST],
               is_gate: Callable[[ast.expr], bool]) -> bool:
    """Whether ``node`` runs only when a test accepted by ``is_gate`` held.

    Either the node sits in a branch of such an ``if``/``while``/conditional expression
    (or after such an ``assert``), or an earlier sibling statement on its path is such an
    ``if`` whose branch leaves the path (``if not approved: return ...``).
    """
    child: ast.AST = node
    current = parent.get(node)
    while current is not None:
        if isinstance(current, (ast.If, ast.While, ast.IfExp)) and child is not current.test \
                and is_gate(current.test):
            return True
        body = None
        for name in ("body", "orelse", "finalbody"):
            block = getattr(current, name, None)
            if isinstance(block, list) and child in block:
                body = block
        if body is not None:
            for statement in body[:body.index(child)]:
                if _gates_the_path(statement, is_gate):
                    return True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        child, current = current, parent.get(current)
    return False


def scope_nodes(root: ast.AST) -> list[ast.AST]:
    """Nodes of ``root`` in source order, not descending into nested function, lambda or
    class definitions (their bodies run elsewhere)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = [root]
    while stack:  # pre-order, children pushed in reverse: statements come in source order
        node = stack.pop()
        out.append(node)
        stack.extend(reversed([c for c in ast.iter_child_nodes(node) if not isinstance(
            c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))]))
    return out


def is_used(facts: CodeFacts, name: str) -> bool:
    """Whether the module calls ``name`` or hands it over as a value (``f``,
    ``self.f``, ``obj.f``): a helper that is only defined does nothing."""
    if any(c.last == name for c in facts.calls):
        return True
    function = facts.functions.get(name)
    if function is not None and function.referenced:
        return True
    return any(kind == "attr" and ident == name for kind, ident, _ in facts.identifiers)
