"""Decisions people record on work items: a ticket, case, change or approval record whose
status, outcome or sign-off a person sets in the system that keeps it, read back and
tested before an action runs.

A *work-item read* is a read (HTTP GET, ``request("GET", ...)``, SQL ``SELECT``) whose
literal target (URL path, table) names a ticket, issue, case, change or approval. A module
function that returns what such a read fetched is a *record reader*. A *decision test*
compares a decision field of that record (``state``, ``status``, ``outcome``,
``decision``, ``signoff``, ..., also part of one: ``rec["fields"]["status"]["name"]``),
or a local assigned one, with a literal, a constant set of values or the state the
instance was configured to require (``self.status``). A function
that leaves early on a failed decision test, or returns the outcome of one, *reads a
person's decision*: tests on what it returns are approval tests, as tests on ``input()``
are. An order's or a service's status
is not a work item: a health or delivery check before an action is no approval.
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, FunctionFact, dotted, tokens

WORK_ITEMS = frozenset({"ticket", "tickets", "issue", "issues", "case", "cases", "change",
                        "changes", "approval", "approvals", "signoff", "signoffs",
                        "decision", "decisions"})
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


def _key(node: ast.expr) -> tuple[object, ast.expr | None]:
    """The key one step of an access chain reads, and what it reads it from."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value, node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and node.args \
            and isinstance(node.args[0], ast.Constant):
        return node.args[0].value, node.func.value
    if isinstance(node, ast.Attribute):
        return node.attr, node.value
    if isinstance(node, ast.Call):
        return None, node.func
    return None, None


def _decision_field(node: ast.expr, records: set[str]) -> bool:
    """``rec["state"]``, ``rec.get("outcome")``, ``rec.status`` on a work-item local, or a
    part of such a field (``rec["fields"]["status"]["name"]``)."""
    decided = False
    current: ast.expr | None = node
    while current is not None and not isinstance(current, ast.Name):
        key, current = _key(current)
        decided = decided or isinstance(key, str) and bool(set(tokens(key)) & DECISION_FIELDS)
    return decided and isinstance(current, ast.Name) and current.id in records


def _literal_side(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id in ("self", "cls"):
        return True  # the state an instance was configured to require
    return isinstance(node, ast.Name) and node.id.isupper()  # a module constant set


def _decision_values(function: ast.AST, records: set[str]) -> set[str]:
    """Locals assigned a decision field of a work item (``current = rec["status"]``)."""
    return {t.id for n in ast.walk(function) if isinstance(n, ast.Assign)
            and _decision_field(n.value, records)
            for t in n.targets if isinstance(t, ast.Name)}


def is_decision_test(test: ast.expr, records: set[str],
                     values: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether ``test`` compares a decision field of a work item (or a local holding
    one, ``values``) with literal values or the instance's configured state."""
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(_decision_field(s, records) or isinstance(s, ast.Name) and s.id in values
               for s in sides) and any(_literal_side(s) for s in sides):
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
        self._values: dict[str, set[str]] = {}
        self.deciders = {f.name for f in facts.functions.values() if self._decides(f)}

    def records(self, function: FunctionFact) -> set[str]:
        if function.name not in self._records:
            records = _record_names(function.node, self.readers)
            self._records[function.name] = records
            self._values[function.name] = _decision_values(function.node, records) \
                if records else set()
        return self._records[function.name]

    def is_decision_test(self, test: ast.expr, function: FunctionFact) -> bool:
        records = self.records(function)
        return bool(records) and is_decision_test(test, records,
                                                  self._values[function.name])

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
