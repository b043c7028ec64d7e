"""Static values of an agent module's configuration: module- and class-level literals,
YAML or JSON strings parsed at run time (``yaml.safe_load(TEXT)``, ``json.loads(TEXT)``),
environment defaults (``os.getenv("X", "default")``) and dataclass defaults. A description
that flows from a config dict or an embedded YAML spec into ``description=`` is then
judged by its value; what cannot be known statically is :data:`UNKNOWN`.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass

from ..facts import dotted


class _Unknown:
    """A value the static resolver cannot know (a call result, a loop variable)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()

DESCRIPTIVE_KEYS = frozenset({
    "description", "description_override", "backstory", "goal", "role", "instructions",
    "system_message", "system_prompt", "expected_output",
})
"""Keyword arguments, class attributes and config keys that describe an agent, task or tool."""
_SCHEMA_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})




@dataclass
class Instance:
    """A module dataclass instance: field name -> value."""

    fields: dict[str, object]


def _parse_text(text: str, parser: str) -> object:
    try:
        if parser == "json":
            return json.loads(text)
        import yaml  # a declared dependency; parsed only for embedded config strings

        return yaml.safe_load(text)
    except Exception:  # noqa: BLE001 - malformed embedded config is simply unknown
        return UNKNOWN


class ConstResolver:
    """Static values of module- and class-level names and the expressions built on them."""

    def __init__(self, tree: ast.Module, nodes: list[ast.AST] | None = None) -> None:
        self.values: dict[str, object] = {}
        self.parsed: set[str] = set()
        """Names whose value was parsed from YAML/JSON text or built from a dataclass."""
        self._hit = False
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        for node in nodes if nodes is not None else ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, node)
            elif isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)
        bodies = [tree.body] + [c.body for c in self.classes.values()]
        for body in bodies:
            for stmt in body:
                target, value = assigned_value(stmt)
                if target is not None and value is not None:
                    self._hit = False
                    resolved = self.resolve(value)
                    if resolved is not UNKNOWN:
                        self.values[target] = resolved
                        if self._hit:
                            self.parsed.add(target)

    def resolve(self, node: ast.expr | None, depth: int = 0) -> object:
        """The value of ``node`` if it is known statically, else :data:`UNKNOWN`."""
        if node is None or depth > 12:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(str(v.value) if isinstance(v, ast.Constant) else "{}"
                           for v in node.values)
        if isinstance(node, ast.Name):
            return self.values.get(node.id, UNKNOWN)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.resolve(e, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values, strict=True):
                key = self.resolve(k, depth + 1) if k is not None else UNKNOWN
                if isinstance(key, (str, int)):
                    out[key] = self.resolve(v, depth + 1)
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.resolve(node.left, depth + 1), self.resolve(node.right, depth + 1)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            return UNKNOWN
        if isinstance(node, ast.Subscript):
            container = self.resolve(node.value, depth + 1)
            key = self.resolve(node.slice, depth + 1)
            return _index(container, key)
        if isinstance(node, ast.Attribute):
            if node.attr == "__doc__" and isinstance(node.value, ast.Name):
                fn = self.functions.get(node.value.id) or self.classes.get(node.value.id)
                return ast.get_docstring(fn) if fn is not None else UNKNOWN
            base = self.resolve(node.value, depth + 1)
            if isinstance(base, Instance):
                return base.fields.get(node.attr, UNKNOWN)
            return UNKNOWN
        if isinstance(node, ast.Call):
            return self._resolve_call(node, depth)
        return UNKNOWN

    def _resolve_call(self, node: ast.Call, depth: int) -> object:
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        first = node.args[0] if node.args else None
        if last in ("safe_load", "load", "loads", "safe_load_all") and first is not None:
            text = self.resolve(first, depth + 1)
            if isinstance(text, str):
                self._hit = True
                return _parse_text(text, "json" if name.startswith("json") else "yaml")
            return UNKNOWN
        if last in ("get", "getenv") and name.startswith(("os.", "environ")) or name in (
                "getenv", "os.getenv", "os.environ.get"):
            default = node.args[1] if len(node.args) > 1 else None
            return self.resolve(default, depth + 1) if default is not None else UNKNOWN
        if last == "get" and isinstance(node.func, ast.Attribute) and first is not None:
            container = self.resolve(node.func.value, depth + 1)
            value = _index(container, self.resolve(first, depth + 1))
            if value is UNKNOWN and isinstance(container, dict) and len(node.args) > 1:
                return self.resolve(node.args[1], depth + 1)
            return value
        if last in ("dedent", "strip") and first is not None:
            return self.resolve(first, depth + 1)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "strip" and not node.args:
            return self.resolve(node.func.value, depth + 1)
        cls = self.classes.get(last)
        if cls is not None and _is_dataclass(cls):
            self._hit = True
            return self._instance(cls, node, depth)
        return UNKNOWN

    def _instance(self, cls: ast.ClassDef, node: ast.Call, depth: int) -> Instance:
        names: list[str] = []
        fields: dict[str, object] = {}
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                names.append(stmt.target.id)
                fields[stmt.target.id] = self.resolve(stmt.value, depth + 1)
        for name, arg in zip(names, node.args, strict=False):
            fields[name] = self.resolve(arg, depth + 1)
        for kw in node.keywords:
            if kw.arg:
                fields[kw.arg] = self.resolve(kw.value, depth + 1)
        return Instance(fields)


def assigned_value(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    return None, None


def _index(container: object, key: object) -> object:
    if isinstance(container, dict) and isinstance(key, (str, int)):
        return container.get(key, UNKNOWN)
    if isinstance(container, list) and isinstance(key, int) and -len(container) <= key < len(
            container):
        return container[key]
    return UNKNOWN


def is_parameter_schema(node: ast.Dict) -> bool:
    return any(isinstance(k, ast.Constant) and k.value == "type" and isinstance(v, ast.Constant)
               and v.value in _SCHEMA_TYPES for k, v in zip(node.keys, node.values, strict=True))


def _is_dataclass(cls: ast.ClassDef) -> bool:
    return any(dotted(d).rsplit(".", 1)[-1] == "dataclass" for d in cls.decorator_list) or any(
        dotted(b).rsplit(".", 1)[-1] in ("BaseModel", "BaseSettings", "NamedTuple")
        for b in cls.bases)


def config_texts(value: object, path: str = "") -> Iterator[tuple[str, str, str]]:
    """(path, key, text) for every descriptive key in a resolved config structure."""
    if isinstance(value, Instance):
        value = value.fields
    if isinstance(value, dict) and value.get("type") in _SCHEMA_TYPES:
        return  # a parameter's JSON schema: its description names an argument, not a tool
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if key in DESCRIPTIVE_KEYS and isinstance(item, str):
                yield here, str(key), item
            elif key in DESCRIPTIVE_KEYS and item is None:
                yield here, str(key), ""
            else:
                yield from config_texts(item, here)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from config_texts(item, f"{path}[{i}]")
