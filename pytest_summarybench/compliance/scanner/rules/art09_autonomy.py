"""Article 9, bounded autonomy: every loop that drives a model must be able to stop.

Three ways a run can go on for ever, each read from the syntax tree: an iteration, turn,
round or recursion limit whose configured value (followed through config dicts,
dataclass defaults and environment defaults) is None or implausibly large; a multi-agent
team built with neither a termination condition nor a turn limit; and a ``while`` loop
that calls a model and whose only exits depend on what the model says (no counter,
deadline or size comparison that can end it, and no person typing each turn).
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, dotted
from ..vocabulary import LIMIT_KEYWORDS, UNBOUNDED_AT
from .art09_values import ORDERING, ModuleValues, is_model_call, is_none, number, scope_nodes

_TIME_LIMITS = frozenset({"max_execution_time", "max_rpm"})
_EXTRA_LIMITS = frozenset({"max_turns", "max_messages", "max_tool_rounds", "max_auto_reply",
                           "maximum_iterations", "maximum_auto_invoke_attempts",
                           "max_loops", "max_tool_calls", "max_steps", "max_rounds"})
TEAMS_NEEDING_A_STOP = frozenset({"RoundRobinGroupChat", "SelectorGroupChat", "Swarm"})
"""AutoGen AgentChat teams that run until a termination condition or ``max_turns``
stops them (both default to None)."""
_TEAM_STOPS = ("termination_condition", "max_turns")
_TEXT_LIMIT = re.compile(
    r"[\"']?\b(" + "|".join(sorted(LIMIT_KEYWORDS | _EXTRA_LIMITS)) + r")\b[\"']?\s*[:=]\s*"
    r"(null|None|~|\d+)\b")


def _limit_problem(keyword: str, value: ast.expr | None) -> str | None:
    # A time or rate limit left at None is the frameworks' default and still leaves the
    # iteration limit in force, so only counted limits are judged.
    if keyword in _TIME_LIMITS:
        return None
    if is_none(value):
        return f"{keyword}=None"
    if _endless(value):
        return f"{keyword} set to a value that never binds"
    amount = number(value)
    if amount is not None and amount >= UNBOUNDED_AT:
        return f"{keyword}={amount:g}"
    return None


def unbounded_limits(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Limits configured as None or >= UNBOUNDED_AT: call keywords, config-dict entries,
    dataclass defaults and JSON/YAML text parsed at run time."""
    found = []
    names = LIMIT_KEYWORDS | _EXTRA_LIMITS
    for call in facts.calls:
        for kw in call.node.keywords:
            if kw.arg in names:
                problem = _limit_problem(kw.arg, values.resolve(kw.value))
                if problem:
                    found.append(f"line {call.line}: {problem} on {call.name}")
    for call in facts.calls:
        if call.last.endswith("Workflow") and is_none(values.resolve(call.keyword("timeout"))) \
                and call.keyword("timeout") is not None:
            found.append(f"line {call.line}: {call.last}(timeout=None) runs without a "
                         f"time limit")
    for call, value in facts.keyword_values("is_termination_msg"):
        if isinstance(value, ast.Lambda) and isinstance(value.body, ast.Constant) \
                and value.body.value is False:
            found.append(f"line {call.line}: is_termination_msg never fires")
    for node in values.nodes(ast.Dict):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in names:
                    problem = _limit_problem(str(key.value), values.resolve(value))
                    if problem:
                        found.append(f"line {key.lineno}: {problem} in a config dict")
    for cls, defaults in values.class_defaults.items():
        for name, value in defaults.items():
            if name in names:
                problem = _limit_problem(name, values.resolve(value))
                if problem:
                    found.append(f"{cls}.{problem} (config class default)")
    docstrings = {ast.get_docstring(n, clean=False) for n in values.nodes(  # prose
        ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    for text, line in facts.strings:
        if text in docstrings:
            continue
        for match in _TEXT_LIMIT.finditer(text):
            raw = match.group(2)
            value = ast.Constant(None if raw in ("null", "None", "~") else int(raw))
            problem = _limit_problem(match.group(1), value)
            if problem:
                found.append(f"line {line}: {problem} in configuration text")
    return sorted(set(found))


def unstoppable_teams(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Teams that rotate agents with no termination condition and no turn limit."""
    found = []
    for call in facts.calls:
        if call.last not in TEAMS_NEEDING_A_STOP:
            continue
        stops = [values.resolve(call.keyword(k)) for k in _TEAM_STOPS if call.keyword(k)]
        if len(call.node.args) >= 2 or any(not is_none(s) for s in stops):
            continue
        found.append(f"line {call.line}: {call.last} has no termination_condition or "
                     f"max_turns")
    return found


def _endless(value: ast.expr | None) -> bool:
    """``float("inf")``, ``math.inf``, ``sys.maxsize``: a bound that never binds."""
    if value is None:
        return False
    if isinstance(value, ast.Constant) and isinstance(value.value, float):
        return value.value == float("inf")
    return dotted(value) in ("math.inf", "sys.maxsize", "inf", "numpy.inf", "np.inf")


def _bounding(test: ast.expr, values: ModuleValues) -> bool:
    """Whether ``test`` holds an ordering comparison whose bound is a real value (a
    counter, a deadline, a size), not a limit configured as None."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops):
            operands = [node.left, *node.comparators]
            resolved = [values.resolve(o) for o in operands]
            if not any(is_none(r) or _endless(r) for r in resolved):
                return True
    return False


def _model_functions(facts: CodeFacts) -> set[str]:
    """Module functions that call a model directly."""
    return {c.function for c in facts.calls if c.function and is_model_call(c.node)}


def _huge_range(call: ast.Call, values: ModuleValues) -> bool:
    """``range(10_000)``, ``range(MAX_ROUNDS)`` with a limit of UNBOUNDED_AT or more."""
    stop = number(values.resolve(call.args[-1 if len(call.args) < 3 else 1])) \
        if call.args else None
    return stop is not None and stop >= UNBOUNDED_AT


def _drains(loop: ast.While, body: list[ast.AST]) -> bool:
    """``while pending: item = pending.pop()`` with nothing added back, or ``while
    attempts: attempts -= 1``: the loop consumes a finite supply."""
    tested = {dotted(n) for n in ast.walk(loop.test)
              if isinstance(n, (ast.Name, ast.Attribute))} - {""}
    if not tested:
        return False
    takes = adds = False
    for n in body:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and dotted(n.func.value) in tested:
            takes |= n.func.attr in ("pop", "popleft", "popitem")
            adds |= n.func.attr in ("append", "appendleft", "extend", "add", "insert")
        elif isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Sub) \
                and dotted(n.target) in tested:
            takes = True
    return takes and not adds


def unbounded_loops(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """``while`` loops (and ``for`` over an endless counter) that call a model and have no
    comparison against a counter, deadline or size anywhere in their test or body."""
    drivers = _model_functions(facts)
    found = []
    for node in values.nodes(ast.While, ast.For, ast.AsyncFor):
        if isinstance(node, ast.While):
            endless = not _bounding(node.test, values)
        elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call):
            endless = dotted(node.iter.func).rsplit(".", 1)[-1] in ("count", "cycle") or (
                dotted(node.iter.func) == "range" and _huge_range(node.iter, values))
        else:
            continue
        if not endless:
            continue
        body = scope_nodes(node)
        drives = any(isinstance(n, ast.Call) and (
            is_model_call(n) or dotted(n.func).rsplit(".", 1)[-1] in drivers) for n in body)
        # A loop that waits for a person each turn (input()) is driven by that person; a
        # loop that sleeps between rounds is a scheduler polling for new work.
        if not drives or any(isinstance(n, ast.Call) and dotted(n.func).rsplit(".", 1)[-1]
                             in ("input", "sleep") for n in body):
            continue
        if isinstance(node, ast.While) and _drains(node, body):
            continue
        guarded = any(isinstance(n, (ast.If, ast.While)) and _bounding(n.test, values)
                      for n in body if n is not node)
        if not guarded:
            found.append(f"line {node.lineno}: loop drives the model with no counter, "
                         f"deadline or size bound")
    return found
