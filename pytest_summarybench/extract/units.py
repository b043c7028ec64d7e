"""One file in, its units out: a single parse and a single query pass per file.

Definitions, calls, decision points and imports come from one tree-sitter query; a sweep
over the (properly nested) definition spans assigns every call, decision point and
imported-name use to its innermost unit without walking the tree in Python.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..schemas.units import base_name
from .bounds import Budget, check_definition_depth, check_syntax_depth
from .languages import get_spec
from .languages._base import (
    Binding,
    Callee,
    DefKind,
    DocComment,
    Enclosing,
    callee_from_text,
)
from .parsing import get_error_query, get_query, grammar_key, parse

if TYPE_CHECKING:
    from tree_sitter import Node

    from ..schemas.units import UnitType, Visibility
    from .languages._base import LanguageSpec, ParamDict

Definition = tuple["Node", int, "Node", bool, str]
"""(node, span start, anchor node, is scope-only, own name)."""

FILE = -1
"""Owner index meaning "the file itself"."""
_CHECK_EVERY = 256
"""Definitions between two looks at the file's CPU budget."""


@dataclass(slots=True)
class RawUnit:
    """A definition found in a file, before filtering and call resolution."""

    path: str
    language: str
    name: str
    """Qualified name within the file (``Class.method``); the path for file units."""
    type: UnitType
    start_byte: int
    """Start of the unit as written (decorators/annotations, leading doc comment)."""
    end_byte: int
    start_line: int
    end_line: int
    decl_line: int = 0
    """First line of the declaration itself (decorators included, doc comment not)."""
    parent: int = FILE
    """Index of the enclosing unit in the file's list, ``FILE`` for top level."""
    owner_class: str | None = None
    """Qualified name of the innermost enclosing class or impl scope."""
    signature: str | None = None
    parameters: list[ParamDict] | None = None
    return_type: str | None = None
    visibility: Visibility | None = None
    decorators: list[str] | None = None
    doc: DocComment | None = None
    calls: dict[Callee, None] = field(default_factory=dict)
    """Distinct call sites, in first-call order (dict as an ordered set)."""
    branches: int = 0
    """Decision points directly inside this unit (nested definitions excluded)."""
    total_branches: int = 0
    """Decision points anywhere inside the unit, nested definitions included."""
    deps: dict[str, None] = field(default_factory=dict)
    """Dependencies used, in order of the unit's pieces, alphabetical within a piece."""
    exports: list[str] | None = None
    has_error: bool = False
    uid: str | None = None
    """Content hash, set (by ``prepare``) on the units the configuration emits."""
    data: dict[str, Any] | None = None
    """The emitted unit's CodeUnit fields but ``id`` and ``relationships``, plain data
    (None once written aside: ``spill.py``)."""
    line: int = 0
    """The emitted unit's first line as its CodeUnit gives it (``metadata.start_line``),
    kept for ordering when ``data`` is written aside."""

    @property
    def short_name(self) -> str:
        """The name as code calls it: the last part, without what tells overloads apart."""
        return base_name(self.name.rsplit(".", 1)[-1])

    def __reduce__(self) -> tuple[Any, ...]:
        # Positional fields: several times cheaper to pickle than dataclass state.
        return RawUnit, _raw_state(self)


@dataclass(slots=True)
class FileUnits:
    """Everything extracted from one file."""

    path: str
    language: str
    source: bytes
    """The file's bytes; empty once ``prepare`` has run (nothing after it reads them)."""
    units: list[RawUnit]
    """Definitions in source order; the file unit, if any, is ``file_unit``."""
    file_unit: RawUnit
    bindings: list[Binding]
    """Names the file's imports bind (for call resolution)."""
    error_line: int | None = None
    """First line of a syntax error, if the parse had any."""
    size: int = 0
    """Bytes of source (``source`` is released once the units are prepared)."""
    error_span: tuple[int, int] | None = None
    """First and last line covered by syntax errors (ERROR and MISSING nodes), if any:
    definitions there may be lost to the parser's recovery, not only those counted."""
    spill: tuple[str, int, int] | None = None
    """Where the emitted units' data was written aside (``spill.py``), if it was."""

    def __reduce__(self) -> tuple[type[FileUnits], tuple[Any, ...]]:
        return FileUnits, _file_state(self)


_raw_state = attrgetter(*(f.name for f in fields(RawUnit)))
_file_state = attrgetter(*(f.name for f in fields(FileUnits)))


def _sweep(starts: list[int], ends: list[int], positions: list[int]) -> list[int]:
    """For sorted ``positions``, the innermost interval containing each (``FILE`` if none).

    Intervals must be sorted by start and properly nested, as syntax nodes are.
    """
    owners: list[int] = []
    stack: list[int] = []
    j = 0
    n = len(starts)
    for pos in positions:
        while j < n and starts[j] <= pos:
            while stack and ends[stack[-1]] <= starts[j]:
                stack.pop()
            stack.append(j)
            j += 1
        while stack and ends[stack[-1]] <= pos:
            stack.pop()
        owners.append(stack[-1] if stack else FILE)
    return owners


def _callee(language: str, text: bytes, constructor: bool) -> Callee | None:
    """The call site ``text`` parsed and normalized."""
    if len(text) > _CALL_TEXT_MAX:  # rare but unbounded: not kept as cache keys
        return _parse_callee(language, text, constructor)
    return _cached_callee(language, text, constructor)


def _parse_callee(language: str, text: bytes, constructor: bool) -> Callee | None:
    callee = callee_from_text(text.decode("utf-8", "replace"), constructor)
    return get_spec(language).normalize_callee(callee) if callee is not None else None


_cached_callee = lru_cache(maxsize=1 << 16)(_parse_callee)
"""Parsed call sites, cached: the same few callee texts recur all over a codebase."""


CALL_TEXT_PER_BYTE = 16
CALL_TEXT_SLACK = 1 << 16
"""A file's call sites' texts (what is called, ``a.b(x).c``) may add up to this many
bytes per byte of source, plus the slack, before long ones are shortened. In a chain of N
calls each call's text holds the chain before it, N^2 bytes in all: a 1 MB file of
900-call chains had 430 MB of them; of 20,000 files of real code, none had more than
twice its size."""
CALL_TEXT_HEAD = CALL_TEXT_TAIL = 200
"""Bytes kept of each end of a call text in a file over that budget: the receiver's
start and the name at the end are what resolves a call."""
_ELIDED = " \u2026 ".encode()
_CALL_TEXT_MAX = CALL_TEXT_HEAD + CALL_TEXT_TAIL + len(_ELIDED)


def _shortened(src: bytes, start: int, end: int) -> bytes:
    """``src[start:end]`` with its middle replaced by `` … `` (cut between UTF-8
    characters)."""
    head = start + CALL_TEXT_HEAD
    while head > start and src[head] & 0xC0 == 0x80:  # not inside a character
        head -= 1
    tail = end - CALL_TEXT_TAIL
    while tail < end and src[tail] & 0xC0 == 0x80:
        tail += 1
    return src[start:head] + _ELIDED + src[tail:end]


def _line_start(src: bytes, pos: int) -> int:
    return src.rfind(b"\n", 0, pos) + 1


def _dedent(text: str, indent: str) -> str:
    """Remove the first line's indentation from every line that has it."""
    if not indent:
        return text
    return text.removeprefix(indent).replace("\n" + indent, "\n")


def unit_content(src: bytes, unit: RawUnit, strip_doc: bool) -> str:
    """The text models see: the unit's lines, dedented, doc removed when asked."""
    start = unit.start_byte
    end = unit.end_byte
    doc = unit.doc if strip_doc else None
    # A doc comment that opens the unit is cut off its front; any other (a docstring,
    # a file's doc after its license header) has its lines taken out.
    leading = doc is not None and doc.leading and doc.start_byte <= start
    if doc is not None and leading:
        start = doc.end_byte
        while start < end and src[start] in b" \t\r\n":
            start += 1
    line_start = _line_start(src, start)
    prefix = src[line_start:start]
    indent = ""
    if not prefix.strip():
        indent = prefix.decode("utf-8", "replace")
        start = line_start
    if doc is not None and not leading:
        doc_line = _line_start(src, doc.start_byte)
        doc_end = src.find(b"\n", doc.end_byte)
        doc_end = end if doc_end < 0 or doc_end > end else doc_end + 1
        rest = src[doc_end:end]
        if rest.strip():
            body = src[start:doc_line] + rest
        else:
            pad = src[doc_line:doc.start_byte]
            body = src[start:doc_line] + pad + b"..." + src[doc.end_byte:end].rstrip()
        text = body.decode("utf-8", "replace")
    else:
        text = src[start:end].decode("utf-8", "replace")
    return _dedent(text, indent)


def _qualify(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def extract_file(path: str, language: str, src: bytes,
                 budget: Budget | None = None) -> FileUnits:
    """Parse ``src`` once (twice where the language repairs what its grammar wrongly
    rejects: ``parsing.parse``) and return its definitions with metadata, calls and deps.

    Raises ``FileTooComplex`` for a file over a limit of ``extract/bounds.py``: its syntax
    or its definitions nested too deep, or ``budget`` spent.
    """
    spec = get_spec(language)
    gkey = grammar_key(language, path)
    budget = budget or Budget(float("inf"))
    tree = parse(gkey, src)
    root = tree.root_node
    check_syntax_depth(root)
    budget.check("after parsing")
    from tree_sitter import QueryCursor

    caps = QueryCursor(get_query(gkey)).captures(root)
    budget.check("after the query")
    errors: list[tuple[int, int, int, int]] = []
    if root.has_error:
        found = QueryCursor(get_error_query(gkey)).captures(root)
        # (start byte, end byte, first line, last line); a node ending at column 0 ends
        # on the line before.
        errors = sorted((n.start_byte, n.end_byte, n.start_point.row + 1,
                         max(n.start_point.row + 1,
                             n.end_point.row + (1 if n.end_point.column else 0)))
                        for n in found.get("error", []) + found.get("missing", []))
    innermost = _innermost(errors)
    error_line = min(innermost)[2] if innermost else None
    error_span = ((min(e[2] for e in innermost), max(e[3] for e in innermost))
                  if innermost else None)

    defs = _definitions(spec, caps.get("def", []), caps.get("scope", []), src, budget)
    check_definition_depth([(d[1], d[0].end_byte) for d in defs])
    units, is_scope, owner_index = _build_units(spec, path, language, defs, src, budget)

    starts = [d[1] for d in defs]
    ends = [d[0].end_byte for d in defs]
    # A definition is broken when an error lies inside it; an ERROR node wrapping whole
    # definitions (tree-sitter's recovery at the top level) leaves them intact.
    for (_, err_end, _, _), owner in zip(errors, _sweep(starts, ends, [e[0] for e in errors]),
                                      strict=True):
        while owner != FILE and ends[owner] < err_end:
            owner = units[owner].parent
        while owner != FILE and not units[owner].has_error:
            units[owner].has_error = True
            owner = units[owner].parent

    # Calls and decision points: attribute each to its innermost unit. Sites sort as
    # their texts would: texts at one position start at one byte, so the shorter first.
    sites = [(n.start_byte, n.start_byte, n.end_byte, False) for n in caps.get("call", ())]
    for node in caps.get("call.member", ()):
        member = node.child_by_field_name(spec.member_name_field)
        if member is not None:
            sites.append((member.start_byte, node.start_byte, member.end_byte, False))
    sites.extend((n.start_byte, n.start_byte, n.end_byte, True) for n in caps.get("new", ()))
    sites.sort()
    shorten = sum(end - start for _, start, end, _ in sites) \
        > CALL_TEXT_PER_BYTE * len(src) + CALL_TEXT_SLACK
    file_calls: dict[Callee, None] = {}
    # The calls dict of each definition's owner (scope-only definitions hand theirs on).
    owner_calls = [units[o].calls if o != FILE else file_calls for o in owner_index]
    call_owners = _sweep(starts, ends, [site[0] for site in sites])
    for (_, start, end, constructor), owner in zip(sites, call_owners, strict=True):
        text = _shortened(src, start, end) if shorten and end - start > _CALL_TEXT_MAX \
            else src[start:end]
        callee = _callee(language, text, constructor)
        if callee is not None:
            (owner_calls[owner] if owner != FILE else file_calls)[callee] = None

    branch_pos = sorted([*(n.start_byte for n in caps.get("branch", ())),
                         *(n.start_byte for n in caps.get("binary", ()) if spec.is_branch(n))])
    file_branches = 0
    for owner, count in Counter(_sweep(starts, ends, branch_pos)).items():
        target = owner_index[owner] if owner != FILE else FILE
        if target == FILE:
            file_branches += count
        else:
            units[target].branches += count

    budget.check("after the calls")
    bindings: list[Binding] = []
    for node in sorted(caps.get("import", []), key=lambda n: n.start_byte):
        bindings.extend(spec.imports(node, src))
    _attach_dependencies(units, starts, ends, owner_index, bindings, src)

    top_level = [(u.name, defs[i][0]) for i, u in enumerate(units)
                 if u.parent == FILE and not is_scope[i]]
    text_lines = src.count(b"\n") + (0 if src.endswith(b"\n") or not src else 1)
    file_unit = RawUnit(
        path=path, language=language, name=path, type="file", start_byte=0,
        end_byte=len(src), start_line=1, end_line=max(text_lines, 1),
        calls=file_calls, branches=file_branches,
        deps={b.dependency: None for b in bindings},
        exports=spec.exports(root, src, top_level), has_error=bool(errors),
        doc=spec.module_docstring(root, src),
    )
    kept = [u for u, scope in zip(units, is_scope, strict=True) if not scope]
    _renumber_parents(units, is_scope, kept)
    # Children follow their parents in source order: add subtotals bottom-up.
    file_total = file_branches
    for unit in kept:
        unit.total_branches = unit.branches
    for unit in reversed(kept):
        if unit.parent == FILE:
            file_total += unit.total_branches
        else:
            kept[unit.parent].total_branches += unit.total_branches
    file_unit.total_branches = file_total
    _adopt_methods(kept)
    return FileUnits(path, language, src, kept, file_unit, bindings, error_line, len(src),
                     error_span)


def _innermost(errors: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """The errors that contain no other (outer ERROR nodes only wrap the real problem,
    often with intact definitions inside); the first 1,000 are looked at.

    ``errors`` is sorted, so those starting where or after ``e`` starts are ``e``'s
    equals in start and all that follow: ``e`` contains one of them (itself excepted)
    when an earlier one starts where it does (it ends no later), or when the least end
    after it is within ``e``. One pass from the end keeps that least end.
    """
    head = errors[:1000]
    kept: list[tuple[int, int, int, int]] = []
    least_end_after = None
    for i in range(len(head) - 1, -1, -1):
        e = head[i]
        if not (i > 0 and head[i - 1][0] == e[0]) \
                and (least_end_after is None or least_end_after > e[1]):
            kept.append(e)
        least_end_after = e[1] if least_end_after is None else min(least_end_after, e[1])
    kept.reverse()
    return kept or head


def _definitions(spec: LanguageSpec, def_nodes: list[Node], scope_nodes: list[Node],
                 src: bytes, budget: Budget) -> list[Definition]:
    """Every named definition with a body, in source order (anonymous ones are skipped:
    their calls belong to the enclosing unit)."""
    out: list[Definition] = []
    seen: set[tuple[int, int]] = set()
    for i, node in enumerate(def_nodes):
        if i % _CHECK_EVERY == 0:
            budget.check("reading definitions")
        key = (node.start_byte, node.end_byte)
        if key in seen or not spec.is_definition(node):
            continue
        seen.add(key)
        name = spec.name(node, src)
        if name is None:
            name = spec.anonymous_scope(node, src)
            if name is not None:
                out.append((node, node.start_byte, node, True, name))
            continue
        anchor = spec.anchor(node)
        out.append((node, anchor.start_byte, anchor, False, name))
    for node in scope_nodes:
        name = spec.scope_name(node, src)
        if name is not None:
            out.append((node, node.start_byte, node, True, name))
    out.sort(key=lambda d: (d[1], -d[0].end_byte))
    return out


def _build_units(spec: LanguageSpec, path: str, language: str,
                 defs: list[Definition], src: bytes, budget: Budget,
                 ) -> tuple[list[RawUnit], list[bool], list[int]]:
    """Name, classify and describe each definition; nesting comes from the span sweep."""
    units: list[RawUnit] = []
    is_scope: list[bool] = []
    # owner_index maps a definition to the unit that receives its calls: scope-only
    # definitions (Rust impl blocks) hand them to their nearest real ancestor.
    owner_index: list[int] = []
    stack: list[int] = []
    for i, (node, start, anchor, scope, own) in enumerate(defs):
        if i % _CHECK_EVERY == 0:
            budget.check("describing definitions")
        while stack and defs[stack[-1]][0].end_byte <= start:
            stack.pop()
        parent = stack[-1] if stack else FILE
        stack.append(i)
        parent_unit = units[parent] if parent != FILE else None
        prefix = parent_unit.name if parent_unit is not None else ""
        enclosing: Enclosing = None
        if parent_unit is not None:
            enclosing = "scope" if is_scope[parent] else parent_unit.type  # type: ignore[assignment]
        kind: DefKind = "class" if scope else spec.kind(node, enclosing)
        name = _qualify(prefix, own)
        owner_class = None
        if parent_unit is not None:
            if is_scope[parent] or parent_unit.type == "class":
                owner_class = parent_unit.name
            else:
                owner_class = parent_unit.owner_class
        elif kind == "method" and "." in name:
            owner_class = name.rsplit(".", 1)[0]  # Go: ``Receiver.Method`` at top level
        unit = RawUnit(
            path=path, language=language, name=name, type=kind, start_byte=start,
            end_byte=node.end_byte, start_line=anchor.start_point.row + 1,
            end_line=node.end_point.row + 1, decl_line=anchor.start_point.row + 1,
            parent=parent, owner_class=owner_class,
        )
        if not scope:
            _describe(spec, unit, node, anchor, src)
        units.append(unit)
        is_scope.append(scope)
        owner = i
        while owner != FILE and is_scope[owner]:
            owner = units[owner].parent
        owner_index.append(owner)
    if spec.distinct_names:
        distinguish(spec, units, is_scope, defs, src)
    return units, is_scope, owner_index


def distinguish(spec: LanguageSpec, units: list[RawUnit], is_scope: list[bool],
                defs: list[Definition], src: bytes) -> None:
    """Tell apart units of one file that would share type and qualified name.

    Outer names first, level by level: a group of same-named units gets each member's
    parameter types appended (``write(JsonWriter,T)``) when those differ, else each
    member's declaration line (``get@L12``), and an ordinal after that (``#2``) for
    members declared on one line. Children are renamed with their parent. Scopes are not
    grouped (they are not units); their members are. The oracles of
    ``benchmarks/extraction`` apply the same rule.
    """
    seen: set[tuple[str, str]] = set()
    for unit, scope in zip(units, is_scope, strict=True):
        key = (unit.type, unit.name)
        if not scope and key in seen:
            break
        seen.add(key)
    else:
        return  # the usual case: nothing to tell apart
    depth = [0] * len(units)
    for i, unit in enumerate(units):
        depth[i] = depth[unit.parent] + 1 if unit.parent != FILE else 0
    levels: dict[int, list[int]] = {}
    for i, d in enumerate(depth):
        levels.setdefault(d, []).append(i)
    for level in sorted(levels):
        groups: dict[tuple[str, str], list[int]] = {}
        for i in levels[level]:
            unit = units[i]
            if unit.parent != FILE:
                unit.name = _qualify(units[unit.parent].name, defs[i][4])
            if not is_scope[i]:
                groups.setdefault((unit.type, unit.name), []).append(i)
        for group in groups.values():
            if len(group) < 2:
                continue
            params = [spec.parameter_types(defs[i][0], src)
                      if units[i].type != "class" else None for i in group]
            if None not in params and len(set(params)) == len(params):
                suffixes: list[str] = [p for p in params if p is not None]
            else:
                suffixes = [f"@L{units[i].decl_line}" for i in group]
            count: Counter[str] = Counter()
            for i, suffix in zip(group, suffixes, strict=True):
                count[suffix] += 1
                units[i].name += suffix if count[suffix] == 1 else f"{suffix}#{count[suffix]}"
    for unit in units:
        if unit.parent != FILE:
            parent = units[unit.parent]
            unit.owner_class = parent.name if is_scope[unit.parent] \
                or parent.type == "class" else parent.owner_class


def _describe(spec: LanguageSpec, unit: RawUnit, node: Node, anchor: Node, src: bytes) -> None:
    kind = unit.type
    short = unit.short_name
    unit.visibility = spec.visibility(node, short, src)
    unit.decorators = spec.decorators(node, anchor, src)
    doc = spec.docstring(node, anchor, src)
    unit.doc = doc
    if doc is not None and doc.leading and doc.start_byte < unit.start_byte:
        unit.start_byte = doc.start_byte
        unit.start_line = src.count(b"\n", 0, doc.start_byte) + 1
    unit.signature = spec.signature(node, src)
    if kind == "function" or kind == "method":
        unit.parameters = spec.parameters(node, src, kind)
        unit.return_type = spec.return_type(node, src)


_IDENT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_WORDS = bytes(c if c in _IDENT or c >= 128 else 32 for c in range(256))
"""Translation table turning every non-identifier byte into a space."""


def _segments(starts: list[int], ends: list[int], size: int) -> list[tuple[int, int, int]]:
    """Split ``[0, size)`` into pieces each owned by one innermost interval (or ``FILE``)."""
    events = sorted({0, size, *starts, *ends})
    mids = [(a + b) // 2 for a, b in zip(events, events[1:], strict=False) if b > a]
    bounds = [(a, b) for a, b in zip(events, events[1:], strict=False) if b > a]
    owners = _sweep(starts, ends, mids)
    return [(a, b, o) for (a, b), o in zip(bounds, owners, strict=True)]


def _attach_dependencies(units: list[RawUnit], starts: list[int], ends: list[int],
                         owner_index: list[int], bindings: list[Binding],
                         src: bytes) -> None:
    """Record, per unit, which imported names its text mentions (and so its ancestors do).

    Each byte is scanned once: the file is cut into pieces owned by one innermost unit,
    and each piece's identifier set is intersected with the imported names.
    """
    local: dict[bytes, str] = {}
    for binding in bindings:
        if binding.local:
            local.setdefault(binding.local.encode(), binding.dependency)
    if not local or not units:
        return
    names = set(local)
    for a, b, owner in _segments(starts, ends, len(src)):
        target = owner_index[owner] if owner != FILE else FILE
        if target == FILE:
            continue
        # Looking the piece's words up in the few names beats building a set of them.
        used = names.intersection(src[a:b].translate(_WORDS).split())
        for name in sorted(used):
            dep = local[name]
            t = target
            while t != FILE:
                unit = units[t]
                if dep in unit.deps:
                    break
                unit.deps[dep] = None
                t = unit.parent


def _renumber_parents(units: list[RawUnit], is_scope: list[bool], kept: list[RawUnit]) -> None:
    """Re-point parent indices into ``kept`` (scope-only definitions removed)."""
    new_index: dict[int, int] = {}
    for old, scope in enumerate(is_scope):
        if not scope:
            new_index[old] = len(new_index)
    for unit in kept:
        parent = unit.parent
        while parent != FILE and is_scope[parent]:
            parent = units[parent].parent
        unit.parent = new_index[parent] if parent != FILE else FILE


def _adopt_methods(units: list[RawUnit]) -> None:
    """Methods declared outside their type (Rust ``impl``, Go receivers) get the type's
    unit in the same file as parent, when there is one."""
    classes = {u.name: i for i, u in enumerate(units) if u.type == "class"}
    for unit in units:
        if unit.type == "method" and unit.parent == FILE and unit.owner_class is not None:
            unit.parent = classes.get(unit.owner_class, FILE)
