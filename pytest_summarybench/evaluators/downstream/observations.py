"""What a sandboxed test run reports, read back outside the sandbox: the report channel's
lines, checked for shape (the code under test can write on it too), and the values in
them decoded so that Python's operators compare them as they compared the originals.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from ...core.errors import RunError

#: Longest report line read from a run (longer ones mark the trace as malformed).
MAX_LINE = 1_000_000
MAX_DEPTH = 40


class MalformedTrace(RunError, ValueError):
    """A run's report channel holds something the harness never writes."""


@dataclass
class TestTrace:
    """What one test reported."""

    __test__ = False  # not a pytest class

    started: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)
    """Checks and failure points, in order."""
    ended: bool = False
    error: str | None = None


def _depth_ok(line: str) -> bool:
    depth = deepest = 0
    in_string = escaped = False
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest <= MAX_DEPTH


def read_trace(text: str, tests: int) -> list[TestTrace]:
    """Per test, what the run reported. Raises ``MalformedTrace`` for anything the
    harness would not have written (the code under test wrote on the channel)."""
    traces = [TestTrace() for _ in range(tests)]
    current = -1
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE or not _depth_ok(line):
            raise MalformedTrace(f"report line {number} is too long or too deep")
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            raise MalformedTrace(f"report line {number} is not JSON") from None
        t = event.get("t") if isinstance(event, dict) else None
        if not isinstance(t, int) or not 0 <= t < tests:
            raise MalformedTrace(f"report line {number} names no test of this run")
        trace = traces[t]
        if "start" in event:
            if trace.started or t != current + 1:
                raise MalformedTrace(f"report line {number} starts test {t} out of order")
            trace.started, current = True, t
        elif t != current or trace.ended or trace.error is not None:
            raise MalformedTrace(f"report line {number} reports on test {t} out of turn")
        elif "end" in event:
            trace.ended = True
        elif "error" in event:
            trace.error = str(event["error"])[:300]
        elif isinstance(event.get("c"), int) and (
                event.get("fail") == 1 or isinstance(event.get("o"), list)):
            trace.events.append(event)
        else:
            raise MalformedTrace(f"report line {number} is not a report the harness writes")
    return traces


# -- values and predicates ------------------------------------------------------------------
class Value:
    """A reported value that is not plain JSON (a tagged encoding)."""

    def __init__(self, tag: str, data: Any, identity: Any = None, *,
                 identity_eq: bool = False) -> None:
        self.tag = tag
        self.data = data
        self.identity_eq = identity_eq
        """Its class keeps Python's default ``==``: identity."""
        self.identity = identity
        """Which object of its check, in which run, it is (``is`` compares this; equality
        does not)."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Value) and (self.identity_eq or other.identity_eq):
            return self.identity is not None and self.identity == other.identity
        if isinstance(other, Value):
            return (self.tag, self.data) == (other.tag, other.data) and self.tag not in (
                "$z", "$cut")
        if self.tag == "$e" and isinstance(self.data, tuple) and self.data[2]:
            return bool(self.data[1] == other)  # an int/str enum equals its value
        return False

    def __hash__(self) -> int:
        return hash(self.tag)

    def __repr__(self) -> str:
        return f"{self.tag}:{self.data!r}"[:120]


class _Unordered:
    """A set, or a dict's (key, value) items: equal when the elements match one to one."""

    def __init__(self, items: list[Any], *, mapping: bool) -> None:
        self.items = items
        self.mapping = mapping

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Unordered) or self.mapping != other.mapping \
                or len(self.items) != len(other.items):
            return False
        left = list(other.items)
        for item in self.items:
            for i, candidate in enumerate(left):
                if item == candidate:
                    del left[i]
                    break
            else:
                return False
        return True

    def __contains__(self, item: object) -> bool:
        if self.mapping:
            return any(key == item for key, _ in self.items)
        return any(i == item for i in self.items)

    def __len__(self) -> int:
        return len(self.items)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{{{', '.join(map(repr, self.items))}}}"[:120]


def decode(data: Any) -> Any:
    """A reported value in a form Python's operators compare as the originals would."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "sha" in data and any(tag in data for tag in ("$l", "$t", "$set", "$d")):
        # Reported cut short, with a digest of the rest: equal only to the same whole.
        tag = next(t for t in ("$l", "$t", "$set", "$d") if t in data)
        head = data[tag] if isinstance(data[tag], list) else []
        return Value("$cut-short", (tag, _frozen(decode(head)), data.get("len"),
                                    str(data["sha"])))
    if "$r" in data:
        return Value("$r", (str(data["$r"]), data.get("len")))
    if "$t" in data:
        return tuple(decode(v) for v in data["$t"])
    if "$set" in data:
        return _Unordered([decode(v) for v in data["$set"]], mapping=False)
    if "$d" in data:
        return _Unordered([(decode(k), decode(v)) for k, v in data["$d"]], mapping=True)
    if "$f" in data:
        return float(str(data["$f"]))
    if "$n" in data:
        kind, text = str(data["$n"]), str(data.get("v", ""))[:2000]
        try:
            if kind.endswith("Decimal"):
                return Decimal(text)
            if kind.endswith("Fraction"):
                return Fraction(text)
            return complex(text)
        except (InvalidOperation, ValueError, ZeroDivisionError):
            return Value("$z", kind)
    if "$b" in data:
        return Value("$b", (str(data["$b"]), data.get("len"), data.get("sha")))
    if "$s" in data:
        return Value("$s", (str(data["$s"]), data.get("len"), data.get("sha")))
    if "$e" in data:
        return Value("$e", (str(data["$e"]), decode(data.get("v")), bool(data.get("m"))))
    if "$y" in data:
        return Value("$y", str(data["$y"]))
    token = data.get("#") if isinstance(data.get("#"), int) else None
    if "$o" in data:
        raw = data.get("f")
        fields: dict[str, Any] = raw if isinstance(raw, dict) else {}
        return Value("$o", (str(data["$o"]), tuple(sorted(
            (str(k), _frozen(decode(v))) for k, v in fields.items()))), token,
            identity_eq=bool(data.get("id")))
    if "$x" in data:
        return Value("$x", (str(data["$x"]), _frozen(decode(data.get("a")))), token,
                     identity_eq=bool(data.get("id")))
    if "$h" in data:
        return Value("$h", (str(data["$h"]), data.get("len"), data.get("sha")))
    tag = next(iter(data), "$z")
    return Value("$z" if tag not in ("$cut",) else "$cut", str(data.get(tag)), token)


def _frozen(value: Any) -> Any:
    """A comparable, hashable stand-in for nested values inside objects."""
    if isinstance(value, list):
        return ("list", tuple(_frozen(v) for v in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_frozen(v) for v in value))
    if isinstance(value, _Unordered):
        return ("unordered", tuple(sorted(repr(_frozen(v)) for v in value.items)))
    if isinstance(value, Value):
        if value.identity_eq or value.tag in ("$z", "$cut"):
            # Equal to nothing else: identity cannot be told inside another value, and
            # what could not be encoded (a function, a closure's state) compares nowhere.
            return (value.tag, object())
        return (value.tag, repr(value.data))
    return value


def _identical(a: Any, b: Any) -> bool:
    """``is`` on reported values: singletons, types and enum members."""
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, Value) and isinstance(b, Value):
        if a.tag in ("$y", "$e"):
            return a == b
        return a.identity is not None and a.identity == b.identity
    return False


def _compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    if isinstance(op, ast.Eq):
        return bool(a == b)
    if isinstance(op, ast.NotEq):
        return not a == b
    if isinstance(op, ast.Is):
        return _identical(a, b)
    if isinstance(op, ast.IsNot):
        return not _identical(a, b)
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, (str, list, tuple, _Unordered)) and not (
                isinstance(b, str) and not isinstance(a, str)):
            found = a in b
        else:
            raise TypeError("membership in a value that cannot hold it")
        return bool(found) if isinstance(op, ast.In) else not found
    if any(isinstance(v, (Value, _Unordered)) for v in (a, b)):
        raise TypeError("ordering between objects")
    if isinstance(op, ast.Lt):
        return bool(a < b)
    if isinstance(op, ast.LtE):
        return bool(a <= b)
    if isinstance(op, ast.Gt):
        return bool(a > b)
    if isinstance(op, ast.GtE):
        return bool(a >= b)
    raise TypeError(f"unknown comparison {type(op).__name__}")


def _truthy(value: Any) -> bool:
    if isinstance(value, Value):
        if value.tag in ("$s", "$b"):
            return bool(value.data[1])
        return value.tag not in ("$cut",)
    return bool(value)


def evaluate(predicate: ast.expr, operands: list[Any]) -> bool:
    """The truth of a check's predicate over decoded operands."""
    if isinstance(predicate, ast.Name):
        return _truthy(operands[int(predicate.id[len("_sb_op"):])])
    if isinstance(predicate, ast.BoolOp):
        return all(evaluate(v, operands) for v in predicate.values)
    if isinstance(predicate, ast.UnaryOp):
        return not evaluate(predicate.operand, operands)
    if isinstance(predicate, ast.Compare):
        values = [operands[int(n.id[len("_sb_op"):])]  # type: ignore[attr-defined]
                  for n in [predicate.left, *predicate.comparators]]
        return all(_compare(op, values[i], values[i + 1]) for i, op in enumerate(predicate.ops))
    return False
