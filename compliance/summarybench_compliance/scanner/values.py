"""What value a name, a key or a setting has, followed through a module's configuration:
module constants, dict keys and ``.get``, class and dataclass defaults,
``os.getenv``/``os.environ`` defaults and YAML/JSON text parsed at run time.

Three resolvers answer that question for different readers, and they stay three because
their answers differ in kind, not in style:

- :class:`ModuleValues` (article 9 and 10 rules) answers with the *expression* a value
  comes from (``ast.expr``), so a rule can point at the literal's line, look inside a
  dict literal, or find that a bound is ``None``; it folds ``int("5")`` and ``a or b``
  and reads ``field(default=...)``. Shallow on purpose (depth 4).
- :class:`ConfigResolver` (article 14 and 15 rules) answers with a Python *literal*,
  followed lazily on demand: a name bound later in the module still resolves, every
  target of ``a = b = value`` is bound, a settings instance's keywords override its
  class defaults, and environment defaults and casts are JSON-coerced (``"true"`` ->
  ``True``, ``"30"`` -> ``30``), as a timeout or approval mode is read at run time.
- :class:`ConstResolver` (article 11 and 12 rules) evaluates every module- and
  class-level binding once, in order, to a literal or :data:`UNKNOWN`, and keeps what it
  built: f-strings and string concatenation (descriptions are built that way),
  ``__doc__``, ``dedent``/``strip``, list indexing, and dataclass instances
  (:class:`Instance`, positional arguments included), and which names came from parsed
  text or a dataclass (``parsed``), so configuration the module reads can be walked
  for tool specs and descriptions.

Folding them into one would change what each article's rules see, so they stand side by
side here and share what is the same in them: :data:`UNKNOWN` (the literal resolvers'
"cannot know"; :class:`ModuleValues` answers with the unresolved node instead) and
:func:`assigned_value` (a single-name module binding). The details that differ are
kept, since each changes what some rule sees (whether each one also changes a labelled
verdict was not tried one by one):

- bindings: ``a = b = value`` binds both names for :class:`ConfigResolver` only; class
  bodies are read as per-class defaults (:class:`ModuleValues`, annotated and plain
  assignments, ``field(default=...)`` unwrapped; :class:`ConfigResolver`, annotated
  only), while :class:`ConstResolver` binds every class-level name alongside the
  module's and builds instances only of dataclass, pydantic and settings classes;
- environment lookups: :class:`ModuleValues` takes ``x.environ.get("K", d)`` anywhere
  in a dotted name but only with a literal key; :class:`ConstResolver` any key but only
  on ``os.``/``environ``; :class:`ConfigResolver` any ``get``/``getenv`` with exactly
  two arguments (a settings dict's ``.get(key, default)`` included) and coerces the
  default as JSON;
- YAML/JSON text: :class:`ConfigResolver` tries JSON then YAML for any loader and lets
  other errors through; :class:`ConstResolver` picks the parser by the loader's module
  and treats any error as unknown.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

from .facts import CodeFacts, dotted

ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
"""Comparison operators that can express a bound (a counter, a deadline, a cap)."""


class _Unknown:
    """A value the static resolvers cannot know (a call result, a loop variable): what
    :class:`ConstResolver` and :class:`ConfigResolver` answer when a value cannot be
    followed back to a literal."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


def assigned_value(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """(name, value) of a single-name binding ``NAME = value`` / ``NAME: T [= value]``
    (value None when only annotated), else (None, None)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    return None, None


# ---------------------------------------------------------------------------------------
# Expressions: article 9 and 10


@dataclass
class ModuleValues:
    """Module-level bindings a configured value can be traced back to."""

    constants: dict[str, ast.expr] = field(default_factory=dict)
    """Module-level ``NAME = value``."""
    class_defaults: dict[str, dict[str, ast.expr]] = field(default_factory=dict)
    """Class name -> field name -> default (dataclass, pydantic and settings classes)."""
    class_fields: dict[str, list[str]] = field(default_factory=dict)
    """Class name -> annotated field names, in order."""
    instances: dict[str, str] = field(default_factory=dict)
    """Module-level ``name = SomeClass(...)`` -> class name."""
    by_type: dict[type, list[ast.AST]] = field(default_factory=dict)
    """Every node of the module by its type, from one walk (the rules' checks look up
    dicts, loops, classes and declarations here instead of walking the tree again)."""
    _assignments: dict[int, dict[str, list[ast.expr]]] = field(
        default_factory=dict, repr=False, compare=False)
    """id of a scope's node -> what :meth:`assignments` found in it (the scope's node is
    alive as long as the tree, which ``by_type`` holds)."""

    def nodes(self, *types: type) -> list[ast.AST]:
        """The module's nodes of ``types``, in walk order per type."""
        return [n for t in types for n in self.by_type.get(t, [])]

    def assignments(self, scope: ast.AST) -> dict[str, list[ast.expr]]:
        """Name -> every value ``name = value`` assigns it anywhere under ``scope`` (the
        module, or a function with what it nests), in walk order; read once per scope,
        so that a rule asking for many names costs one walk, not one per name."""
        found = self._assignments.get(id(scope))
        if found is None:
            found = {}
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign):
                    for name in {t.id for t in node.targets if isinstance(t, ast.Name)}:
                        found.setdefault(name, []).append(node.value)
            self._assignments[id(scope)] = found
        return found

    def resolve(self, node: ast.expr | None, depth: int = 0) -> ast.expr | None:
        """The expression ``node`` stands for, following names, dict keys, ``.get``,
        attribute access on config instances, ``int(os.environ.get(k, default))`` and
        ``a or b`` (a falsy constant gives way to the next operand)."""
        if node is None or depth > 4:
            return node
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.resolve(self.constants[node.id], depth + 1)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            return self._member(node.value, node.slice.value, depth) or node
        if isinstance(node, ast.Attribute):
            owner = node.value
            if isinstance(owner, ast.Name):
                cls = self.instances.get(owner.id, owner.id)
                default = self.class_defaults.get(cls, {}).get(node.attr)
                if default is not None:
                    return self.resolve(default, depth + 1)
            return node
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            # ``int(os.getenv("MAX_ROUNDS", "0")) or None``: the first operand that is
            # not a falsy constant is the value.
            for operand in node.values:
                inner = self.resolve(operand, depth + 1)
                if not isinstance(inner, ast.Constant):
                    return node
                if inner.value:
                    return inner
            return self.resolve(node.values[-1], depth + 1)
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name in ("os.getenv", "getenv") and node.args:
                return self.resolve(node.args[1], depth + 1) if len(node.args) > 1 else None
            if name.endswith(".get") and node.args and isinstance(node.args[0], ast.Constant):
                if "environ" in name or name.startswith("os."):
                    return self.resolve(node.args[1], depth + 1) if len(node.args) > 1 else None
                found = self._member(node.func.value, node.args[0].value, depth)  # type: ignore[attr-defined]
                if found is not None:
                    return found
                return self.resolve(node.args[1], depth + 1) if len(node.args) > 1 else node
            if name in ("int", "float", "Decimal") and len(node.args) == 1:
                inner = self.resolve(node.args[0], depth + 1)
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    try:
                        return ast.Constant(float(inner.value) if inner.value.lower() not in (
                            "none", "null", "") else None)
                    except ValueError:
                        return inner
                return inner
        return node

    def _member(self, owner: ast.expr, key: object, depth: int) -> ast.expr | None:
        container = self.resolve(owner, depth + 1)
        if isinstance(container, ast.Dict):
            for k, v in zip(container.keys, container.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == key:
                    return self.resolve(v, depth + 1)
        return None


def module_values(facts: CodeFacts) -> ModuleValues:
    """Collect the module-level bindings of ``facts`` (one pass over the top level)."""
    values = ModuleValues()
    for node in ast.walk(facts.tree):
        values.by_type.setdefault(type(node), []).append(node)
    for stmt in facts.tree.body:
        name, value = assigned_value(stmt)
        if name is not None and value is not None:
            values.constants[name] = value
            if isinstance(value, ast.Call):
                values.instances[name] = dotted(value.func)
        elif isinstance(stmt, ast.ClassDef):
            defaults: dict[str, ast.expr] = {}
            names: list[str] = []
            for item in stmt.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.append(item.target.id)
                    if item.value is not None:
                        defaults[item.target.id] = _field_default(item.value)
                elif isinstance(item, ast.Assign) and len(item.targets) == 1 \
                        and isinstance(item.targets[0], ast.Name):
                    defaults[item.targets[0].id] = item.value
            values.class_defaults[stmt.name] = defaults
            values.class_fields[stmt.name] = names
    return values


def _field_default(value: ast.expr) -> ast.expr:
    # ``x: int = field(default=5)`` / ``Field(default=5)``
    if isinstance(value, ast.Call) and dotted(value.func).rsplit(".", 1)[-1] in ("field",
                                                                                 "Field"):
        for kw in value.keywords:
            if kw.arg == "default":
                return kw.value
        if value.args:
            return value.args[0]
    return value


def is_none(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def number(node: ast.expr | None) -> float | None:
    """The numeric value of a resolved constant, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Pow, ast.Add)):
        left, right = number(node.left), number(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Pow) and right > 12):
            return None
        if isinstance(node.op, ast.Mult):
            return left * right
        return left ** right if isinstance(node.op, ast.Pow) else left + right
    return None


# ---------------------------------------------------------------------------------------
# Literal values, evaluated once: article 11 and 12


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


def _index(container: object, key: object) -> object:
    if isinstance(container, dict) and isinstance(key, (str, int)):
        return container.get(key, UNKNOWN)
    if isinstance(container, list) and isinstance(key, int) and -len(container) <= key < len(
            container):
        return container[key]
    return UNKNOWN


def _is_dataclass(cls: ast.ClassDef) -> bool:
    return any(dotted(d).rsplit(".", 1)[-1] == "dataclass" for d in cls.decorator_list) or any(
        dotted(b).rsplit(".", 1)[-1] in ("BaseModel", "BaseSettings", "NamedTuple")
        for b in cls.bases)


# ---------------------------------------------------------------------------------------
# Literal values, followed on demand: article 14 and 15


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
        """The literal ``node`` evaluates to, or :data:`UNKNOWN` (see :meth:`known`)."""
        if node is None or depth > 8:
            return UNKNOWN
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
            return UNKNOWN
        if isinstance(node, ast.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return UNKNOWN

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
        return UNKNOWN

    def _call(self, node: ast.Call, depth: int) -> object:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        args = node.args
        if name in ("get", "getenv") and len(args) == 2:
            # os.environ.get(key, default), settings.get(key, default)
            container = self.value(func.value, depth + 1) if isinstance(func, ast.Attribute) \
                else UNKNOWN
            key = self.value(args[0], depth + 1)
            if isinstance(container, dict) and key in container:
                return container[key]
            return self._coerce(self.value(args[1], depth + 1))
        if name in ("get",) and len(args) == 1 and isinstance(func, ast.Attribute):
            container = self.value(func.value, depth + 1)
            key = self.value(args[0], depth + 1)
            if isinstance(container, dict):
                return container.get(key) if isinstance(key, str) else UNKNOWN
        if name in ("loads", "safe_load", "load") and args:
            text = self.value(args[0], depth + 1)
            if isinstance(text, str):
                return self._parse(text)
        if name in ("int", "float", "str", "bool") and len(args) == 1:
            return self._coerce(self.value(args[0], depth + 1))
        return UNKNOWN

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
            return UNKNOWN
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            return UNKNOWN

    @staticmethod
    def known(value: object) -> bool:
        """Whether :meth:`value` followed its node back to a literal."""
        return value is not UNKNOWN
