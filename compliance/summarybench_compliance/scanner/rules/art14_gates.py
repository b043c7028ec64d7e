"""Whether a person's decision gates an action, read from control flow.

A test is an approval test when it depends on a human decision: a console ``input()``, a
graph ``interrupt()``, a workflow's wait for a response event, a call of a module function
that asks or waits for one (directly or handed to a thread runner such as
``asyncio.to_thread``; polling a ticket, approvals service or chat message in a loop
that sleeps and compares or re-reads the value it tests, a value no write returned: a
retry loop testing a send's response waits for no one,
or reading a ticket, case or change record and leaving early unless its recorded
decision holds: see :mod:`.art14_decisions`), a value assigned from any of these, a
comparison of such a record's decision field with literal values, or a comparison with
an assent word (``"yes"``, ``"approved"``). An action is gated when it runs only on the
branch where such a test held (see ``scanner.flow.guarded_by``); a decorator,
middleware, dispatch loop or wrapper tool (``self.inner._run(...)``) gates the calls it
guards. A flag that says approval is
required, a docstring that promises it, or an approval helper that nothing calls is not a
gate.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..facts import CodeFacts, FunctionFact, dotted, tokens
from ..flow import body_nodes, guarded_by, parents
from ..values import ConfigResolver
from .art14_actions import is_outbound_write
from .art14_decisions import Decisions

ASSENT = frozenset({"y", "yes", "approve", "approved", "approval", "confirm", "granted",
                    "proceed", "signed", "signoff"})
"""Words a person's assent is compared with (generic vocabulary). Status words a service
also returns (``"ok"``, ``"accepted"``, ``"confirmed"``) are left out: a health or order
status check before an action is not an approval."""
_DECISION_KEYS = frozenset({"approved", "approval", "signoff", "approver"})
"""Keys and attributes that hold a person's decision (not a model's ``decision``)."""
_HUMAN_CALLS = frozenset({"input", "interrupt", "wait_for_event", "getpass"})
"""Calls that block until a person answers (console, graph interrupt, workflow wait)."""
_ASKING = frozenset({"approve", "approved", "approval", "approvals", "approver",
                     "confirm", "confirmation", "confirmed", "signoff", "consent"})
"""Words of a call (receiver or method) that asks a person or reads their decision
(``request_approval``, ``wait_for_confirmation``, ``approvals.wait_for_decision``)."""


def _written(node: ast.AST) -> set[str]:
    """Names holding what a write returned, or values derived from it."""
    assigns = [n for n in ast.walk(node) if isinstance(n, ast.Assign)]
    names: set[str] = set()
    for _ in range(3):
        for n in assigns:
            if any(isinstance(c, ast.Call) and is_outbound_write(c)
                   or isinstance(c, ast.Name) and c.id in names for c in ast.walk(n.value)):
                names.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return names


def _reads(value: ast.expr, written: set[str]) -> bool:
    """A value fetched by a call that writes nothing (a send's response in a retry loop,
    or a field of it, is not an answer someone gave; a read asking about what was
    written, ``poll(message["ts"])``, is)."""
    calls = [c for c in ast.walk(value) if isinstance(c, ast.Call)]
    if not calls or any(is_outbound_write(c) for c in calls):
        return False
    passed = {id(n) for c in calls for a in (*c.args, *(k.value for k in c.keywords))
              for n in ast.walk(a)}
    return not any(isinstance(n, ast.Name) and n.id in written and id(n) not in passed
                   for n in ast.walk(value))


def _rereads(loop: ast.For | ast.While | ast.AsyncFor, inner: list[ast.AST],
             written: set[str]) -> bool:
    """The loop tests a value it reads again on every pass (``while verdict is None:
    ... verdict = poll()``, ``row = fetch(); if row: return row``)."""
    read = {t.id for n in inner if isinstance(n, ast.Assign) and _reads(n.value, written)
            for t in n.targets if isinstance(t, ast.Name)}
    tests = [loop.test] if isinstance(loop, ast.While) else []
    tests.extend(n.test for n in inner if isinstance(n, ast.If))
    return any(isinstance(n, ast.Name) and n.id in read for t in tests for n in ast.walk(t))


def _loops_that_wait(node: ast.AST) -> list[ast.For | ast.While | ast.AsyncFor]:
    """Loops that sleep between attempts and compare a value with a string, or test a
    value they read again on every pass: waiting for a status or an answer someone
    else sets."""
    out = []
    for loop in ast.walk(node):
        if not isinstance(loop, (ast.For, ast.While, ast.AsyncFor)):
            continue
        inner = list(ast.walk(loop))
        sleeps = any(isinstance(n, ast.Call) and dotted(n.func).endswith("sleep")
                     for n in inner)
        if not sleeps:
            continue
        compares = any(isinstance(n, ast.Compare) and any(
            isinstance(c, ast.Constant) and isinstance(c.value, str)
            or isinstance(c, (ast.Set, ast.Tuple, ast.List))
            for c in n.comparators) for n in inner)
        if compares or _rereads(loop, inner, _written(loop)):
            out.append(loop)
    return out


@dataclass
class Gates:
    """Approval gates of one module."""

    facts: CodeFacts
    config: ConfigResolver
    asking: set[str] = field(default_factory=set)
    """Module functions that ask a person or wait for a decision."""
    decorator_gates: set[str] = field(default_factory=set)
    """Decorators whose wrapper calls the wrapped function only after approval."""
    module_wide: list[str] = field(default_factory=list)
    """Evidence of gates that cover every tool call (framework settings, middleware)."""
    decisions: Decisions | None = None
    """Work items (tickets, cases, change records) whose recorded decision is tested."""
    _parents: dict[str, dict[ast.AST, ast.AST]] = field(default_factory=dict)
    _tainted: dict[str, set[str]] = field(default_factory=dict)

    # -- what a person decides -------------------------------------------------------

    def _asks(self, call: ast.Call, own: str | None = None) -> bool:
        name = dotted(call.func)
        last = name.rsplit(".", 1)[-1]
        if last in _HUMAN_CALLS or (last in self.asking and last != own):
            return True
        words = tokens(last)
        if set(tokens(name.replace(".", "_"))) & _ASKING or words[:1] == ["ask"]:
            return True
        # asyncio.to_thread(input, ...), loop.run_in_executor(None, confirm_payout, ...):
        # a function handed to a thread runner is called by it.
        return any(isinstance(a, ast.Name) and (a.id in _HUMAN_CALLS or a.id in self.asking
                                                and a.id != own) for a in call.args)

    def _tainted_names(self, function: FunctionFact) -> set[str]:
        if function.name in self._tainted:
            return self._tainted[function.name]
        names: set[str] = set()
        written = _written(function.node)
        waiting = {id(n) for loop in _loops_that_wait(function.node)
                   for n in ast.walk(loop)
                   if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr))
                   and n.value is not None and _reads(n.value, written)}
        assigns = [n for n in body_nodes(function.node)
                   if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr))]
        for _ in range(3):
            for node in assigns:
                value = node.value
                if value is None:
                    continue
                source = id(node) in waiting or any(
                    isinstance(n, ast.Call) and self._asks(n, function.name)
                    or isinstance(n, ast.Name) and n.id in names for n in ast.walk(value))
                if source:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        names.update(n.id for n in ast.walk(target)
                                     if isinstance(n, ast.Name))
        self._tainted[function.name] = names
        return names

    def is_gate(self, test: ast.expr, function: FunctionFact) -> bool:
        """Whether ``test`` depends on a person's decision (see the module docstring)."""
        if self.decisions is not None and self.decisions.is_decision_test(test, function):
            return True
        tainted = self._tainted_names(function)
        for node in ast.walk(test):
            if isinstance(node, ast.Call) and self._asks(node, function.name):
                return True
            if isinstance(node, ast.Name) and node.id in tainted:
                return True
            if isinstance(node, ast.Compare):
                for value in [node.left, *node.comparators]:
                    for const in ast.walk(value):
                        if isinstance(const, ast.Constant) and isinstance(const.value, str) \
                                and const.value.strip().lower() in ASSENT:
                            return True
            key: object = None
            if isinstance(node, ast.Attribute):
                key = node.attr
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            if isinstance(key, str) and set(tokens(key)) & _DECISION_KEYS \
                    and isinstance(node, ast.expr) \
                    and not self.config.known(self.config.value(node)):
                return True
        return False

    def parent_map(self, function: FunctionFact) -> dict[ast.AST, ast.AST]:
        if function.name not in self._parents:
            self._parents[function.name] = parents(function.node)
        return self._parents[function.name]

    def requests_approval(self, node: ast.AST, function: FunctionFact) -> bool:
        """Whether ``node`` is the approval request itself: a write whose result (a
        message id, a ticket), directly or through values derived from it, is what a
        later approval test waits on."""
        parent = self.parent_map(function)
        current: ast.AST | None = node
        while current is not None and not isinstance(current, (ast.Assign, ast.AnnAssign)):
            if isinstance(current, ast.stmt):
                return False
            current = parent.get(current)
        if current is None:
            return False
        targets = current.targets if isinstance(current, ast.Assign) else [current.target]
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        # What the test reads may be derived from the request's result: the message's
        # timestamp handed to a poll, the created item's id read back.
        assigns = [n for n in ast.walk(function.node) if isinstance(n, ast.Assign)]
        for _ in range(3):
            for assign in assigns:
                if any(isinstance(n, ast.Name) and n.id in names
                       for n in ast.walk(assign.value)):
                    names.update(n.id for t in assign.targets for n in ast.walk(t)
                                 if isinstance(n, ast.Name))
        for test_owner in ast.walk(function.node):
            if isinstance(test_owner, (ast.If, ast.While, ast.IfExp)) \
                    and self.is_gate(test_owner.test, function) \
                    and any(isinstance(n, ast.Name) and n.id in names
                            for n in ast.walk(test_owner.test)):
                return True
        return False

    def guarded(self, node: ast.AST, function: FunctionFact) -> bool:
        """Whether ``node`` (inside ``function``) runs only after an approval test held."""
        return guarded_by(node, self.parent_map(function),
                          lambda test: self.is_gate(test, function))


def _framework_approvals(facts: CodeFacts, config: ConfigResolver) -> list[str]:
    out = []
    for call, value in facts.keyword_values("human_input_mode"):
        if config.value(value) == "ALWAYS":
            out.append(f"line {call.line}: human_input_mode resolves to 'ALWAYS' on "
                       f"{call.name}")
    for keyword in ("interrupt_before", "interrupt_after", "needs_approval",
                    "require_approval"):
        for call, value in facts.keyword_values(keyword):
            resolved = config.value(value)
            if resolved not in (None, False, [], "never") and config.known(resolved) \
                    or not config.known(resolved) and not isinstance(value, ast.Constant):
                out.append(f"line {call.line}: {keyword} on {call.name}")
    for call in facts.calls_named("HumanApprovalCallbackHandler"):
        out.append(f"line {call.line}: HumanApprovalCallbackHandler")
    return out


_DISPATCH = frozenset({"invoke", "ainvoke", "call_tool", "run_tool", "execute_tool",
                       "invoke_function", "run", "arun", "call", "acall"})
_DISPATCHERS = frozenset({"kernel", "tool", "tools", "function", "functions", "plugin",
                          "plugins", "session", "registry", "toolkit"})
"""Method and receiver words of a call that runs a tool chosen at run time."""


_TOOL_RUNS = frozenset({"_run", "_arun", "run", "arun", "invoke", "ainvoke", "call",
                        "acall", "__call__"})
"""Methods through which a framework runs a tool object."""


def _instance_field(node: ast.expr) -> bool:
    """``self.inner``: a tool object a wrapper instance holds."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def _function_values_called(function: FunctionFact, facts: CodeFacts) -> list[ast.Call]:
    """Calls of a function held in a variable: a wrapper's ``fn(...)``, a hook's
    ``next(context)``, a dispatch loop's ``TOOLS[name](**args)``."""
    params: set[str] = set()
    for node in ast.walk(function.node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            params.update(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    local: set[str] = set()
    for node in body_nodes(function.node):
        if not isinstance(node, ast.Assign):
            continue
        value = node.value
        looked_up = isinstance(value, ast.Subscript) or (
            isinstance(value, ast.Call) and dotted(value.func).endswith(("get", "getattr")))
        if looked_up:
            local.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def held(e: ast.expr) -> bool:
        return isinstance(e, ast.Subscript) or (
            isinstance(e, ast.Name) and (e.id in params or e.id in local)
            and e.id not in facts.functions)

    out = []
    for node in body_nodes(function.node):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if held(func) or isinstance(func, ast.Call) and dotted(func.func) == "getattr":
            out.append(node)
        elif isinstance(func, ast.Attribute) and (
                held(func.value) or func.attr in _DISPATCH
                and set(tokens(dotted(func.value).replace(".", "_"))) & _DISPATCHERS
                or func.attr in _TOOL_RUNS and _instance_field(func.value)):
            # TOOLS[name].run(...), kernel.invoke(function, ...), session.call_tool(...),
            # a wrapper tool's self.inner._run(...)
            out.append(node)
    return out


def find_gates(facts: CodeFacts) -> Gates:
    """The module's approval gates."""
    config = ConfigResolver(facts.tree)
    decisions = Decisions(facts)
    gates = Gates(facts, config, asking=set(decisions.deciders), decisions=decisions)
    for function in facts.functions.values():
        asks = any(isinstance(n, ast.Call) and n.func is not None
                   and dotted(n.func).rsplit(".", 1)[-1] in _HUMAN_CALLS
                   for n in body_nodes(function.node))
        if asks or _loops_that_wait(function.node):
            gates.asking.add(function.name)
    gates.module_wide.extend(_framework_approvals(facts, config))
    decorator_uses = {d.rsplit(".", 1)[-1] for f in facts.functions.values()
                      for d in f.decorators}
    for function in facts.functions.values():
        gated_calls = [c for c in _function_values_called(function, facts)
                       if gates.guarded(c, function)]
        if not gated_calls:
            continue
        if function.name in decorator_uses:
            gates.decorator_gates.add(function.name)
        else:
            gates.module_wide.append(f"line {gated_calls[0].lineno}: {function.name} calls "
                                     f"the tool only after approval")
    return gates
