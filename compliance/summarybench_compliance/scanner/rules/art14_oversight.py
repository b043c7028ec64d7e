"""Article 14, human oversight: an agent must not take consequential actions on its own.

The rule reads behaviour, not promises. It finds the functions that act on the world by
what their bodies do (``art14_actions``: an outbound write whose target carries a verb of
paying, messaging, suspending, revoking, deploying, ...; drafts, notes and queues a person
works through are not actions), then asks whether each action runs only on the branch
where a person approved it (``art14_gates``): an ``if`` on a console answer, a graph
interrupt, a workflow's response event, a polled ticket or approvals-service status; a
decorator, middleware filter or dispatch loop that calls the tool only after such a test;
or a framework setting that asks before every tool call, followed from configuration
(``human_input_mode`` resolving to ``ALWAYS`` through a settings dict, dataclass,
environment default or parsed YAML/JSON), ``interrupt_before``, ``needs_approval``,
``HumanApprovalCallbackHandler``, a CrewAI ``human_input=True`` review task before the
acting agent. Docstrings, comments and flags that say approval is required count for
nothing unless a test reads them.

Checks (each has a firing and a quiet example in tests/test_rules_art14_15.py):

1. acting functions: an outbound write (HTTP POST/PUT/PATCH/DELETE, mail or message
   send, payment-SDK create, verb-first client call, patch_/replace_ client update, SQL
   UPDATE/DELETE, subprocess) whose function name, method or literal request parts carry
   a generic verb of action; bookkeeping writes (draft, save, note, queue, propose, ...)
   and records created pending a person's release are not actions, a payload marked
   public or an endpoint that sends is; bound methods handed to the agent
   (``tools=[ops.restart]``) are exposed.
2. gated in place: the write runs only inside, or after an early exit of, an approval test
   in the same function (a test of a person's answer, or of the decision recorded on a
   ticket, case or change record, ``art14_decisions``); a write whose result that test
   waits on, directly or through values derived from it (the approval request message or
   ticket), is part of the gate, not an action, and so is the call of a module function
   that asks a person and whose own writes are only such requests;
   a client call of a method the module defines is judged by that method's body.
3. gated by a wrapper: the function is decorated by a decorator whose wrapper calls it
   only after an approval test.
4. gated by its callers: a helper that is not exposed to the agent and whose every call
   site is gated.
5. gated module-wide: a middleware/filter/dispatch loop, or a wrapper tool calling the
   tool it holds (``self.inner._run``), that calls tools only after an approval test, or
   a framework approval setting followed through configuration.
6. severity: CRITICAL when an ungated action moves money or destroys data, HIGH
   otherwise (messages to people, account and access changes, deployments, publishing).
"""

from __future__ import annotations

import ast
import dataclasses

from ..base import ArticleResult
from ..facts import CodeFacts, FunctionFact, dotted, tokens
from .art14_actions import Action, acting_functions, local_calls
from .art14_gates import Gates, find_gates

_TOOL_DECORATORS = frozenset({"tool", "tools", "function", "register", "llm"})
"""Tokens of the last part of a decorator that hands a function to an agent
(``@tool``, ``@function_tool``, ``@kernel_function``, ``@agent.register_for_llm``)."""


_RUN_METHODS = frozenset({"_run", "_arun", "run", "arun", "__call__", "invoke", "ainvoke",
                          "call", "acall", "execute"})
"""Methods through which a framework runs a tool class."""


def _registers(decorator: str) -> bool:
    return bool(_TOOL_DECORATORS & set(tokens(decorator.rsplit(".", 1)[-1])))


def _literal(node: ast.expr | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _list_names(node: ast.expr | None) -> set[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return {e.id for e in node.elts if isinstance(e, ast.Name)}
    return set()


def _review_tasks(facts: CodeFacts) -> list[tuple[int, set[str]]]:
    """CrewAI tasks with ``human_input=True``: (line, tools of the task's agent).

    Human feedback on a task is requested after its agent answered, so it only guards
    actions taken by *later* tasks, never the reviewed agent's own tools.
    """
    reviews = []
    for call in facts.calls_named("Task"):
        if _literal(call.keyword("human_input")) is not True:
            continue
        agent = call.keyword("agent")
        own_tools: set[str] = set()
        if isinstance(agent, ast.Name) and agent.id in facts.assignments:
            own_tools = _list_names(facts.assignments[agent.id].keyword("tools"))
        reviews.append((call.line, own_tools))
    return reviews


def _exposed(function: FunctionFact) -> bool:
    """Handed to an agent: referenced as a value or registered by a decorator."""
    return function.referenced or any(_registers(d) for d in function.decorators)


def _methods_passed_as_values(tree: ast.Module) -> set[str]:
    """Attribute names loaded as values, not called (``obj.method`` in a tools list or a
    wrapper's argument)."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load) and id(n) not in called}


def _with_nested_tools(facts: CodeFacts) -> CodeFacts:
    """``facts`` whose function table also holds tools defined inside other functions
    (``@tool`` functions built in a factory method), which the collector leaves inside
    their enclosing function."""
    functions = dict(facts.functions)
    loaded = None
    for outer in facts.functions.values():
        for node in ast.walk(outer.node):
            if node is outer.node or not isinstance(node, (ast.FunctionDef,
                                                           ast.AsyncFunctionDef)):
                continue
            decorators = [dotted(d) for d in node.decorator_list]
            if node.name in functions or not any(_registers(d) for d in decorators):
                continue
            if loaded is None:
                loaded = {n.id for n in ast.walk(facts.tree)
                          if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            params = {a.arg: "" for a in (*node.args.posonlyargs, *node.args.args,
                                          *node.args.kwonlyargs)}
            functions[node.name] = FunctionFact(
                name=node.name, node=node, docstring=ast.get_docstring(node),
                decorators=decorators, params=params, referenced=node.name in loaded)
    # A bound method handed over as a value (``FunctionTool.from_defaults(fn=ops.restart)``,
    # ``tools=[ops.restart, ops.scale]``) is exposed like a function named bare.
    for name in _methods_passed_as_values(facts.tree):
        fact = functions.get(name)
        if fact is not None and not fact.referenced:
            functions[name] = dataclasses.replace(fact, referenced=True)
    # A tool class (``class RefundTool(BaseTool)``) hands its run method to the agent.
    for node in facts.tree.body:
        if not isinstance(node, ast.ClassDef) or not any(
                "tool" in tokens(dotted(b).rsplit(".", 1)[-1]) for b in node.bases):
            continue
        for method in node.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and method.name in _RUN_METHODS:
                key = f"{node.name}.{method.name}"
                functions[key] = FunctionFact(
                    name=key, node=method, docstring=ast.get_docstring(method),
                    decorators=[dotted(d) for d in method.decorator_list],
                    params={a.arg: "" for a in method.args.args}, referenced=True)
    if functions == facts.functions:
        return facts
    return dataclasses.replace(facts, functions=functions)


def _agent_reachable(facts: CodeFacts) -> set[str]:
    """Functions the agent can run: the exposed ones and everything they call."""
    calls = local_calls(facts)
    seen = {f.name for f in facts.functions.values() if _exposed(f)}
    stack = list(seen)
    while stack:
        for callee, _ in calls.get(stack.pop(), []):
            if callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return seen


class _Oversight:
    """Which acting functions run only after a person approved."""

    def __init__(self, facts: CodeFacts, gates: Gates,
                 acting: dict[str, list[Action]]) -> None:
        self.facts = facts
        self.gates = gates
        self.acting = acting
        self._memo: dict[str, bool] = {}
        self._callers: dict[str, list[tuple[FunctionFact, ast.Call]]] = {}
        for function in facts.functions.values():
            for action in acting.get(function.name, []):
                callee = action.via.removeprefix("calls ").removesuffix("()")
                if action.via.startswith("calls ") and isinstance(action.node, ast.Call):
                    self._callers.setdefault(callee, []).append((function, action.node))

    def gated(self, name: str, depth: int = 0) -> bool:
        if name in self._memo:
            return self._memo[name]
        function = self.facts.functions[name]
        result = self._gated(function, depth)
        self._memo[name] = result
        return result

    def _gated(self, function: FunctionFact, depth: int) -> bool:
        if any(d.rsplit(".", 1)[-1] in self.gates.decorator_gates
               for d in function.decorators):
            return True
        actions = self.acting.get(function.name, [])
        if actions and all(self.gates.guarded(a.node, function)
                           or self.gates.requests_approval(a.node, function)
                           or self._own_method_gated(a, function, depth)
                           or self._asks_first(a, depth)
                           for a in actions):
            return True
        callers = self._callers.get(function.name, [])
        if callers and not _exposed(function) and depth < 4:
            return all(self.gates.guarded(call, caller) or self.gated(caller.name, depth + 1)
                       for caller, call in callers)
        return False


    def _asks_first(self, action: Action, depth: int) -> bool:
        """A call of a module function that asks a person and whose own writes are only
        the approval request (``wait_for_lead`` filing a review item and polling it) is
        the gate, not an action."""
        via = action.via
        if not via.startswith(("calls ", "write through ")) or depth >= 4:
            return False
        callee = via.removeprefix("calls ").removeprefix("write through ").removesuffix("()")
        return callee in self.gates.asking and (
            callee not in self.acting or self.gated(callee, depth + 1))

    def _own_method_gated(self, action: Action, function: FunctionFact, depth: int) -> bool:
        """A client call of a method the module defines (``desk.suspend_if_decided()``)
        is judged by that method's body: gated when its own writes are, or when it makes
        none."""
        node = action.node
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) \
                or depth >= 4:
            return False
        callee = node.func.attr
        if callee == function.name or callee not in self.facts.functions:
            return False
        return callee not in self.acting or self.gated(callee, depth + 1)


class HumanOversightRule:
    """Acting tools must run only after a person approved the action."""

    article = 14
    title = "Human oversight"
    checks = (
        "acting functions, read from their bodies: an outbound write (HTTP POST/PUT/PATCH/"
        "DELETE, mail or message send, payment-SDK create, verb-first client call, "
        "patch_/replace_ client update, SQL UPDATE/DELETE, subprocess) whose name, method "
        "or URL/SQL text carries a verb of paying, messaging, suspending, revoking, "
        "deploying...; drafts, notes, queues and records created pending a person's "
        "release ('status': 'pending', 'draft': True) are bookkeeping, a payload marked "
        "'public': True or an endpoint that sends (/tickets/email) reaches people on any "
        "record (a leading verb of messaging or "
        "paying acts whatever record noun follows); functions and bound methods "
        "(tools=[ops.restart]) handed to the agent are its tools",
        "gated in place: the write runs only inside, or after an early return of, a test "
        "on a person's decision (input() or a module function asking one, also when run "
        "through asyncio.to_thread, interrupt(), a response event, a value a loop that "
        "sleeps polls until it is set or matches (a ticket or approvals status, a chat "
        "reaction or button press; not a retry loop testing a write's own response), a "
        "value compared with 'yes'/'approved', the state/status/"
        "outcome/sign-off field (or part of one, or a local holding it) of a ticket, "
        "issue, case, change or approval record read from its service and compared with "
        "literal values or the instance's configured state, or the result of a function "
        "that leaves early unless such a field holds or returns that comparison); a "
        "write whose result (or a value derived from it) that test waits on is the "
        "approval request, not an action, as is the call of a module function that "
        "asks and writes nothing else; "
        "a client call of a method the "
        "module defines is judged by that method's body",
        "gated by a wrapper: a decorator whose wrapper calls the function only after such "
        "a test",
        "gated by its callers: an unexposed helper whose every call site is gated",
        "gated module-wide: a filter, middleware, dispatch loop or wrapper tool "
        "(self.inner._run) that calls tools only after such a test; human_input_mode "
        "resolving to 'ALWAYS' (through dicts, dataclasses, env defaults, parsed "
        "YAML/JSON), interrupt_before, needs_approval, "
        "HumanApprovalCallbackHandler, a CrewAI human_input review task before the acting "
        "agent",
        "flags, docstrings and comments that promise approval count for nothing",
        "severity: CRITICAL when an ungated action moves money or destroys data, HIGH "
        "otherwise",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        facts = _with_nested_tools(facts)
        acting = acting_functions(facts)
        if not acting:
            return ArticleResult.ok(self.article, "no acting functions")
        gates = find_gates(facts)
        if gates.module_wide:
            return ArticleResult.ok(self.article, *gates.module_wide)
        reviews = _review_tasks(facts)
        oversight = _Oversight(facts, gates, acting)
        reachable = _agent_reachable(facts)
        ungated: list[Action] = []
        for name, actions in acting.items():
            if name not in reachable or name in gates.decorator_gates:
                continue
            if any(name not in own for _, own in reviews):
                continue
            if not oversight.gated(name):
                ungated.extend(a for a in actions if not a.via.startswith("calls "))
                ungated.extend(a for a in actions if a.via.startswith("calls ")
                               and _exposed(facts.functions[name]))
        if not ungated:
            return ArticleResult.ok(self.article, "every acting function is gated by an "
                                    "approval")
        severity = "CRITICAL" if any(a.grave for a in ungated) else "HIGH"
        evidence = [f"line {a.line}: {a.function} acts ({a.via}) without a human approval "
                    f"gating it" for a in ungated]
        return ArticleResult.violation(self.article, severity, *evidence)
