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
always says yes earns nothing. A value too large to report whole (a long string or
container, a huge integer) is reported as its beginning, its length and a SHA-256 digest
of all of it, so two such values are equal outside only when they are equal whole.
"""

from __future__ import annotations

import collections
import dataclasses
import decimal
import enum
import fractions
import hashlib
import json
import os
import sys
import types
from typing import Any

MAX_DEPTH = 12
MAX_ITEMS = 2000
MAX_STR = 20000
MAX_INT_DIGITS = 1000

_state: dict[str, Any] = {"fd": None, "test": -1, "targets": frozenset()}


def _qualname(obj: Any) -> str:
    """Where ``obj``'s class is defined; ``!`` after it when the class is not what that
    place holds (a look-alike that copied another class's module and name)."""
    cls = obj if isinstance(obj, type) else type(obj)
    module = str(getattr(cls, "__module__", "?"))
    qualname = str(getattr(cls, "__qualname__", cls.__name__))
    name = f"{module}.{qualname}"
    if "<locals>" in qualname:
        return name  # nowhere to look it up
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None) if found is not None else None
    return name if found is cls else name + "!"


def _code_key(code: types.CodeType) -> str:
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
    for const in code.co_consts:
        parts.append(_code_key(const).encode() if isinstance(const, types.CodeType)
                     else repr(const).encode("utf-8", "backslashreplace")[:400])
    return _digest(*parts)


def _read(owner: type, name: str, obj: Any) -> Any:
    """Attribute ``name`` of ``obj`` through ``owner``'s own descriptor (whatever the
    object's class put in its place)."""
    descriptor: Any = type.__getattribute__(owner, "__dict__")[name]
    return descriptor.__get__(obj, owner)


def _member_key(member: Any) -> str:
    """What a class attribute does: a function's code (and defaults), a property's
    functions, a slot; other values by type only (a counter may change)."""
    kind = type(member)
    if kind in (staticmethod, classmethod):
        return kind.__name__ + ":" + _member_key(_read(kind, "__func__", member))
    if kind is property:
        return "property:" + "|".join(
            _member_key(f) if f is not None else "-"
            for f in (_read(property, name, member) for name in ("fget", "fset", "fdel")))
    if kind is types.FunctionType:
        code = _read(types.FunctionType, "__code__", member)
        defaults = _read(types.FunctionType, "__defaults__", member)
        return "function:" + _code_key(code) + ":" + repr(defaults)[:400]
    if kind is _MEMBER:
        return "slot"
    return "value:" + _qualname(kind)


def _class_key(cls: type) -> str:
    """A digest of what ``cls`` and its bases (below ``object``) do, the method under
    test left out: equal in two runs only for the same class, unchanged. A class the code
    under test patched (a property in place of a slot, another ``__eq__``) or a
    look-alike put where the real one was differs."""
    parts = []
    for klass in type.__getattribute__(cls, "__mro__"):
        if klass is object or klass.__module__ == "builtins":
            continue
        qualname = str(type.__getattribute__(klass, "__qualname__"))
        members = type.__getattribute__(klass, "__dict__")
        for name in sorted(members, key=str):
            if name in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__") \
                    or f"{qualname}.{name}" in _state["targets"]:
                continue
            parts.append(f"{qualname}.{name}={_member_key(members[name])}".encode(
                "utf-8", "backslashreplace"))
    return _digest(*parts)[:16]


def _class_name(value: Any) -> str:
    """``_qualname`` and, for a class of the code (not a built-in one), its digest."""
    name = _qualname(value)
    cls = type(value)
    if cls.__module__ in ("builtins",) or not isinstance(cls, type):
        return name
    return f"{name}@{_class_key(cls)}"


def _identity_eq(value: Any) -> bool:
    """Whether ``==`` on ``value`` is Python's default, identity."""
    return type(value).__eq__ is object.__eq__


def _key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True, separators=(",", ":"))


def _digest(*parts: bytes) -> str:
    sha = hashlib.sha256()
    for part in parts:
        sha.update(len(part).to_bytes(8, "big"))
        sha.update(part)
    return sha.hexdigest()


def _plain(encoded: Any) -> Any:
    """An encoding without its identity marks (``#``): what equality depends on."""
    if isinstance(encoded, list):
        return [_plain(v) for v in encoded]
    if isinstance(encoded, dict):
        return {k: _plain(v) for k, v in encoded.items() if k != "#"}
    return encoded


def _equality_key(encoded: Any) -> str:
    return _key(_plain(encoded))


def _digest_of(encoded: list[Any]) -> str:
    return _digest(*(_equality_key(e).encode("utf-8", "surrogatepass") for e in encoded))


def _rest(items: Any, depth: int, path: tuple[int, ...], ids: dict[int, int]) -> str:
    """The digest of the items past ``MAX_ITEMS``, in order, each encoded whole."""
    return _digest_of([dump(v, depth, path, ids, whole=True) for v in items])


#: Built-in value types, each with how to read an instance of a subclass as that exact
#: type through the base type's own code (a subclass's overrides do not change it).
_BASES: tuple[tuple[type, Any], ...] = (
    (int, int.__int__), (float, float.__float__), (complex, lambda v: complex(
        float.__float__(v.real), float.__float__(v.imag))),
    (str, str.__str__), (bytes, lambda v: bytes(memoryview(v))),
    (bytearray, lambda v: bytes(memoryview(v))),
    (decimal.Decimal, lambda v: decimal.Decimal(decimal.Decimal.__str__(v))),
    (fractions.Fraction, lambda v: fractions.Fraction(fractions.Fraction.__str__(v))),
    (list, list.copy), (tuple, lambda v: tuple(tuple.__iter__(v))),
    (dict, lambda v: dict(dict.items(v))), (set, lambda v: set(set.__iter__(v))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))))


def _own_state(value: Any) -> list[tuple[str, Any]]:
    """An object's own state: its instance attributes and its slots' values (read past
    any ``__getattribute__`` of its class)."""
    attrs: list[tuple[str, Any]] = []
    try:
        own = object.__getattribute__(value, "__dict__")
    except AttributeError:
        own = None
    if isinstance(own, dict):
        # The dict's own items, whatever a dict subclass put in place of its methods.
        attrs += [(str(k), v) for k, v in dict.items(own) if not str(k).startswith("__")]
    for cls in type.__getattribute__(type(value), "__mro__"):
        slots = type.__getattribute__(cls, "__dict__").get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if not isinstance(name, str) or name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{cls.__name__.lstrip('_')}{name}"
            slot = type.__getattribute__(cls, "__dict__").get(name)
            if type(slot) is not _MEMBER:
                # The slot's descriptor was replaced after the class was made (a
                # property lying about the value): the object is not what it was.
                attrs.append((name, _Tampered()))
                continue
            try:
                attrs.append((name, _MEMBER.__get__(slot, value, type(value))))
            except AttributeError:
                continue  # a slot never set
    return attrs


class _Slotted:
    __slots__ = ("x",)


#: The type of a slot's descriptor.
_MEMBER = type(_Slotted.__dict__["x"])


class _Tampered:
    """Stands for a value that was read through something the code under test replaced;
    it encodes as nothing else does (``$z``), so it equals nothing."""


def _builtin_base(value: Any) -> tuple[type, Any] | None:
    """(base type, the value as that exact type) of an instance of a subclass of a
    built-in value type; None for anything else."""
    for base, read in _BASES:
        if isinstance(value, base) and type(value) is not base:
            return base, read(value)
    return None


def _own_eq(kind: type, base: type) -> bool:
    """Whether ``kind`` (a subclass of ``base``) defines equality of its own."""
    return any("__eq__" in cls.__dict__ for cls in kind.__mro__
               if cls is not base and issubclass(cls, base) and cls is not object)


def _fields(attrs: list[tuple[str, Any]], depth: int, path: tuple[int, ...],
            ids: dict[int, int], whole: bool, items: int | None) -> dict[str, Any]:
    fields = {k: dump(v, depth + 1, path, ids, whole) for k, v in attrs[:items]}
    if items is not None and len(attrs) > items:
        fields["$rest"] = {"$r": _rest([list(kv) for kv in attrs[items:]], depth + 1,
                                       path, ids), "len": len(attrs)}
    return fields


def dump(value: Any, depth: int = 0, path: tuple[int, ...] = (),
         ids: dict[int, int] | None = None, whole: bool = False) -> Any:
    """``value`` as plain JSON data that keeps what equality depends on (bounded; past
    the bounds, a digest of the rest).

    Objects carry ``#``, an index shared by the operands of one check for the same
    object, so that ``is`` between two of them can be decided outside. ``whole``: no
    item or length limit (the values a digest is made of)."""
    ids = {} if ids is None else ids
    if depth > MAX_DEPTH or id(value) in path:
        return {"$cut": _qualname(value)}
    path = (*path, id(value))
    kind = type(value)
    items = None if whole else MAX_ITEMS
    if value is None or kind is bool:
        return value
    if kind is int:
        if abs(value) < 10 ** MAX_INT_DIGITS:
            return value
        raw = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
        return {"$h": _qualname(value), "len": value.bit_length(), "sha": _digest(raw)}
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            return {"$f": repr(value)}
        return value
    if kind is str:
        if whole or len(value) <= MAX_STR:
            return value
        return {"$s": value[:MAX_STR], "len": len(value),
                "sha": _digest(value.encode("utf-8", "surrogatepass"))}
    if kind in (bytes, bytearray):
        data = bytes(value)
        if whole or len(data) <= MAX_STR:
            return {"$b": data.hex(), "len": len(data)}
        return {"$b": data[:MAX_STR].hex(), "len": len(data), "sha": _digest(data)}
    if kind is complex or _qualname(value) in ("decimal.Decimal", "fractions.Fraction"):
        return {"$n": _qualname(value), "v": str(value)}
    if isinstance(value, enum.Enum):
        mixin = isinstance(value, (int, str, float))
        return {"$e": f"{_qualname(value)}.{value.name}",
                "v": dump(value.value, depth + 1, path, ids, whole) if mixin else None,
                "m": mixin}
    if isinstance(value, type):
        return {"$y": _qualname(value)}
    based = _builtin_base(value)
    if based is not None:
        base, plain = based
        attrs = _own_state(value)
        if not attrs and not _own_eq(type(value), base):
            # Compares as its base value in Python (a namedtuple as a tuple, an int
            # subclass as the int): reported as that value.
            return dump(plain, depth, path[:-1], ids, whole)
        # Its own state or its own equality: the class, the base value and the state,
        # all of which must match (an OrderedDict's order too).
        token = ids.setdefault(id(value), len(ids))
        fields = _fields(attrs, depth, path, ids, whole, items)
        if isinstance(value, collections.OrderedDict):
            fields["$order"] = dump(list(value.keys()), depth + 1, path, ids, whole)
        return {"$o": _class_name(value), "f": {**fields, "$base": dump(
            plain, depth + 1, path, ids, whole)}, "#": token}
    if isinstance(value, (list, tuple)):  # namedtuples compare as tuples
        head = [dump(v, depth + 1, path, ids, whole) for v in value[:items]]
        out: Any = head if isinstance(value, list) else {"$t": head}
        if items is not None and len(value) > items:
            out = {"$t" if isinstance(value, tuple) else "$l": head, "len": len(value),
                   "sha": _rest(value[items:], depth + 1, path, ids)}
        return out
    if isinstance(value, (set, frozenset)):
        # Every member, sorted, before the cut: which members come first is not
        # something equality depends on.
        members = sorted((dump(v, depth + 1, path, ids, True) for v in value),
                         key=_equality_key)
        if items is None or len(members) <= items:
            return {"$set": members}
        return {"$set": members[:items], "len": len(members),
                "sha": _digest_of(members[items:])}
    if isinstance(value, dict):  # subclasses (OrderedDict, defaultdict) compare as dicts
        pairs = sorted(([dump(k, depth + 1, path, ids, True),
                         dump(v, depth + 1, path, ids, True)] for k, v in value.items()),
                       key=lambda p: _equality_key(p[0]))
        if items is None or len(pairs) <= items:
            return {"$d": pairs}
        return {"$d": pairs[:items], "len": len(pairs), "sha": _digest_of(pairs[items:])}
    token = ids.setdefault(id(value), len(ids))
    # "id": its class keeps Python's identity equality (exceptions too): equal only to
    # itself, not to an object of the same content.
    same = {"id": 1} if _identity_eq(value) else {}
    if isinstance(value, BaseException):
        return {"$x": _qualname(value), "a": dump(list(value.args), depth + 1, path, ids,
                                                  whole), "#": token, **same}
    if dataclasses.is_dataclass(value):
        # Fields read from the object's own state, not through its class's attribute
        # lookup (which the code under test can replace).
        state = dict(_own_state(value))
        fields = {f.name: dump(state.get(f.name), depth + 1, path, ids, whole)
                  for f in dataclasses.fields(value) if f.compare}
        return {"$o": _class_name(value), "f": fields, "#": token, **same}
    attrs = _own_state(value)
    if (attrs or hasattr(value, "__dict__")) and not callable(value) and not isinstance(
            value, type(sys)):
        return {"$o": _class_name(value), "f": _fields(attrs, depth, path, ids, whole,
                                                        items), "#": token, **same}
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


def main(tests: list[tuple[str, str]], fd: int, targets: list[str] | None = None) -> None:
    """Run each (name, code) in a fresh namespace, in order, reporting on ``fd``;
    ``targets``: the qualified names of the functions under test."""
    _state["fd"] = fd
    _state["targets"] = frozenset(targets or ())
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
