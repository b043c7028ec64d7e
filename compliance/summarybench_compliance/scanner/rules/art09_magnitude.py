"""Article 9, bounded impact: a tool that moves money compares the amount with a cap.

A cap counts only when it is checked on the tool's path: an ordering comparison of the
amount (or a value derived from it, ``value = Decimal(amount)``) against an upper bound,
membership in a fixed set of allowed values, a ``min(...)`` clamp, or a call that hands
the amount to a helper in the module that makes such a comparison, a module decorator
whose wrapper makes it on its own amount parameter before calling the tool, or a
validated declaration (``Field(le=...)``) of the amount. A lower-bound test
(``amount <= 0``) is not a cap, nor is a comparison after the money has moved or one
whose branch only logs, and a cap that is only declared (a config key, an
environment variable, a docstring) is not one.
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, FunctionFact, dotted, tokens
from ..impact import action_category, action_of
from ..surface import agent_tools
from ..values import ORDERING, ModuleValues, number
from ..vocabulary import FINANCIAL_ACTIONS, LOGGER_METHODS, READ_ONLY_PREFIXES

MAGNITUDE_WORDS = frozenset({"amount", "quantity", "qty", "total", "price", "sum", "eur",
                             "usd", "gbp", "shares", "units", "cents"})
_MONEY_TYPE = re.compile(r"\b(float|Decimal)\b")
_MONEY_MOVES = frozenset({"refund", "payout", "payment", "transfer", "withdrawal",
                          "disbursement", "wire"})
_MONEY_CALL_VERBS = FINANCIAL_ACTIONS | _MONEY_MOVES | {"post", "submit", "execute"}
_RUN_METHODS = frozenset({"_run", "_arun", "run", "arun", "__call__", "invoke"})


def _aliases(function: ast.AST, params: set[str]) -> set[str]:
    """``params`` plus local names assigned from expressions that use them."""
    names = set(params)
    for _ in range(2):
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
                if used & names:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _mentions(expr: ast.AST, names: set[str]) -> bool:
    """``expr`` uses the amount: a name in ``names``, or an attribute or a constant key
    in ``names`` (``args.amount``, ``payload["amount_eur"]``)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Attribute) and node.attr in names:
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and node.slice.value in names:
            return True
    return False


def _is_upper_bound(compare: ast.Compare, names: set[str], values: ModuleValues) -> bool:
    operands = [compare.left, *compare.comparators]
    if _mentions(compare.left, names) and isinstance(compare.ops[0], (ast.In, ast.NotIn)):
        return True  # the amount must be one of a fixed set of values
    for i, op in enumerate(compare.ops):
        if not isinstance(op, ORDERING):
            continue
        left, right = operands[i], operands[i + 1]
        for mine, other in ((left, right), (right, left)):
            if not _mentions(mine, names):
                continue
            bound = number(values.resolve(other))
            if bound is None or bound > 0:
                return True
    return False


def _enforcing(body: list[ast.stmt]) -> bool:
    """A branch that does something about the breach, not only log or pass."""
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and (
                dotted(stmt.value.func).rsplit(".", 1)[-1] in LOGGER_METHODS | {"print"}):
            continue
        return True
    return False


def _cap_lines(function: ast.AST, names: set[str], values: ModuleValues) -> list[int]:
    """Lines where the amount is capped: an ``if`` on an upper bound whose branch acts
    (returns, raises, clamps; a branch that only logs is not a cap), any other upper-bound
    comparison (``ok = amount <= cap``, ``assert``), or a ``min``/``max`` clamp."""
    lines: list[int] = []
    in_if_tests: set[int] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.While)):
            bounds = [c for c in ast.walk(node.test)
                      if isinstance(c, ast.Compare) and _is_upper_bound(c, names, values)]
            in_if_tests.update(id(c) for c in bounds)
            if bounds and (_enforcing(node.body) or _enforcing(node.orelse)):
                lines.append(node.lineno)
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and id(node) not in in_if_tests \
                and _is_upper_bound(node, names, values):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and dotted(node.func) in ("min", "max", "clamp") \
                and _mentions(node, names):
            lines.append(node.lineno)
    return lines


def _helper_cap_lines(facts: CodeFacts, function: ast.AST, names: set[str],
                      values: ModuleValues) -> list[int]:
    """Lines where the amount is handed to a module helper that caps its parameter."""
    lines = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        helper = facts.functions.get(dotted(node.func).rsplit(".", 1)[-1])
        if helper is None or helper.node is function:
            continue
        passed = [a for a in (*node.args, *(k.value for k in node.keywords))
                  if _mentions(a, names)]
        if passed and _cap_lines(helper.node, set(helper.params), values):
            lines.append(node.lineno)
    return lines


def _decorator_cap_lines(facts: CodeFacts, function: FunctionFact, magnitudes: set[str],
                         values: ModuleValues) -> list[int]:
    """Lines where a module decorator around the tool caps the amount: its wrapper
    compares its own amount parameter with an upper bound before calling through, so
    the cap runs before the tool body."""
    lines: list[int] = []
    for decorator in function.decorators:
        helper = facts.functions.get(decorator.rsplit(".", 1)[-1])
        if helper is None or helper.node is function.node:
            continue
        for inner in ast.walk(helper.node):
            if inner is helper.node or not isinstance(inner, (ast.FunctionDef,
                                                              ast.AsyncFunctionDef)):
                continue
            params = {a.arg for a in (*inner.args.args, *inner.args.kwonlyargs)}
            amounts = {p for p in params if p in magnitudes or set(tokens(p)) & MAGNITUDE_WORDS}
            through = [n.lineno for n in ast.walk(inner) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Name) and n.func.id in helper.params]
            if amounts and through:
                lines.extend(line for line in _cap_lines(inner, _aliases(inner, amounts), values)
                             if line <= min(through))
    return lines


def _money_line(function: FunctionFact) -> int | None:
    """The line of the first call that can move the money: the callee that shows the
    action, or a call with a money or submitting verb (``payments.refund``,
    ``httpx.post``)."""
    via = action_of(function)
    lines = []
    for node in ast.walk(function.node):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        receiver, _, last = name.rpartition(".")
        if name == via or (receiver and set(tokens(last)) & _MONEY_CALL_VERBS):
            lines.append(node.lineno)
    return min(lines) if lines else None


def _tool_class_methods(values: ModuleValues) -> list[FunctionFact]:
    """The run methods of tool classes (``class RefundTool(BaseTool): def _run``) whose
    class is named for a money movement, as facts named after the class."""
    out = []
    for node in values.nodes(ast.ClassDef):
        if not isinstance(node, ast.ClassDef) or not any(
                "Tool" in dotted(b).rsplit(".", 1)[-1] for b in node.bases):
            continue
        words = tokens(node.name)
        if not words or words[0] in READ_ONLY_PREFIXES or not (
                words[0] in FINANCIAL_ACTIONS or set(words) & _MONEY_MOVES):
            continue
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and item.name in _RUN_METHODS:
                params = {a.arg: ast.unparse(a.annotation) if a.annotation else ""
                          for a in (*item.args.args, *item.args.kwonlyargs)}
                out.append(FunctionFact(name=node.name, node=item, docstring=None,
                                        decorators=[], params=params))
    return out


def _moves_money(function: FunctionFact) -> bool:
    words = tokens(function.name)
    if words and words[0] not in READ_ONLY_PREFIXES and set(words) & _MONEY_MOVES:
        return True  # process_refund, execute_payment: named for the money movement
    via = action_of(function)
    return via is not None and action_category(function, via) == "financial"


def _validated_fields(values: ModuleValues) -> set[str]:
    """Names whose declaration carries an upper bound the framework validates:
    ``amount: float = Field(le=500)``, ``Annotated[Decimal, Field(lt=cap)]``."""
    out = set()
    for node in values.nodes(ast.AnnAssign, ast.arg):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared: list[ast.AST] = [node.annotation, *([node.value] if node.value else [])]
            name = node.target.id
        elif isinstance(node, ast.arg) and node.annotation is not None:
            declared, name = [node.annotation], node.arg
        else:
            continue
        for part in declared:
            if any(isinstance(n, ast.keyword) and n.arg in ("le", "lt", "max_value")
                   for n in ast.walk(part)):
                out.add(name)
    return out


def uncapped_money_tools(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Money-moving tools with an amount (a parameter, or a field of one) that is never
    compared with a cap."""
    found = []
    validated = _validated_fields(values)
    candidates = [f for f in agent_tools(facts) if _moves_money(f)]
    for function in (*candidates, *_tool_class_methods(values)):
        magnitudes = {p for p, annotation in function.params.items()
                      if p not in ("self", "cls") and (
                          _MONEY_TYPE.search(annotation)
                          or set(tokens(p)) & MAGNITUDE_WORDS)}
        for node in ast.walk(function.node):
            key = node.attr if isinstance(node, ast.Attribute) else (
                node.slice.value if isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant) else None)
            if isinstance(key, str) and set(tokens(key)) & MAGNITUDE_WORDS:
                magnitudes.add(key)
        if not magnitudes:
            continue
        names = _aliases(function.node, magnitudes)
        if names & validated:
            continue
        if _decorator_cap_lines(facts, function, magnitudes, values):
            continue  # the wrapper caps the amount before the tool body runs
        caps = [*_cap_lines(function.node, names, values),
                *_helper_cap_lines(facts, function.node, names, values)]
        moves = _money_line(function)
        if caps and (moves is None or min(caps) <= moves):
            continue
        found.append(f"line {function.line}: {function.name}"
                     f"({', '.join(sorted(magnitudes))}) moves money with no cap compared")
    return found
