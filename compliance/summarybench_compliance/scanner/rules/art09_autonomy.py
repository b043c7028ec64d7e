"""Article 9, bounded autonomy: every loop that drives a model must be able to stop.

Three ways a run can go on for ever, each read from the syntax tree: an iteration, turn,
round or recursion limit whose configured value (followed through config dicts,
dataclass defaults and environment defaults) is None or implausibly large; a multi-agent
team built with neither a termination condition nor a turn limit, or stopped only by a
phrase some message may never say (also a Semantic Kernel group chat manager with no
round limit and a ``should_terminate`` that only reads messages); and a ``while`` loop
that calls a model and whose only exits depend on what the model says (no counter,
deadline or size comparison that can end it, comparing the model's own score with a
target is none, and no person typing each turn). A wall-clock deadline around the run,
or a callback that raises at a counter or clock bound, is a limit too.
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, dotted
from ..flow import scope_nodes
from ..prompts import is_model_call
from ..values import ORDERING, ModuleValues, is_none, number
from ..vocabulary import LIMIT_KEYWORDS, UNBOUNDED_AT

_TIME_LIMITS = frozenset({"max_execution_time", "max_rpm"})
_EXTRA_LIMITS = frozenset({"max_turns", "max_messages", "max_tool_rounds", "max_auto_reply",
                           "maximum_iterations", "maximum_auto_invoke_attempts",
                           "max_loops", "max_tool_calls", "max_steps", "max_rounds"})
TEAMS_NEEDING_A_STOP = frozenset({"RoundRobinGroupChat", "SelectorGroupChat", "Swarm"})
"""AutoGen AgentChat teams that run until a termination condition or ``max_turns``
stops them (both default to None)."""
_TEAM_STOPS = ("termination_condition", "max_turns")
PHRASE_TERMINATIONS = frozenset({"TextMentionTermination", "StopMessageTermination",
                                 "TextMessageTermination", "SourceMatchTermination",
                                 "FunctionCallTermination"})
"""AutoGen termination conditions that fire only on what a message says or who sends
it; unlike a message, token or time limit they may never fire."""
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


def _phrase_only(stop: ast.expr | None, scope: ast.AST, values: ModuleValues,
                 depth: int = 0) -> bool:
    """A termination condition that ends the run only when some message says a phrase
    (``TextMentionTermination("APPROVE")``, several of them joined): nothing ends it if
    the phrase never comes. A condition the code does not show is given the benefit."""
    if stop is None or depth > 3:
        return False
    if isinstance(stop, ast.BinOp) and isinstance(stop.op, (ast.BitOr, ast.BitAnd)):
        left = _phrase_only(stop.left, scope, values, depth + 1)
        right = _phrase_only(stop.right, scope, values, depth + 1)
        # ``a | b`` ends when either fires; ``a & b`` only when both do.
        return (left and right) if isinstance(stop.op, ast.BitOr) else (left or right)
    if isinstance(stop, ast.Name):
        sources = values.assignments(scope).get(stop.id, [])
        return bool(sources) and all(_phrase_only(v, scope, values, depth + 1)
                                     for v in sources)
    return isinstance(stop, ast.Call) and dotted(stop.func).rsplit(".", 1)[-1] in \
        PHRASE_TERMINATIONS


_DEADLINE_CONTEXTS = frozenset({"timeout", "timeout_at", "fail_after", "move_on_after"})


def _deadline(call: ast.Call, values: ModuleValues) -> bool:
    """``asyncio.wait_for(run(), timeout=900)``, ``asyncio.timeout(60)``,
    ``anyio.fail_after(60)``: a wall-clock limit that is not None."""
    last = dotted(call.func).rsplit(".", 1)[-1]
    if last == "wait_for":
        limit = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "timeout"), None)
    elif last in _DEADLINE_CONTEXTS and dotted(call.func) != "timeout":
        limit = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in ("delay", "seconds", "when")), None)
    else:
        return False
    resolved = values.resolve(limit)
    return limit is not None and not is_none(resolved) and not _endless(resolved)


def deadline_bounded(facts: CodeFacts, values: ModuleValues) -> bool:
    """Whether a run of the model or agent is held to a wall-clock deadline: a deadline
    in a function that drives the model, or one around a call of such a function. Read
    once per scan (the checks of each team and loop ask it)."""
    key = f"{__name__}.deadline_bounded"
    if key not in facts.derived:
        facts.derived[key] = _deadline_bounded(facts, values)
    return bool(facts.derived[key])


def _deadline_bounded(facts: CodeFacts, values: ModuleValues) -> bool:
    drivers = _model_functions(facts)
    for call in facts.calls:
        if not _deadline(call.node, values):
            continue
        if call.function in drivers:
            return True
        wrapped = call.node.args[0] if call.node.args else None
        if isinstance(wrapped, ast.Call) and (
                is_model_call(wrapped) or dotted(wrapped.func).rsplit(".", 1)[-1] in drivers):
            return True
    return False


def run_stoppers(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Callbacks that end a run: a handler class the module instantiates, or a function
    it hands over, that raises when a counter or a clock passes its bound
    (``if self.steps > 8 or time.monotonic() > self.ends_at: raise``)."""
    found = []
    instantiated = {c.last for c in facts.calls}
    candidates: list[tuple[str, ast.AST]] = [
        (n.name, n) for n in values.nodes(ast.ClassDef)
        if isinstance(n, ast.ClassDef) and n.bases and n.name in instantiated]
    candidates += [(f.name, f.node) for f in facts.functions.values() if f.referenced]
    for name, node in candidates:
        for branch in ast.walk(node):
            if isinstance(branch, ast.If) and _bounding(branch.test, values) and any(
                    isinstance(s, ast.Raise) for s in branch.body):
                found.append(f"line {branch.lineno}: {name} stops the run at its bound")
                break
    return found


def _manager_bounded(manager: ast.expr | None, scope: ast.AST, values: ModuleValues,
                     depth: int = 0) -> bool:
    """A Semantic Kernel group chat manager that can end the chat: a ``max_rounds`` that
    is set (on the call, as a class default or assigned later), or a ``should_terminate``
    override that compares a count or a clock. A manager the code does not show is given
    the benefit."""
    if isinstance(manager, ast.Name) and depth < 3:
        sources = values.assignments(scope).get(manager.id) or values.assignments(
            values.nodes(ast.Module)[0]).get(manager.id, [])
        return not sources or any(_manager_bounded(v, scope, values, depth + 1)
                                  for v in sources)
    if not isinstance(manager, ast.Call):
        return True
    rounds = next((k.value for k in manager.keywords if k.arg == "max_rounds"), None)
    if rounds is not None:
        return not is_none(values.resolve(rounds))
    cls = dotted(manager.func).rsplit(".", 1)[-1]
    if values.class_defaults.get(cls, {}).get("max_rounds") is not None:
        return not is_none(values.resolve(values.class_defaults[cls]["max_rounds"]))
    if any(isinstance(n, ast.Attribute) and n.attr == "max_rounds"
           and isinstance(n.ctx, ast.Store) for n in values.nodes(ast.Attribute)):
        return True
    for node in values.nodes(ast.ClassDef):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            overrides = [f for f in node.body if isinstance(
                f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "should_terminate"]
            return any(_bounding(n, values) for f in overrides for n in ast.walk(f)
                       if isinstance(n, ast.expr))
    # A framework manager with no max_rounds never ends the chat on its own.
    return not cls.endswith("GroupChatManager")


def unstoppable_orchestrations(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Semantic Kernel group chats whose manager has no ``max_rounds`` and no
    ``should_terminate`` that counts or times: they end only if some message says so."""
    found = []
    for call in facts.calls:
        if call.last != "GroupChatOrchestration":
            continue
        scope = facts.functions[call.function].node if call.function in facts.functions \
            else facts.tree
        if not _manager_bounded(call.keyword("manager"), scope, values) \
                and not deadline_bounded(facts, values):
            found.append(f"line {call.line}: the group chat manager has no max_rounds and "
                         f"nothing that counts rounds or time ends the chat")
    return found


def unstoppable_teams(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Teams that rotate agents with no termination condition and no turn limit, or
    whose only termination is a phrase some agent may never say."""
    found = []
    for call in facts.calls:
        if call.last not in TEAMS_NEEDING_A_STOP:
            continue
        stops = [values.resolve(call.keyword(k)) for k in _TEAM_STOPS if call.keyword(k)]
        if len(call.node.args) >= 2 or any(not is_none(s) for s in stops):
            turns = values.resolve(call.keyword("max_turns"))
            scope = facts.functions[call.function].node if call.function in \
                facts.functions else facts.tree
            if (turns is None or is_none(turns)) and len(call.node.args) < 2 \
                    and _phrase_only(call.keyword("termination_condition"), scope, values) \
                    and not deadline_bounded(facts, values):
                found.append(f"line {call.line}: {call.last} stops only when a message "
                             f"says a phrase, with no turn, message or time limit")
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


def _bounding(test: ast.expr, values: ModuleValues,
              answers: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether ``test`` holds an ordering comparison whose bound is a real value (a
    counter, a deadline, a size), not a limit configured as None; with ``answers`` (locals
    read from the model's replies), a comparison of an answer with a fixed setting
    (``score >= TARGET``) is a stop the model may never grant, not a bound."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops):
            operands = [node.left, *node.comparators]
            resolved = [values.resolve(o) for o in operands]
            if any(is_none(r) or _endless(r) for r in resolved):
                continue
            if answers and not any(_moves(o, values, answers) for o in operands):
                continue
            return True
    return False


def _moves(operand: ast.expr, values: ModuleValues, answers: frozenset[str] | set[str]
           ) -> bool:
    """An operand that advances on its own (a counter, a clock, a size): not one read
    from the model's answers, nor a fixed setting."""
    names = {n.id for n in ast.walk(operand) if isinstance(n, ast.Name)}
    if names and names <= answers:
        return False
    calls = any(isinstance(n, ast.Call) for n in ast.walk(operand))
    return calls or not names <= set(values.constants) | answers


def _answers(body: list[ast.AST], drivers: set[str]) -> set[str]:
    """Locals of a loop assigned from what the model says (a model call, or a value
    computed from one); a running total (``used = used + reply.tokens``) is a budget."""
    answers: set[str] = set()
    for _ in range(2):
        for node in body:
            if not isinstance(node, ast.Assign):
                continue
            targets = {t.id for t in node.targets if isinstance(t, ast.Name)}
            read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            if targets & read:
                continue
            if read & answers or any(isinstance(n, ast.Call) and (
                    is_model_call(n) or dotted(n.func).rsplit(".", 1)[-1] in drivers)
                    for n in ast.walk(node.value)):
                answers |= targets
    return answers


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
    deadline: bool | None = None
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
        # loop that sleeps between rounds is a scheduler polling for new work (a sleep
        # only in an error handler is a retry back-off, and retries forever).
        handling = {id(n) for h in ast.walk(node) if isinstance(h, ast.ExceptHandler)
                    for n in ast.walk(h)}
        if not drives or any(isinstance(n, ast.Call) and (
                dotted(n.func).rsplit(".", 1)[-1] == "input" or (
                    dotted(n.func).rsplit(".", 1)[-1] == "sleep" and id(n) not in handling))
                for n in body):
            continue
        if isinstance(node, ast.While) and _drains(node, body):
            continue
        if deadline is None:
            deadline = deadline_bounded(facts, values)
        if deadline:
            continue
        answers = _answers(body, drivers)
        guarded = any(isinstance(n, (ast.If, ast.While)) and _bounding(n.test, values,
                                                                        answers)
                      for n in body if n is not node)
        if not guarded:
            found.append(f"line {node.lineno}: loop drives the model with no counter, "
                         f"deadline or size bound")
    return found
