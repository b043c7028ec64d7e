"""Where a value comes from: module constants, config dicts, dataclass defaults, env
defaults, and which calls hand work to a model.

Articles 9 and 10 both ask questions of the form "does this setting or this record field
reach that call", so the lookups are written once here. Resolution is deliberately
shallow (module-level bindings, one level of dict or dataclass indirection): enough for
the configuration idioms agent code uses, cheap enough to run on every scan.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..facts import CodeFacts, dotted

MODEL_CALLS = frozenset({
    "invoke", "ainvoke", "run", "arun", "run_sync", "run_streamed", "run_stream", "stream",
    "astream", "structured_predict", "astructured_predict",
    "kickoff", "kickoff_async", "initiate_chat", "a_initiate_chat", "chat", "achat",
    "step", "get_response", "invoke_prompt", "get_chat_message_content",
    "get_chat_message_contents", "generate_reply", "a_generate_reply", "complete",
    "acomplete", "generate_content", "predict",
})
"""Method names that hand a prompt to an agent or a model (framework entry points)."""
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
"""Comparison operators that can express a bound (a counter, a deadline, a cap)."""
_CREATE_RECEIVERS = frozenset({"completions", "messages", "responses", "chat"})
_NOT_MODEL_RECEIVERS = frozenset({"asyncio", "subprocess", "loop", "trio", "anyio"})


def is_model_call(node: ast.Call) -> bool:
    """Whether ``node`` sends work to a model or an agent (``client.chat.completions.
    create``, ``Runner.run``, ``agent.invoke``, ``crew.kickoff``, ...)."""
    name = dotted(node.func)
    receiver, _, last = name.rpartition(".")
    if not receiver:
        return False
    parts = set(receiver.split("."))
    if last == "create":
        return bool(parts & _CREATE_RECEIVERS)
    return last in MODEL_CALLS and not parts & _NOT_MODEL_RECEIVERS


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

    def nodes(self, *types: type) -> list[ast.AST]:
        """The module's nodes of ``types``, in walk order per type."""
        return [n for t in types for n in self.by_type.get(t, [])]

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
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            values.constants[stmt.targets[0].id] = stmt.value
            if isinstance(stmt.value, ast.Call):
                values.instances[stmt.targets[0].id] = dotted(stmt.value.func)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                and stmt.value is not None:
            values.constants[stmt.target.id] = stmt.value
            if isinstance(stmt.value, ast.Call):
                values.instances[stmt.target.id] = dotted(stmt.value.func)
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
