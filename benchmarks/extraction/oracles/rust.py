"""Rust units per rustc's own parser, for benchmarks/extraction/compare.py.

Each ``.rs`` file goes through ``rustc -Zunpretty=ast-tree`` (``RUSTC_BOOTSTRAP=1`` lets a
stable rustc take the ``-Z`` flag): the parsed, unexpanded AST as Rust's ``{:#?}`` debug
text, which is read back here into plain values. Units, in our conventions: functions
with a body (``method`` in an ``impl`` or ``trait``, else ``function``), and structs,
enums, unions and traits (``class``). An ``impl`` qualifies its items' names with its
type's name (``impl<T> Trait for Foo<T>`` -> ``Foo.method``), a ``mod`` with a body with
its own, a function or trait with theirs. A unit starts at the first of the outer
attributes right before it (a doc comment in between ends the run) and ends at its
closing brace or semicolon. Out-of-line ``mod foo;`` files are not loaded: every file is
parsed on its own, in the edition of its crate's ``Cargo.toml``. Standard library only::

    python benchmarks/extraction/oracles/rust.py ROOT
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

_TOKEN = re.compile(r"""
    (?P<span>\S+?:(\d+):(\d+):\ (\d+):(\d+)\ \(\#\d+\))
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<char>'(?:[^'\\]|\\.[^']*)')
  | (?P<punct>[{}()\[\],:])
  | (?P<word>[^\s{}()\[\],:"]+(?:::[^\s{}()\[\],:"]+)*)
""", re.VERBOSE)

_KINDS = {"Struct": "class", "Enum": "class", "Union": "class", "Trait": "class"}


class Span(NamedTuple):
    start: int
    end: int


class Node(NamedTuple):
    """``Name { field: value, ... }`` or ``Name(value, ...)`` (fields then hold
    ``"0"``, ``"1"``, ...)."""

    type: str
    fields: dict[str, Any]


def parse_debug(text: str) -> Any:
    """Rust's pretty ``{:#?}`` text as Spans, Nodes, lists, strings and words."""
    # The crate root's path segment prints as ``{{root}}#0``.
    text = text.replace("{{root}}", "crate")
    tokens: list[tuple[str, Any]] = []
    pos = 0
    size = len(text)
    while pos < size:
        while pos < size and text[pos].isspace():
            pos += 1
        if pos >= size:
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unreadable debug text at {pos}: {text[pos:pos + 60]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "span":
            tokens.append(("span", Span(int(m.group(2)), int(m.group(4)))))
        elif kind == "punct":
            tokens.append((m.group(), None))
        else:
            tokens.append(("word", m.group()))
    tokens.append(("end", None))
    index = 0

    def value() -> Any:
        nonlocal index
        kind, payload = tokens[index]
        index += 1
        if kind in ("span",):
            return payload
        if kind == "[":
            items = []
            while tokens[index][0] != "]":
                items.append(value())
                if tokens[index][0] == ",":
                    index += 1
            index += 1
            return items
        if kind == "word":
            follow = tokens[index][0]
            if follow == "{":
                index += 1
                fields: dict[str, Any] = {}
                while tokens[index][0] != "}":
                    name = tokens[index][1]
                    index += 2  # the name and its colon
                    fields[name] = value()
                    if tokens[index][0] == ",":
                        index += 1
                index += 1
                return Node(payload, fields)
            if follow == "(":
                index += 1
                fields = {}
                while tokens[index][0] != ")":
                    fields[str(len(fields))] = value()
                    if tokens[index][0] == ":":  # ``lifetime(4294967040: 'a)``
                        index += 1
                        fields[str(len(fields))] = value()
                    if tokens[index][0] == ",":
                        index += 1
                index += 1
                return Node(payload, fields)
            return payload
        if kind == "{":  # a bare map
            fields = {}
            while tokens[index][0] != "}":
                key = value()
                index += 1
                fields[str(key)] = value()
                if tokens[index][0] == ",":
                    index += 1
            index += 1
            return Node("", fields)
        if kind == "(":  # a bare tuple
            items = []
            while tokens[index][0] != ")":
                items.append(value())
                if tokens[index][0] == ",":
                    index += 1
            index += 1
            return Node("", {str(i): v for i, v in enumerate(items)})
        context = " ".join(str(t[1] if t[1] is not None else t[0])
                           for t in tokens[max(0, index - 12):index + 3])
        raise ValueError(f"unexpected {kind} in debug text, after: {context}")

    return value()


def _ident(word: Any) -> str:
    """``foo#0`` -> ``foo`` (the hygiene mark); ``r#type#0`` -> ``type``."""
    text = str(word).rsplit("#", 1)[0]
    return text[2:] if text.startswith("r#") else text


def _type_name(ty: Any) -> str | None:
    """The name of an ``impl``'s self type: a path's last segment, through references,
    pointers, slices and trait objects."""
    if not isinstance(ty, Node):
        return None
    if ty.type == "Ty":
        return _type_name(ty.fields.get("kind"))
    kind, inner = ty.type, ty.fields
    if kind == "Path":
        path = inner.get("1")
        segments = path.fields.get("segments", []) if isinstance(path, Node) else []
        return _ident(segments[-1].fields["ident"]) if segments else None
    if kind in ("Ref", "Ptr", "PinnedRef"):
        target = inner.get("1", inner.get("0"))
        if isinstance(target, Node) and target.type == "MutTy":
            return _type_name(target.fields.get("ty"))
        return _type_name(target)
    if kind in ("Slice", "Array", "Paren"):
        return _type_name(inner.get("0"))
    if kind == "TraitObject":
        for bound in inner.get("0", []):
            found = _find_path(bound)
            if found:
                return found
    return None


def _find_path(node: Any) -> str | None:
    if isinstance(node, Node):
        if node.type == "Path" and "segments" in node.fields:
            segments = node.fields["segments"]
            return _ident(segments[-1].fields["ident"]) if segments else None
        for child in node.fields.values():
            found = _find_path(child)
            if found:
                return found
    elif isinstance(node, list):
        for child in node:
            found = _find_path(child)
            if found:
                return found
    return None


def _start(item: Node) -> int:
    start = item.fields["span"].start
    for attr in reversed(item.fields.get("attrs", [])):
        kind = attr.fields.get("kind")
        style = attr.fields.get("style")
        if not isinstance(kind, Node) or kind.type != "Normal" or style != "Outer":
            break
        start = min(start, attr.fields["span"].start)
    return start


def units(tree: Any, path: str) -> Iterator[dict[str, Any]]:
    # (node, name prefix, whether functions here are methods)
    stack: list[tuple[Any, str, bool]] = [(tree, "", False)]
    while stack:
        node, prefix, methods = stack.pop()
        if isinstance(node, list):
            stack.extend((child, prefix, methods) for child in reversed(node))
            continue
        if not isinstance(node, Node):
            continue
        if node.type != "Item" or "kind" not in node.fields:
            stack.extend((child, prefix, False if node.type in ("Block", "Expr") else methods)
                         for child in reversed(list(node.fields.values())))
            continue
        kind = node.fields["kind"]
        if not isinstance(kind, Node):
            continue
        name: str | None = None
        unit_type: str | None = None
        inner_prefix = prefix
        inner_methods = False
        children: list[Any] = list(kind.fields.values())
        if kind.type == "Fn":
            fn = kind.fields["0"]
            name = _ident(fn.fields["ident"])
            body = fn.fields.get("body")
            if isinstance(body, Node) and body.type == "Some":
                unit_type = "method" if methods else "function"
            children = [fn.fields.get("body")]
        elif kind.type in _KINDS:
            first = kind.fields["0"]
            if isinstance(first, Node):  # Trait { ident, items, .. }
                name = _ident(first.fields["ident"])
                children = [first.fields.get("items", [])]
                inner_methods = kind.type == "Trait"
            else:  # Struct(ident, generics, data), Enum(ident, ..), Union(ident, ..)
                name = _ident(first)
            unit_type = _KINDS[kind.type]
        elif kind.type == "Impl":
            impl = kind.fields["0"]
            scope = _type_name(impl.fields.get("self_ty"))
            inner_prefix = f"{prefix}.{scope}" if prefix and scope else scope or prefix
            stack.append((impl.fields.get("items", []), inner_prefix, True))
            continue
        elif kind.type == "Mod":
            ident = next((v for v in kind.fields.values() if isinstance(v, str) and "#" in v),
                         None)
            loaded = [v for v in kind.fields.values() if isinstance(v, Node)
                      and v.type == "Loaded"]
            if ident is not None and loaded:
                scope = _ident(ident)
                stack.append((loaded, f"{prefix}.{scope}" if prefix else scope, False))
            continue
        if name is not None and unit_type is not None:
            qual = f"{prefix}.{name}" if prefix else name
            yield {"path": path, "name": qual, "type": unit_type,
                   "start_line": _start(node), "end_line": node.fields["span"].end}
            inner_prefix = qual
        stack.extend((child, inner_prefix, inner_methods) for child in reversed(children))


_EDITION = re.compile(r'^\s*edition\s*=\s*"(\d{4})"', re.MULTILINE)


def edition(path: str, root: str) -> str:
    """The edition of the nearest ``Cargo.toml`` above ``path`` that names one (a
    workspace's ``[workspace.package]`` one included), else 2021."""
    folder = os.path.dirname(os.path.abspath(path))
    top = os.path.abspath(root)
    while True:
        manifest = os.path.join(folder, "Cargo.toml")
        if os.path.isfile(manifest):
            with open(manifest, encoding="utf-8", errors="replace") as fh:
                m = _EDITION.search(fh.read())
            if m:
                return m.group(1)
        if folder == top or os.path.dirname(folder) == folder:
            return "2021"
        folder = os.path.dirname(folder)


def _dump(job: tuple[str, str]) -> tuple[str, str]:
    """rustc's AST dump of one file, or its first error."""
    full, root = job
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    proc = subprocess.run(
        [os.environ.get("RUSTC", "rustc"), "-Zunpretty=ast-tree", "--edition",
         edition(full, root), full],
        capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").splitlines()
        return "error", next((line for line in lines if line.startswith("error")), "failed")
    return "ok", proc.stdout.decode("utf-8", "replace")


def main(argv: list[str]) -> int:
    root = argv[1]
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        files.extend(os.path.join(dirpath, n) for n in sorted(filenames)
                     if n.endswith(".rs") and os.path.isfile(os.path.join(dirpath, n)))
    out = sys.stdout
    with ThreadPoolExecutor(max_workers=int(os.environ.get("ORACLE_JOBS", "2"))) as pool:
        # rustc runs in the pool; the (deeply recursive) reading stays on the main thread.
        dumps = pool.map(_dump, [(full, root) for full in files])
        for full, (status, result) in zip(files, dumps, strict=True):
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if status == "error":
                out.write(json.dumps({"unparsable": rel, "error": result}) + "\n")
                continue
            out.write(json.dumps({"file": rel}) + "\n")
            for unit in units(parse_debug(result), rel):
                out.write(json.dumps(unit) + "\n")
    return 0


if __name__ == "__main__":
    sys.setrecursionlimit(100_000)
    sys.exit(main(sys.argv))
