"""Article 9, bounded impact: a tool that moves money compares the amount with a cap.

A cap counts only when it is checked on the tool's path: an ordering comparison of the
amount (or a value derived from it, ``value = Decimal(amount)``) against an upper bound,
membership in a fixed set of allowed values, a ``min(...)`` clamp, or a call that hands
the amount to a helper in the module that makes such a comparison. A lower-bound test
(``amount <= 0``) is not a cap, and a cap that is only declared (a config key, an
environment variable, a docstring) is not one.
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, FunctionFact, dotted, tokens
from ..impact import _action_of, _category
from .art09_values import ORDERING, ModuleValues, number

MAGNITUDE_WORDS = frozenset({"amount", "quantity", "qty", "total", "price", "sum", "eur",
                             "usd", "gbp", "shares", "units", "value", "cents"})
_MONEY_TYPE = re.compile(r"\b(float|Decimal)\b")
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


def _is_upper_bound(compare: ast.Compare, names: set[str], values: ModuleValues) -> bool:
    operands = [compare.left, *compare.comparators]
    left_names = {n.id for n in ast.walk(compare.left) if isinstance(n, ast.Name)}
    if left_names & names and isinstance(compare.ops[0], (ast.In, ast.NotIn)):
        return True  # the amount must be one of a fixed set of values
    for i, op in enumerate(compare.ops):
        if not isinstance(op, ORDERING):
            continue
        left, right = operands[i], operands[i + 1]
        for mine, other in ((left, right), (right, left)):
            mentions = {n.id for n in ast.walk(mine) if isinstance(n, ast.Name)} & names
            if not mentions:
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
            if {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & names:
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
                  if {n.id for n in ast.walk(a) if isinstance(n, ast.Name)} & names]
        if passed and _caps(helper.node, set(helper.params), values):
            return True
    return False


def uncapped_money_tools(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Money-moving tools with an amount parameter that is never compared with a cap."""
    found = []
    for function in agent_tools(facts):
        via = _action_of(function)
        if via is None or _category(function, via) != "financial":
            continue
        magnitudes = {p for p, annotation in function.params.items()
                      if p not in ("self", "cls") and (
                          _MONEY_TYPE.search(annotation)
                          or set(tokens(p)) & MAGNITUDE_WORDS)}
        if not magnitudes:
            continue
        names = _aliases(function.node, magnitudes)
        if _caps(function.node, names, values) or _helper_caps(facts, function.node,
                                                               names, values):
            continue
        found.append(f"line {function.line}: {function.name}"
                     f"({', '.join(sorted(magnitudes))}) moves money with no cap compared")
    return found
