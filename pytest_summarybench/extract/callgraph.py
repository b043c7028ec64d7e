"""Resolving call sites to units across the codebase, best effort by name and scope.

A call resolves, in order, to: a definition visible from the caller's scope in the same
file (nested function, sibling member where the language allows bare member calls, a
top-level function or class), a member of the caller's class for ``self``/``this`` calls,
a member of a named class (``Foo.create()``, ``Foo::new()``), a function of an imported
module, and finally the one definition in the codebase with that name (same language
family, same folder preferred). Anything else is kept as written in ``unresolved_calls``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from .languages import get_spec
from .languages._base import Binding, Callee, LanguageSpec
from .units import FILE, FileUnits, RawUnit

_FAMILY = {"typescript": "js", "javascript": "js"}
_LAST = re.compile(r"[^.:\\>\-]+$")
_ROOT = re.compile(r"[^.:\\\-]+")
_EXT = re.compile(r"\.[A-Za-z]+$")


def _family(language: str) -> str:
    return _FAMILY.get(language, language)


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _module_fragment(dependency: str) -> str:
    """``a.b.c`` / ``./a/b`` / ``net/http`` / ``App\\Models`` -> a path fragment."""
    dep = dependency.strip("'\"")
    if "/" not in dep:
        dep = re.sub(r"[.\\]|::", "/", dep)
    dep = dep.lstrip("./@~")
    return _EXT.sub("", dep) if dep.endswith((".js", ".ts", ".rb", ".php")) else dep


@dataclass
class _Index:
    by_qname: dict[tuple[str, str], RawUnit] = field(default_factory=dict)
    top: dict[tuple[str, str], list[RawUnit]] = field(default_factory=lambda: defaultdict(list))
    classes: dict[tuple[str, str], list[RawUnit]] = field(
        default_factory=lambda: defaultdict(list))
    members: dict[tuple[str, str], list[RawUnit]] = field(
        default_factory=lambda: defaultdict(list))
    short_names: set[tuple[str, str]] = field(default_factory=set)
    """(path, short name) of every definition: most bare calls (builtins, imported
    functions) name nothing in their own file and skip the scope-chain look-ups."""


def _build_index(files: list[FileUnits]) -> _Index:
    index = _Index()
    for f in files:
        family = _family(f.language)
        for unit in f.units:
            index.by_qname.setdefault((f.path, unit.name), unit)
            short = unit.short_name
            if not unit.name.endswith(short):
                # ``Outer.write(JsonWriter,T)``: calls name ``Outer.write``; the first
                # overload declared stands for all of them (calls carry no types).
                head = unit.name[:len(unit.name) - len(unit.name.rsplit(".", 1)[-1])]
                index.by_qname.setdefault((f.path, head + short), unit)
            index.short_names.add((f.path, short))
            if unit.type == "class":
                index.classes[(family, short)].append(unit)
            if unit.type == "method":
                index.members[(family, short)].append(unit)
            elif unit.parent == FILE and "." not in unit.name:
                index.top[(family, short)].append(unit)
    return index


def _pick(candidates: list[RawUnit], caller: RawUnit, fragment: str | None = None,
          ) -> RawUnit | None:
    """The one plausible candidate: same file, module path, same folder, or unique."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    for narrowed in (
        [c for c in candidates if c.path == caller.path],
        [c for c in candidates if fragment and _EXT.sub("", c.path).endswith(fragment)],
        [c for c in candidates if fragment and _dirname(c.path).endswith(fragment)],
        [c for c in candidates if _dirname(c.path) == _dirname(caller.path)],
    ):
        if len(narrowed) == 1:
            return narrowed[0]
    return None


class ScopeChain:
    """Where the bare names of a unit's calls resolve: ``A.m.inner`` -> ``A.m.inner``,
    ``A.m``, ``A``, ``""``; a file unit's only ``""``. Built when a call first needs it
    (most calls name nothing of their own file), once per unit."""

    def __init__(self, unit: RawUnit) -> None:
        self._unit = unit
        self._names: list[str] | None = None

    def __iter__(self) -> Iterator[str]:
        if self._names is None:
            self._names = [""] if self._unit.type == "file" else _prefixes(self._unit.name)
        return iter(self._names)


def _prefixes(name: str) -> list[str]:
    """``a.b.c`` -> [``a.b.c``, ``a.b``, ``a``, ``""``], one slice each."""
    out = [name]
    end = len(name)
    while end > 0:
        end = max(name.rfind(".", 0, end), 0)
        out.append(name[:end])
    return out


class _Resolver:
    def __init__(self, files: list[FileUnits]) -> None:
        self.index = _build_index(files)
        self.bindings: dict[str, dict[str, Binding]] = {}
        for f in files:
            local: dict[str, Binding] = {}
            for b in f.bindings:
                if b.local:
                    local.setdefault(b.local, b)
            self.bindings[f.path] = local

    def resolve(self, unit: RawUnit, call: Callee, spec: LanguageSpec,
                chain: ScopeChain) -> RawUnit | None:
        family = _family(unit.language)
        name = call.name
        receiver = call.receiver
        if call.constructor and (name in spec.self_receivers
                                 or receiver in spec.self_receivers):
            # ``Self { .. }`` (Rust), ``new self()`` (PHP), a bare ``new`` (Ruby).
            owner = unit.name if unit.type == "class" else unit.owner_class
            return self.index.by_qname.get((unit.path, owner)) if owner else None
        if call.constructor or receiver is None:
            if call.constructor:
                return _pick(self.index.classes.get((family, name), []), unit)
            for prefix in chain if (unit.path, name) in self.index.short_names else ():
                target = self.index.by_qname.get(
                    (unit.path, f"{prefix}.{name}" if prefix else name))
                if target is not None and (target.type != "method"
                                           or spec.bare_calls_reach_members):
                    return target
            binding = self.bindings[unit.path].get(name)
            if binding is not None:
                symbol = binding.symbol or name
                fragment = _module_fragment(binding.dependency.rsplit(".", 1)[0]
                                            if binding.symbol else binding.dependency)
                return _pick(self.index.top.get((family, symbol), [])
                             or self.index.classes.get((family, symbol), []), unit, fragment)
            return _pick(self.index.top.get((family, name), []), unit)
        if receiver in spec.self_receivers:
            owner = unit.name if unit.type == "class" else unit.owner_class
            if owner is not None and not receiver.startswith(("super", "parent", "base")):
                target = self.index.by_qname.get((unit.path, f"{owner}.{name}"))
                if target is not None:
                    return target
            others = [m for m in self.index.members.get((family, name), [])
                      if not (m.path == unit.path and owner is not None
                              and m.name == f"{owner}.{name}")]
            return _pick(others, unit)
        # A nested or named class (``Foo.create()``, ``Foo::new()``).
        for qname in spec.class_member_names(receiver, name):
            target = self.index.by_qname.get((unit.path, qname))
            if target is not None:
                return target
        last = _LAST.search(receiver)
        head = last.group() if last else receiver
        cls = _pick(self.index.classes.get((family, head), []), unit)
        if cls is not None:
            for qname in spec.class_member_names(cls.name, name):
                target = self.index.by_qname.get((cls.path, qname))
                if target is not None:
                    return target
            return None
        root = _ROOT.match(receiver)
        binding = self.bindings[unit.path].get(root.group() if root else receiver)
        if binding is not None:
            # Imported: a function of a module of this codebase, or nothing we have.
            if binding.symbol is None:
                return _pick(self.index.top.get((family, name), []), unit,
                             _module_fragment(binding.dependency))
            return None
        # Any other object: the one method of that name in the codebase, if unique.
        return _pick([m for m in self.index.members.get((family, name), []) if m is not unit],
                     unit)


def link_calls(files: list[FileUnits], emitted: dict[int, str]) -> dict[int, tuple[list[str],
                                                                               list[str]]]:
    """For each emitted unit (keyed by ``id(raw_unit)``), its resolved call ids and the
    calls left unresolved, both de-duplicated in first-call order.

    A call that resolves to a unit filtered out of the extraction (too short, a disabled
    type) has no id to point at and is listed as unresolved.
    """
    resolver = _Resolver(files)
    out: dict[int, tuple[list[str], list[str]]] = {}
    for f in files:
        for unit in [*f.units, f.file_unit]:
            if id(unit) not in emitted:
                continue
            ids: dict[str, None] = {}
            unresolved: dict[str, None] = {}
            spec = get_spec(unit.language)
            chain = ScopeChain(unit)
            for call in unit.calls:
                target = resolver.resolve(unit, call, spec, chain)
                target_id = emitted.get(id(target)) if target is not None else None
                if target_id is not None:
                    ids[target_id] = None
                else:
                    unresolved[("new " if call.constructor else "") + call.text] = None
            out[id(unit)] = (list(ids), list(unresolved))
    return out
