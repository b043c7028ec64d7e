"""The test harness inside the sandbox: runs a task's tests and reports what they observe.

Copied into the sandbox next to the tests (standard library only). It never decides
whether a test passed: that is done outside the sandbox (``verdicts.py``), by comparing
what the tests observed here with what they observed against the original code. The
tests arrive rewritten: every ``assert`` became ``_sbh.check(k, values)`` with only the
operands that depend on the code under test, so the expected values are not in this
process at all; ``raise AssertionError`` became ``_sbh.fail(k)`` before the raise.

Each report is one JSON line on the report channel: ``{"t": test, "start": 1}``,
``{"t": test, "c": check, "o": [value, ...]}``, ``{"t": test, "c": check, "fail": 1}``,
``{"t": test, "end": 1}`` or ``{"t": test, "error": "Type: message"}``. Values are encoded
as plain data (``dump``) whose equality is decided outside, so an object whose ``__eq__``
always says yes earns nothing.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import sys
from typing import Any

MAX_DEPTH = 12
MAX_ITEMS = 2000
MAX_STR = 20000
MAX_INT_DIGITS = 1000

_state: dict[str, Any] = {"fd": None, "test": -1}


def _qualname(obj: Any) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls.__name__)}"


def _key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True, separators=(",", ":"))


def dump(value: Any, depth: int = 0, path: tuple[int, ...] = (),
         ids: dict[int, int] | None = None) -> Any:
    """``value`` as plain JSON data that keeps what equality depends on (bounded).

    Objects carry ``#``, an index shared by the operands of one check for the same
    object, so that ``is`` between two of them can be decided outside."""
    ids = {} if ids is None else ids
    if depth > MAX_DEPTH or id(value) in path:
        return {"$cut": _qualname(value)}
    path = (*path, id(value))
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is int:
        text = str(value) if abs(value) < 10 ** MAX_INT_DIGITS else None
        return value if text is not None else {"$h": _qualname(value), "len": value.bit_length()}
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            return {"$f": repr(value)}
        return value
    if kind is str:
        return value if len(value) <= MAX_STR else {"$s": value[:MAX_STR], "len": len(value)}
    if kind in (bytes, bytearray):
        return {"$b": bytes(value[:MAX_STR]).hex(), "len": len(value)}
    if kind is complex or _qualname(value) in ("decimal.Decimal", "fractions.Fraction"):
        return {"$n": _qualname(value), "v": str(value)}
    if isinstance(value, enum.Enum):
        mixin = isinstance(value, (int, str, float))
        return {"$e": f"{_qualname(value)}.{value.name}",
                "v": dump(value.value, depth + 1, path, ids) if mixin else None, "m": mixin}
    if isinstance(value, type):
        return {"$y": _qualname(value)}
    if isinstance(value, list):
        return [dump(v, depth + 1, path, ids) for v in value[:MAX_ITEMS]]
    if isinstance(value, tuple):  # namedtuples compare as tuples
        return {"$t": [dump(v, depth + 1, path, ids) for v in value[:MAX_ITEMS]]}
    if isinstance(value, (set, frozenset)):
        items = [dump(v, depth + 1, path, ids) for v in list(value)[:MAX_ITEMS]]
        return {"$set": sorted(items, key=_key)}
    if isinstance(value, dict):  # subclasses (OrderedDict, defaultdict) compare as dicts
        pairs = [[dump(k, depth + 1, path, ids), dump(v, depth + 1, path, ids)]
                 for k, v in list(value.items())[:MAX_ITEMS]]
        return {"$d": sorted(pairs, key=lambda p: _key(p[0]))}
    token = ids.setdefault(id(value), len(ids))
    if isinstance(value, BaseException):
        return {"$x": _qualname(value), "a": dump(list(value.args), depth + 1, path, ids),
                "#": token}
    if dataclasses.is_dataclass(value):
        fields = {f.name: dump(getattr(value, f.name, None), depth + 1, path, ids)
                  for f in dataclasses.fields(value) if f.compare}
        return {"$o": _qualname(value), "f": fields, "#": token}
    if hasattr(value, "__dict__") and not callable(value) and not isinstance(
            value, type(sys)):
        fields = {str(k): dump(v, depth + 1, path, ids) for k, v in list(vars(value).items())
                  [:MAX_ITEMS] if not str(k).startswith("__")}
        return {"$o": _qualname(value), "f": fields, "#": token}
    return {"$z": _qualname(value), "#": token}


def _emit(record: dict[str, Any]) -> None:
    fd = _state["fd"]
    line = json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"
    os.write(fd, line.encode("utf-8", "backslashreplace"))


def check(k: int, values: tuple[Any, ...]) -> None:
    """Report the operands of assertion ``k`` (the rewritten ``assert``)."""
    ids: dict[int, int] = {}
    _emit({"t": _state["test"], "c": k, "o": [dump(v, ids=ids) for v in values]})


def fail(k: int) -> None:
    """Report that the test reached ``raise AssertionError`` number ``k``."""
    _emit({"t": _state["test"], "c": k, "fail": 1})


def _describe(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:
        text = type(exc).__name__
    return text[:300]


def main(tests: list[tuple[str, str]], fd: int) -> None:
    """Run each (name, code) in a fresh namespace, in order, reporting on ``fd``."""
    _state["fd"] = fd
    harness = sys.modules[__name__]
    for index, (name, code) in enumerate(tests):
        _state["test"] = index
        _emit({"t": index, "start": 1})
        namespace = {"__name__": "__sbtest__", "_sbh": harness}
        try:
            exec(compile(code, f"<test {name}>", "exec"), namespace)
        except BaseException as exc:  # SystemExit included: the test did not finish
            _emit({"t": index, "error": _describe(exc)})
        else:
            _emit({"t": index, "end": 1})
