"""Article 9, bounded impact: a tool that moves money compares the amount with a cap.

A cap counts only when it is checked on the tool's path: an ordering comparison of the
amount (or a value derived from it, ``value = Decimal(amount)``) against an upper bound,
membership in a fixed set of allowed values, a ``min(...)`` clamp, or a call that hands
the amount to a helper in the module that makes such a comparison, or a validated
declaration (``Field(le=...)``) of the amount. A lower-bound test
(``amount <= 0``) is not a cap, and a cap that is only declared (a config key, an
environment variable, a docstring) is not one.
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, FunctionFact, dotted, tokens
from ..impact import _action_of, _category
from ..vocabulary import FINANCIAL_ACTIONS, READ_ONLY_PREFIXES
from .art09_values import ORDERING, ModuleValues, number

MAGNITUDE_WORDS = frozenset({"amount", "quantity", "qty", "total", "price", "sum", "eur",
                             "usd", "gbp", "shares", "units", "cents"})
_MONEY_TYPE = re.compile(r"\b(float|Decimal)\b")
_MONEY_MOVES = frozenset({"refund", "payout", "payment", "transfer", "withdrawal",
                          "disbursement", "wire"})
_RUN_METHODS = frozenset({"_run", "_arun", "run", "arun", "__call__", "invoke"})
_TOOL_DECORATORS = frozenset({"kernel_function", "register_for_llm", "function_tool",
                              "tool", "FunctionTool"})


def agent_tools(facts: CodeFacts) -> list[FunctionFact]:
    """Functions exposed to a model: the facts' tools plus framework registrations
    (``@kernel_function``, ``@agent.register_for_llm``, ``@function_tool``)."""
    out = []
    for function in facts.functions.values():
        lasts = {d.rsplit(".", 1)[-1] for d in function.decorators}
        if function.is_tool or lasts & _TOOL_DECORATORS:
            out.append(function)
    return out


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


def _caps(function: ast.AST, names: set[str], values: ModuleValues) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and _is_upper_bound(node, names, values):
            return True
        if isinstance(node, ast.Call) and dotted(node.func) in ("min", "max", "clamp"):
            if _mentions(node, names):
                return True
    return False


def _helper_caps(facts: CodeFacts, function: ast.AST, names: set[str],
                 values: ModuleValues) -> bool:
    """The amount is handed to a module helper that compares its parameter."""
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        helper = facts.functions.get(dotted(node.func).rsplit(".", 1)[-1])
        if helper is None or helper.node is function:
            continue
        passed = [a for a in (*node.args, *(k.value for k in node.keywords))
                  if _mentions(a, names)]
        if passed and _caps(helper.node, set(helper.params), values):
            return True
    return False


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
    via = _action_of(function)
    return via is not None and _category(function, via) == "financial"


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
        if _caps(function.node, names, values) or _helper_caps(facts, function.node,
                                                               names, values) \
                or names & validated:
            continue
        found.append(f"line {function.line}: {function.name}"
                     f"({', '.join(sorted(magnitudes))}) moves money with no cap compared")
    return found
