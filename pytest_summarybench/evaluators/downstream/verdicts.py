"""Verdicts on generated code that the generated code cannot forge.

A completion task's tests are plain Python statements with ``assert``s. Run as written,
the code under test shares a process with them: it can read the expected values out of
the test's frame, return an object whose ``__eq__`` always agrees, print a "passed" line
for every test and exit. So the tests never decide anything where that code runs:

1. ``compile_tests`` rewrites each test twice. Every ``assert`` becomes a *check*: its
   expression is split into operands (the sides of comparisons, the terms of ``and`` and
   ``not``) joined by a predicate kept here. An operand built only from literals,
   immutable constants of the test, builtins and names imported from the package is
   *pinned*: an expected value (but not a side of ``is``: identity holds between objects
   of one process, so both sides are observed in the same run). The **candidate**
   program (run on the generated code) evaluates and reports only the unpinned operands;
   the expected values are not in it.
   The **reference** program (run on the original code) reports every operand.
2. Both run in the sandbox with ``_sb_harness.py``, which reports values as plain data.
3. ``judge`` decides each test here: the candidate must reach the same checks in the same
   order as the original code, and each check's predicate must hold with the candidate's
   unpinned operands and the reference's pinned ones. A check with no pinned operand
   (``assert a == b`` over two computed values) must in addition observe what the
   original code observed, so a report of two equal made-up values earns nothing.

Equality is decided on the plain-data form: values of the same type with equal contents
(dataclasses, objects by their attributes, containers, enums) are equal, ``1 == 1.0`` as
in Python, and anything the encoding cannot compare (functions, ``<`` between objects)
fails the check. ``if ...: raise AssertionError`` still works (it reports a failure),
but its expected values are then visible to the code under test: write ``assert``.
"""

from __future__ import annotations

import ast
import builtins
import copy
import json
from dataclasses import dataclass, field
from typing import Any

from .observations import MalformedTrace, TestTrace, Value, decode, evaluate, read_trace

_SAFE_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_")) - {
    "eval", "exec", "open", "input", "globals", "locals", "vars", "__import__", "breakpoint",
    "compile", "setattr", "delattr", "getattr", "help", "exit", "quit"}


# -- the rewrite ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """One ``assert`` of a test: its predicate and its operands."""

    line: int
    """Line of the ``assert`` within the test."""
    source: str
    """The assertion's expression as written (for failure reasons)."""
    predicate: ast.expr
    """The expression with each operand replaced by ``Name('_sb_op<i>')``."""
    pinned: tuple[bool, ...]
    """Per operand: True when it is an expected value (reported by the reference only)."""
    fail_point: bool = False
    """A ``raise AssertionError``: reaching it fails the test."""


@dataclass
class CompiledTest:
    """A test rewritten for the candidate and the reference runs."""

    name: str
    candidate: str
    reference: str
    checks: list[Check] = field(default_factory=list)
    target: str = ""
    """The qualified name of the function or method under test."""


def _operands(node: ast.expr) -> tuple[ast.expr, list[ast.expr]]:
    """(predicate with placeholders, operands) of an assertion's expression."""
    found: list[ast.expr] = []

    def leaf(expr: ast.expr) -> ast.expr:
        found.append(expr)
        return ast.Name(id=f"_sb_op{len(found) - 1}", ctx=ast.Load())

    def split(expr: ast.expr) -> ast.expr:
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
            return ast.BoolOp(op=ast.And(), values=[split(v) for v in expr.values])
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return ast.UnaryOp(op=ast.Not(), operand=split(expr.operand))
        if isinstance(expr, ast.Compare):
            return ast.Compare(left=leaf(expr.left), ops=list(expr.ops),
                               comparators=[leaf(c) for c in expr.comparators])
        return leaf(expr)

    return split(node), found


class _Scope:
    """Which names of a test are expected-value material (see ``_Pinning``)."""

    def __init__(self, tree: ast.Module, excluded: set[str]) -> None:
        bound: dict[str, int] = {}
        constants: set[str] = set()
        imported: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound[node.id] = bound.get(node.id, 0) + 1
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[node.name] = bound.get(node.name, 0) + 1
            elif isinstance(node, ast.arg):
                bound[node.arg] = bound.get(node.arg, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    bound[name] = bound.get(name, 0) + 2
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = (alias.asname or alias.name).split(".")[0]
                    imported.add(name)
                    bound[name] = bound.get(name, 0) + 1
        self.excluded = excluded
        self.imported = imported - excluded
        self.bound = bound
        self.constants = constants
        # Names assigned once, at the top, to an immutable constant expression.
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and bound.get(node.targets[0].id) == 1
                    and self.immutable(node.value)):
                constants.add(node.targets[0].id)

    def immutable(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, ast.Tuple):
            return all(self.immutable(e) for e in expr.elts)
        if isinstance(expr, ast.UnaryOp):
            return self.immutable(expr.operand)
        if isinstance(expr, ast.BinOp):
            return self.immutable(expr.left) and self.immutable(expr.right)
        if isinstance(expr, ast.JoinedStr):
            return all(self.immutable(v.value if isinstance(v, ast.FormattedValue) else v)
                       for v in expr.values)
        if isinstance(expr, ast.Name):
            return expr.id in self.constants
        return False

    def pinned(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is an expected value: it reads nothing the code under test
        can have touched, and calls nothing of it by name."""
        for node in ast.walk(expr):
            if isinstance(node, ast.Name):
                ok = (node.id in self.imported or node.id in self.constants
                      or (node.id in _SAFE_BUILTINS and node.id not in self.bound))
                if not ok or node.id in self.excluded:
                    return False
            elif isinstance(node, ast.Attribute) and (node.attr in self.excluded
                                                      or node.attr.startswith("_")):
                return False
            elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                   ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield,
                                   ast.YieldFrom, ast.Starred)):
                return False
        return True


def _raises_assertion(node: ast.Raise) -> bool:
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "AssertionError"


class _Rewriter(ast.NodeTransformer):
    def __init__(self, scope: _Scope, code: str, reference: bool,
                 checks: list[Check]) -> None:
        self.scope = scope
        self.code = code
        self.reference = reference
        self.checks = checks
        self.index = 0

    def _next(self, make: Any) -> int:
        k = self.index
        self.index += 1
        if len(self.checks) <= k:
            self.checks.append(make())
        return k

    def visit_Assert(self, node: ast.Assert) -> Any:
        def make() -> Check:
            predicate, operands = _operands(copy.deepcopy(node.test))
            identity = _identity_operands(predicate)
            # ``is`` holds between objects of one process: both sides are observed in
            # the candidate's run, never one taken from the reference's.
            pinned = tuple(self.scope.pinned(op) and i not in identity
                           for i, op in enumerate(operands))
            if all(pinned):  # nothing observed of the code under test: observe it all
                pinned = tuple(False for _ in pinned)
            source = ast.get_source_segment(self.code, node.test) or ast.unparse(node.test)
            return Check(line=node.lineno, source=" ".join(source.split())[:200],
                         predicate=predicate, pinned=pinned)

        k = self._next(make)
        check = self.checks[k]
        _, operands = _operands(copy.deepcopy(node.test))
        kept = [op for op, pin in zip(operands, check.pinned, strict=True)
                if self.reference or not pin]
        call = ast.Call(func=ast.Attribute(value=ast.Name(id="_sbh", ctx=ast.Load()),
                                           attr="check", ctx=ast.Load()),
                        args=[ast.Constant(k), ast.Tuple(elts=kept, ctx=ast.Load())],
                        keywords=[])
        return ast.copy_location(ast.Expr(value=call), node)

    def visit_Raise(self, node: ast.Raise) -> Any:
        if not _raises_assertion(node):
            return node
        k = self._next(lambda: Check(line=node.lineno, source="raise AssertionError",
                                     predicate=ast.Constant(False), pinned=(),
                                     fail_point=True))
        call = ast.Expr(value=ast.Call(
            func=ast.Attribute(value=ast.Name(id="_sbh", ctx=ast.Load()), attr="fail",
                               ctx=ast.Load()),
            args=[ast.Constant(k)], keywords=[]))
        bare = ast.Raise(exc=ast.Name(id="AssertionError", ctx=ast.Load()), cause=None)
        return [ast.copy_location(call, node), ast.copy_location(bare, node)]


def compile_tests(tests: list[tuple[str, str, str]]) -> list[CompiledTest]:
    """Rewrite (name, code, target) tests, ``target`` the qualified name of the function
    or method under test, into candidate and reference programs. Raises ``SyntaxError``."""
    out = []
    for name, code, target in tests:
        tree = ast.parse(code)
        scope = _Scope(tree, {target.rsplit(".", 1)[-1]})
        checks: list[Check] = []
        programs = []
        for reference in (False, True):
            rewritten = _Rewriter(scope, code, reference, checks).visit(copy.deepcopy(tree))
            programs.append(ast.unparse(ast.fix_missing_locations(rewritten)))
        out.append(CompiledTest(name=name, candidate=programs[0], reference=programs[1],
                                checks=checks, target=target))
    return out


def harness_program(compiled: list[CompiledTest], *, reference: bool) -> str:
    """The ``_sb_main.py`` of a run: the harness runs the rewritten tests."""
    tests = [(t.name, t.reference if reference else t.candidate) for t in compiled]
    targets = sorted({t.target for t in compiled if t.target})
    return ("import _sb_harness\n"
            f"_sb_harness.main(__import__('json').loads({json.dumps(json.dumps(tests))}), "
            f"channel_fd, {targets!r})\n")


# -- judging --------------------------------------------------------------------------------
@dataclass
class TestVerdict:
    """Whether a test passed, and why not."""

    __test__ = False  # not a pytest class

    name: str
    passed: bool
    error: str | None = None


def _short(values: list[Any]) -> str:
    return ", ".join(repr(v)[:80] for v in values)


def _judge_one(test: CompiledTest, ref: TestTrace, cand: TestTrace) -> TestVerdict:
    name = test.name
    ref_ok = ref.ended and ref.error is None and all("o" in e for e in ref.events)
    if not ref_ok:
        why = ref.error or "it did not finish"
        return TestVerdict(name, False, f"the test does not pass on the original code ({why})")
    if not cand.started:
        return TestVerdict(name, False, "not run")
    for position, expected in enumerate(ref.events):
        check = test.checks[expected["c"]]
        if position >= len(cand.events):
            if cand.error:
                return TestVerdict(name, False, f"{cand.error} (before the check at line "
                                                f"{check.line}: {check.source})")
            return TestVerdict(name, False, f"the test stopped before the check at line "
                                            f"{check.line}: {check.source}")
        got = cand.events[position]
        if got.get("fail"):
            return TestVerdict(name, False, f"reached the failure at line "
                                            f"{test.checks[got['c']].line}")
        if got["c"] != expected["c"]:
            return TestVerdict(name, False, f"reached the check at line "
                                            f"{test.checks[got['c']].line} where the original "
                                            f"code reached line {check.line}")
        verdict = _judge_check(check, expected["o"], got["o"])
        if verdict is not None:
            return TestVerdict(name, False, f"check at line {check.line} failed: "
                                            f"{check.source}; {verdict}")
    if len(cand.events) > len(ref.events):
        extra = cand.events[len(ref.events)]
        where = test.checks[extra["c"]].line if 0 <= extra["c"] < len(test.checks) else "?"
        return TestVerdict(name, False, f"reached a check at line {where} the original code "
                                        "does not reach")
    if cand.error:
        return TestVerdict(name, False, cand.error)
    if not cand.ended:
        return TestVerdict(name, False, "the test did not finish")
    return TestVerdict(name, True)


def _judge_check(check: Check, ref_values: list[Any], cand_values: list[Any]) -> str | None:
    """None when the check holds, else what went wrong."""
    unpinned = [i for i, pin in enumerate(check.pinned) if not pin]
    if len(ref_values) != len(check.pinned) or len(cand_values) != len(unpinned):
        return "the report has the wrong number of values"
    # Identity marks count within one run only: an object of the candidate's run is
    # never ``is`` an object of the reference run's.
    ref = [_of_run(decode(v), "reference") for v in ref_values]
    cand = [_of_run(decode(v), "candidate") for v in cand_values]
    operands = list(ref)
    for i, value in zip(unpinned, cand, strict=True):
        operands[i] = value
    try:
        if not evaluate(check.predicate, ref):
            return "it does not hold on the original code either"
        if not evaluate(check.predicate, operands):
            return f"got {_short(cand)}"
    except (TypeError, ValueError, IndexError, ArithmeticError) as exc:
        return f"cannot be decided on the reported values ({exc})"
    if not any(check.pinned) and not _same_observations([ref[i] for i in unpinned], cand):
        return f"got {_short(cand)}, the original code gives {_short([ref[i] for i in unpinned])}"
    return None


def _identity_operands(predicate: ast.expr) -> set[int]:
    """The operands (by index) on either side of an ``is`` or ``is not``."""
    found: set[int] = set()
    for node in ast.walk(predicate):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if isinstance(op, (ast.Is, ast.IsNot)):
                    for side in sides[i:i + 2]:
                        if isinstance(side, ast.Name) and side.id.startswith("_sb_op"):
                            found.add(int(side.id[len("_sb_op"):]))
    return found


def _same_observations(ref: list[Any], cand: list[Any]) -> bool:
    """Whether the candidate observed what the original code did: values of equal
    content (objects of two runs are never the same object)."""
    def content(value: Any) -> Any:
        return Value(value.tag, value.data) if isinstance(value, Value) else value
    return [content(v) for v in ref] == [content(v) for v in cand]


def _of_run(value: Any, run: str) -> Any:
    if isinstance(value, Value) and value.identity is not None:
        return Value(value.tag, value.data, (run, value.identity),
                     identity_eq=value.identity_eq)
    return value


def judge(compiled: list[CompiledTest], reference: str, candidate: str,
          run_failure: str | None) -> list[TestVerdict]:
    """Each test's verdict from the reference and candidate runs' report channels.

    ``run_failure`` is the sandbox's reason when the candidate run ended abnormally
    (timeout, limit, refusal): tests it never finished fail with it.
    """
    ref = read_trace(reference, len(compiled))
    try:
        cand = read_trace(candidate, len(compiled))
    except MalformedTrace as exc:
        return [TestVerdict(t.name, False, f"the test run's report was tampered with: {exc}")
                for t in compiled]
    verdicts = []
    for test, r, c in zip(compiled, ref, cand, strict=True):
        try:
            verdict = _judge_one(test, r, c)
        except (IndexError, KeyError, TypeError, ValueError) as exc:
            # A report the harness never writes (a check number that does not exist):
            # the code under test wrote on the channel. A failure, never an error.
            verdict = TestVerdict(test.name, False, "the test run's report was tampered "
                                                    f"with: {type(exc).__name__}")
        if not verdict.passed and run_failure and not c.ended and not c.error:
            verdict.error = f"not run to the end: {run_failure}"
        verdicts.append(verdict)
    return verdicts
