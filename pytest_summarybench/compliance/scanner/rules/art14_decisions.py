"""Decisions people record on work items: a ticket, case, change or approval record whose
status, outcome or sign-off a person sets in the system that keeps it, read back and
tested before an action runs.

A *work-item read* is a read (HTTP GET, ``request("GET", ...)``, SQL ``SELECT``) whose
literal target (URL path, table) names a ticket, case, change or approval. A module
function that returns what such a read fetched is a *record reader*. A *decision test*
compares a decision field of that record (``state``, ``status``, ``outcome``,
``decision``, ``signoff``, ...) with a literal or a constant set of values. A function
that leaves early on a failed decision test, or returns the outcome of one, *reads a
person's decision*: tests on what it returns are approval tests, as tests on ``input()``
are. An order's or a service's status
is not a work item: a health or delivery check before an action is no approval.
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, FunctionFact, dotted, tokens

WORK_ITEMS = frozenset({"ticket", "tickets", "case", "cases", "change", "changes",
                        "approval", "approvals", "signoff", "signoffs", "decision",
                        "decisions"})
"""Words of a record a person works and decides on (URL path or table name)."""
DECISION_FIELDS = frozenset({"state", "status", "outcome", "decision", "resolution",
                             "signoff", "approved", "approver", "approval", "decided"})
"""Tokens of the field that holds what the person decided."""
_READS = frozenset({"get", "request", "execute", "fetch"})
_WORD = re.compile(r"[a-z]+")


def _literal_parts(call: ast.Call) -> list[str]:
    parts = []
    for arg in call.args[:2]:
        for node in ast.walk(arg):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                parts.append(node.value)
    return parts


def reads_work_item(call: ast.Call) -> bool:
    """A read of a ticket, case, change or approval record from the service keeping it."""
    last = dotted(call.func).rsplit(".", 1)[-1]
    if last not in _READS or not isinstance(call.func, ast.Attribute):
        return False
    parts = _literal_parts(call)
    if last == "request" and not (parts and parts[0].upper() == "GET"):
        return False
    words: set[str] = set()
    for part in parts:
        lowered = part.lower()
        if "/" in part or lowered.lstrip().startswith("select"):
            words.update(_WORD.findall(lowered))
    return bool(words & WORK_ITEMS)


def _record_names(function: ast.AST, readers: set[str]) -> set[str]:
    """Locals holding a work item: assigned from a work-item read, a record reader's
    result, or such a local."""
    names: set[str] = set()
    assigns = [n for n in ast.walk(function) if isinstance(n, ast.Assign)]
    for _ in range(3):
        for node in assigns:
            source = any(
                isinstance(n, ast.Call) and (reads_work_item(n) or dotted(n.func).rsplit(
                    ".", 1)[-1] in readers) or isinstance(n, ast.Name) and n.id in names
                for n in ast.walk(node.value))
            if source:
                names.update(n.id for t in node.targets for n in ast.walk(t)
                             if isinstance(n, ast.Name))
    return names


def _decision_field(node: ast.expr, records: set[str]) -> bool:
    """``rec["state"]``, ``rec.get("outcome")``, ``rec.status`` on a work-item local."""
    key: object = None
    owner: ast.expr | None = None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        key, owner = node.slice.value, node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and node.args \
            and isinstance(node.args[0], ast.Constant):
        key, owner = node.args[0].value, node.func.value
    elif isinstance(node, ast.Attribute):
        key, owner = node.attr, node.value
    if not isinstance(key, str) or not set(tokens(key)) & DECISION_FIELDS:
        return False
    root = owner
    while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
        root = root.func if isinstance(root, ast.Call) else root.value
    return isinstance(root, ast.Name) and root.id in records


def _literal_side(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    return isinstance(node, ast.Name) and node.id.isupper()  # a module constant set


def is_decision_test(test: ast.expr, records: set[str]) -> bool:
    """Whether ``test`` compares a decision field of a work item with literal values."""
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(_decision_field(s, records) for s in sides) \
                and any(_literal_side(s) for s in sides):
            return True
    return False


class Decisions:
    """Record readers and decision-reading functions of one module."""

    def __init__(self, facts: CodeFacts) -> None:
        self.readers: set[str] = set()
        for function in facts.functions.values():
            local = _record_names(function.node, set())
            if any(isinstance(n, ast.Return) and n.value is not None and any(
                    isinstance(m, ast.Name) and m.id in local
                    or isinstance(m, ast.Call) and reads_work_item(m)
                    for m in ast.walk(n.value)) for n in ast.walk(function.node)):
                self.readers.add(function.name)
        self._records: dict[str, set[str]] = {}
        self.deciders = {f.name for f in facts.functions.values() if self._decides(f)}

    def records(self, function: FunctionFact) -> set[str]:
        if function.name not in self._records:
            self._records[function.name] = _record_names(function.node, self.readers)
        return self._records[function.name]

    def is_decision_test(self, test: ast.expr, function: FunctionFact) -> bool:
        records = self.records(function)
        return bool(records) and is_decision_test(test, records)

    def _decides(self, function: FunctionFact) -> bool:
        """Leaves early unless a decision test on a work item holds, or returns the
        outcome of such a test (``return ticket["state"] == "Authorised"``)."""
        for node in ast.walk(function.node):
            if isinstance(node, ast.If) and self.is_decision_test(node.test, function) \
                    and any(isinstance(s, (ast.Return, ast.Raise))
                            for s in (*node.body, *node.orelse)):
                return True
            if isinstance(node, ast.Return) and node.value is not None \
                    and self.is_decision_test(node.value, function):
                return True
        return False
