"""Where a value comes from, and what a statement is guarded by: the small amount of data
and control flow the article 14 and 15 rules read from the syntax tree.

``ConfigResolver`` follows a keyword value back to a literal through the ways agent code
keeps settings: module constants, dict literals (``SETTINGS["mode"]``), dataclass
defaults (``CFG.mode``), ``os.environ.get(name, default)`` and YAML/JSON text parsed at
run time. ``guarded_by`` answers whether a node runs only on the branch where a test held:
inside the ``if``, or after an ``if`` on the same path that returns or raises otherwise.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator

_MISSING = object()
"""A value that could not be followed back to a literal."""


def body_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` except decorator expressions (``@app.post(...)`` is
    registration, not something the function does when it runs)."""
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and child in current.decorator_list:
                continue
            stack.append(child)


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


class ConfigResolver:
    """Follows names, dict keys, dataclass fields and environment defaults to literals."""

    def __init__(self, tree: ast.Module) -> None:
        self._names: dict[str, ast.expr] = {}
        self._fields: dict[str, dict[str, ast.expr]] = {}
        for statement in tree.body:
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        self._names[target.id] = statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None \
                    and isinstance(statement.target, ast.Name):
                self._names[statement.target.id] = statement.value
            elif isinstance(statement, ast.ClassDef):
                self._fields[statement.name] = {
                    s.target.id: s.value for s in statement.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                    and s.value is not None}

    def value(self, node: ast.expr | None, depth: int = 0) -> object:
        """The literal ``node`` evaluates to, or :data:`_MISSING` (see :meth:`known`)."""
        if node is None or depth > 8:
            return _MISSING
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.value(e, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):
            return {self.value(k, depth + 1): self.value(v, depth + 1)
                    for k, v in zip(node.keys, node.values, strict=True) if k is not None}
        if isinstance(node, ast.Name):
            return self.value(self._names.get(node.id), depth + 1)
        if isinstance(node, ast.Subscript):
            container = self.value(node.value, depth + 1)
            key = self.value(node.slice, depth + 1)
            if isinstance(container, dict) and key in container:
                return container[key]
            return _MISSING
        if isinstance(node, ast.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return _MISSING

    def _attribute(self, node: ast.Attribute, depth: int) -> object:
        owner = node.value
        if isinstance(owner, ast.Name):
            bound = self._names.get(owner.id)
            # CFG = Settings(...) or CFG = Settings: keyword given, else the field default.
            if isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name):
                for kw in bound.keywords:
                    if kw.arg == node.attr:
                        return self.value(kw.value, depth + 1)
                cls = bound.func.id
            else:
                cls = owner.id
            field = self._fields.get(cls, {}).get(node.attr)
            if field is not None:
                return self.value(field, depth + 1)
        container = self.value(owner, depth + 1)
        if isinstance(container, dict) and node.attr in container:
            return container[node.attr]
        return _MISSING

    def _call(self, node: ast.Call, depth: int) -> object:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        args = node.args
        if name in ("get", "getenv") and len(args) == 2:
            # os.environ.get(key, default), settings.get(key, default)
            container = self.value(func.value, depth + 1) if isinstance(func, ast.Attribute) \
                else _MISSING
            key = self.value(args[0], depth + 1)
            if isinstance(container, dict) and key in container:
                return container[key]
            return self._coerce(self.value(args[1], depth + 1))
        if name in ("get",) and len(args) == 1 and isinstance(func, ast.Attribute):
            container = self.value(func.value, depth + 1)
            key = self.value(args[0], depth + 1)
            if isinstance(container, dict):
                return container.get(key) if isinstance(key, str) else _MISSING
        if name in ("loads", "safe_load", "load") and args:
            text = self.value(args[0], depth + 1)
            if isinstance(text, str):
                return self._parse(text)
        if name in ("int", "float", "str", "bool") and len(args) == 1:
            return self._coerce(self.value(args[0], depth + 1))
        return _MISSING

    @staticmethod
    def _coerce(value: object) -> object:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value

    @staticmethod
    def _parse(text: str) -> object:
        try:
            return json.loads(text)
        except ValueError:
            pass
        try:
            import yaml  # optional: YAML settings embedded as text
        except ImportError:  # pragma: no cover - yaml ships with the dev environment
            return _MISSING
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            return _MISSING

    @staticmethod
    def known(value: object) -> bool:
        return value is not _MISSING
