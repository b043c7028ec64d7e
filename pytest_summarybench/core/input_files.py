"""Reading the files a user hands the tool (``summarybench.yaml``, queries and task JSONL
files) with bounds, so that a hostile or broken file costs a one-line error, not minutes,
gigabytes or a RecursionError.

YAML goes through PyYAML's pure-Python ``SafeLoader`` with composer and constructor hooks:
at most ``MAX_DEPTH`` levels, ``MAX_ALIASES`` alias uses and ``MAX_NODES`` nodes once
aliases are expanded (a "billion laughs" document is refused before anything walks it), and
a key given twice in one mapping is an error naming the key and both lines (PyYAML would
keep the last silently). JSON lines are bounded in length and nesting before ``json``
parses them. ``clip`` formats any value in at most ``CLIP`` characters, for messages.
"""

from __future__ import annotations

import functools
import json
import re
import reprlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import InputError

#: Nesting levels a configuration or a JSON line may have (real ones have fewer than 10).
MAX_DEPTH = 100
#: Alias uses (``*name``) per YAML document.
MAX_ALIASES = 100
#: YAML nodes per document once aliases are expanded (as pydantic would walk them).
MAX_NODES = 100_000
#: Bytes of a YAML configuration file.
MAX_YAML_BYTES = 1 << 20
#: Characters of one YAML value or key (a path, a URL, a model id: far shorter).
MAX_VALUE_CHARS = 1 << 14
#: Bytes of one JSON line of a queries or task file, and of the whole file.
MAX_JSON_LINE = 1 << 20
MAX_JSON_FILE = 64 << 20
#: Characters of a value quoted in an error message.
CLIP = 200
_BRACKET = re.compile(r"[\[\]{}]")


class InputFileError(InputError, ValueError):
    """An input file is unreadable or malformed; the message names the file and the line.

    ``line`` (0: the whole file) and ``problem`` (the message without the file and line)
    let a caller word the message its own way.
    """

    def __init__(self, message: str, *, line: int = 0, problem: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.problem = problem or message


# -- messages ---------------------------------------------------------------------------
def _repr_limits() -> reprlib.Repr:
    # Attributes rather than keyword arguments: Repr takes those from Python 3.12 on.
    r = reprlib.Repr()
    r.maxlevel = 3
    r.maxdict = r.maxlist = r.maxtuple = r.maxset = r.maxfrozenset = r.maxdeque = 6
    r.maxstring = r.maxother = 120
    r.maxlong = 40
    return r


_REPR = _repr_limits()


def clip(value: object, limit: int = CLIP) -> str:
    """``repr(value)`` in at most ``limit`` characters, whatever its size or depth (shared
    substructures are not expanded: at most 6 items per level and 3 levels are looked at)."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def clip_text(text: str, limit: int = CLIP) -> str:
    """``text`` cut to ``limit`` characters (for messages that quote a library's error)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- YAML -------------------------------------------------------------------------------
@functools.cache
def _loader_class() -> Any:
    """The bounded SafeLoader (built on first use: ``yaml`` is imported lazily). One per
    process, rightly: a class, the same for every session, holding no state of any."""
    import yaml
    from yaml.composer import Composer
    from yaml.constructor import SafeConstructor
    from yaml.events import AliasEvent, ScalarEvent
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
    from yaml.resolver import Resolver

    class Refused(yaml.MarkedYAMLError):
        """Valid YAML that this loader will not load (a limit, a duplicate key)."""

    def refuse(problem: str, mark: Any) -> Refused:
        return Refused(None, None, problem, mark)

    # Events from libyaml's parser when PyYAML has it (a state machine in C: no
    # recursion), composed here in Python (libyaml's composer recurses in C). The pure
    # Python scanner reads about a microsecond a character: a 900 KB value took seconds.
    parser: Any = yaml.SafeLoader
    if getattr(yaml, "__with_libyaml__", False):
        from yaml._yaml import CParser

        parser = CParser

    class BoundedSafeLoader(Composer, parser, SafeConstructor, Resolver):  # type: ignore[misc]
        """A SafeLoader with depth, alias, expansion and value-length limits, refusing
        duplicate keys; the composer (Python) is ours, the parser libyaml's if present."""

        def __init__(self, stream: str) -> None:
            parser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self._depth = 0
            self._aliases = 0
            self._nodes = 0

        def compose_node(self, parent: Node | None, index: Any) -> Node:
            event = self.peek_event()
            if isinstance(event, ScalarEvent) and len(event.value) > MAX_VALUE_CHARS:
                raise refuse(f"a value of {len(event.value):,} characters; a configuration "
                             f"holds names, paths and numbers (at most {MAX_VALUE_CHARS:,} "
                             "characters each)", event.start_mark)
            if self.check_event(AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise refuse(f"more than {MAX_ALIASES} aliases in one document; write "
                                 "the values out", event.start_mark)
                return super().compose_node(parent, index)
            self._depth += 1
            self._nodes += 1
            if self._depth > MAX_DEPTH:
                raise refuse(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
            if self._nodes > MAX_NODES:
                raise refuse(f"more than {MAX_NODES} values", event.start_mark)
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def compose_document(self) -> Node:
            node = super().compose_document()
            _check_expansion(node)
            return node

        def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, ScalarNode) or key_node.tag.endswith(":merge"):
                    continue  # merge keys (<<) may be overridden by the mapping's own keys
                key = self.construct_object(key_node)
                if key in seen:
                    raise refuse(f"duplicate key {clip(key)} (first on line {seen[key]}); "
                                 "each key may appear once in a mapping", key_node.start_mark)
                seen[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep)

    def _check_expansion(root: Node) -> None:
        """Refuse a document whose aliases expand beyond MAX_NODES values or MAX_DEPTH
        levels, or refer to a value containing them; each node is counted once, so this
        is one pass over the document as written, whatever it expands to."""
        sizes: dict[int, int] = {}
        open_nodes: set[int] = set()

        def count(node: Node, level: int) -> int:
            key = id(node)
            if key in sizes:
                return sizes[key]
            if key in open_nodes:
                raise refuse("an alias refers to a value that contains it (a recursive "
                             "structure)", node.start_mark)
            if level > MAX_DEPTH:
                raise refuse(f"nested deeper than {MAX_DEPTH} levels once aliases are "
                             "expanded", node.start_mark)
            children: list[Node] = []
            if isinstance(node, SequenceNode):
                children = list(node.value)
            elif isinstance(node, MappingNode):
                children = [n for pair in node.value for n in pair]
            open_nodes.add(key)
            total = 1
            for child in children:
                total += count(child, level + 1)
                if total > MAX_NODES:
                    raise refuse(f"aliases expand to more than {MAX_NODES} values",
                                 node.start_mark)
            open_nodes.discard(key)
            sizes[key] = total
            return total

        count(root, 1)

    BoundedSafeLoader.Refused = Refused  # type: ignore[attr-defined]
    return BoundedSafeLoader


# Quoted scalars and comments, whose brackets are text; what is left is counted.
_YAML_TEXT = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\n]|\'\')*\'|(?:^|(?<=\s))#[^\n]*',
                        re.MULTILINE)


def _check_flow_depth(text: str, source: str) -> None:
    """Refuse flow collections (``[[[...``) nested deeper than MAX_DEPTH before PyYAML sees
    them: its scanner looks back over every open level at each token, so 20,000 levels cost
    seconds and a megabyte of them hours. Brackets inside plain scalars are counted too,
    which can only refuse a value no configuration holds."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    stripped = _YAML_TEXT.sub(lambda m: " " * len(m.group()), text)
    for match in _BRACKET.finditer(stripped):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = stripped.count("\n", 0, match.start()) + 1
                raise InputFileError(f"{source}:{line}: nested deeper than {MAX_DEPTH} levels")
        else:
            depth = max(depth - 1, 0)


def load_yaml(text: str, source: str) -> Any:
    """The value of a YAML document, bounded as the module says; ``InputFileError`` naming
    ``source``, the line and the problem otherwise."""
    import yaml

    if len(text) > MAX_YAML_BYTES:
        raise InputFileError(f"{source}: {len(text)} characters; a configuration file may "
                             f"have at most {MAX_YAML_BYTES}")
    _check_flow_depth(text, source)
    loader_class = _loader_class()
    loader = None
    try:
        loader = loader_class(text)  # its reader refuses unprintable characters at once
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = exc.problem or exc.context or "invalid YAML"
        if not isinstance(exc, loader_class.Refused):
            problem = f"not valid YAML: {problem}"
        raise InputFileError(f"{where}: {clip_text(problem)}") from None
    except yaml.YAMLError as exc:
        raise InputFileError(f"{source}: not valid YAML: "
                             f"{clip_text(str(exc).splitlines()[0])}") from None
    finally:
        if loader is not None:
            loader.dispose()


# -- JSON lines -------------------------------------------------------------------------
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (strings skipped)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_json_line(line: str) -> Any:
    """One JSON value, bounded in length and depth; ``ValueError`` saying what is wrong."""
    if len(line) > MAX_JSON_LINE:
        raise ValueError(f"line of {len(line)} characters; at most {MAX_JSON_LINE}")
    if line.count("[") + line.count("{") > MAX_DEPTH and json_depth(line) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} (column {exc.colno})") from None


def read_text(path: Path, what: str, limit: int = MAX_JSON_FILE) -> str:
    """The UTF-8 text of an input file, or ``InputFileError`` (unreadable, too large, not
    UTF-8) naming ``what`` (e.g. "queries file") and the path."""
    try:
        size = path.stat().st_size
        if size > limit:
            problem = f"{size} bytes; at most {limit}"
            raise InputFileError(f"{what} {path}: {problem}", problem=problem)
        data = path.read_bytes()
    except OSError as exc:
        problem = f"cannot read: {exc.strerror or exc}"
        raise InputFileError(f"{what} {path}: {problem}", problem=problem) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problem = f"not valid UTF-8 (byte 0x{data[exc.start]:02x})"
        raise InputFileError(f"{path}:{line}: {problem}", line=line, problem=problem) from None


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every non-blank line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line
