"""What every language extractor provides, and the defaults most of them share.

A :class:`LanguageSpec` names the grammar, the tree-sitter query that finds definitions,
calls, decision points and imports in one pass, and small per-node readers (name,
parameters, doc comment, ...). The engine in ``extract/units.py`` is language-agnostic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility

DefKind = Literal["function", "class", "method"]
Enclosing = Literal["function", "class", "method", "scope"] | None
"""What directly encloses a definition: another unit's kind, a name-only scope, or the file."""



class Callee(NamedTuple):
    """A call site as written: ``receiver.name(...)`` or ``name(...)``."""

    receiver: str | None
    """The object or qualifier text (``self``, ``os.path``, ``Foo``), None for bare calls."""
    name: str
    """The called function, method or class name."""
    constructor: bool = False
    """True for ``new Foo()`` style instantiations."""

    @property
    def text(self) -> str:
        return f"{self.receiver}.{self.name}" if self.receiver else self.name


class Binding(NamedTuple):
    """One name an import statement brings into a file."""

    local: str | None
    """The name bound in the file (None for side-effect or wildcard imports)."""
    symbol: str | None
    """The imported symbol's own name, for resolving calls across files."""
    dependency: str
    """The module or symbol path recorded in ``metadata.dependencies``."""


@dataclass(frozen=True)
class DocComment:
    """A unit's own docstring or leading doc comment."""

    text: str
    """The cleaned text, comment markers and quotes removed."""
    start_byte: int
    end_byte: int
    leading: bool
    """True for a comment before the definition, False for a docstring in the body."""


ParamDict = dict[str, "str | bool | None"]
"""A ``Parameter`` as plain data; validated once, with its unit (cheaper than models)."""


def param(name: str, type: str | None = None, optional: bool = False,
          default_value: str | None = None) -> ParamDict:
    """One formal parameter, in ``schemas.units.Parameter``'s field names."""
    return {"name": name, "type": type, "optional": optional, "default_value": default_value}


def node_text(node: Node, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space."""
    return " ".join(text.split())


def last_row(node: Node) -> int:
    """The last line a node has text on (some comment nodes include their newline)."""
    end = node.end_point
    return int(end.row) - 1 if end.column == 0 and end.row > node.start_point.row \
        else int(end.row)


def trim_signature(text: str) -> str:
    """Whitespace-normalize a declaration head and drop the token that opens the body."""
    sig = squash(text)
    for token in ("{", "=>", "=", ":", "->"):
        if sig.endswith(token) and not sig.endswith("::"):
            sig = sig[:-len(token)].rstrip()
            break
    return sig


def clean_block_comment(text: str) -> str:
    """Strip ``/** ... */`` markers and the leading ``*`` of each line."""
    body = text
    if body.startswith("/**"):
        body = body[3:]
    elif body.startswith("/*"):
        body = body[2:]
    if body.endswith("*/"):
        body = body[:-2]
    lines = [line.strip() for line in body.splitlines()]
    lines = [line[1:].lstrip() if line.startswith("*") else line for line in lines]
    return "\n".join(lines).strip()


def clean_line_comments(text: str, marker: str) -> str:
    """Strip a line-comment marker (``///``, ``//``, ``#``) from each line."""
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        while stripped.startswith(marker):
            stripped = stripped[len(marker):]
        out.append(stripped[1:] if stripped.startswith(" ") else stripped)
    return "\n".join(out).strip()


class LanguageSpec:
    """Defaults shared by the curly-brace languages; each language overrides what differs."""

    key: ClassVar[str]
    grammar: ClassVar[tuple[str, str]]
    """(module, function) returning the grammar's language pointer."""
    query: ClassVar[str]
    """Query source. Captures: ``@def`` definitions, ``@scope`` name-only scopes, ``@call``
    callee expressions, ``@call.member`` member calls (``a.b(x)``: the call site is the
    text up to the end of its ``member_name_field``), ``@new`` instantiated types,
    ``@branch`` decision points, ``@binary`` binary expressions (a decision point when
    their operator is one of ``branch_operators``), ``@import`` imports.

    A pattern must not wait for a child that comes after a subtree where its own node
    type nests (``(binary_expression operator: "&&")`` waits through the left operand):
    tree-sitter keeps one pending match per enclosing node, so a chain nested N deep costs
    N^2 (3,000 chained ``+`` took 3 s). Such patterns capture the node alone, and the
    child is read here, or anchor the child (``(parenthesized_expression . (arrow_function))``)."""
    branch_operators: ClassVar[frozenset[str]] = frozenset()
    """Operators that make a ``@binary`` capture a decision point (``&&``, ``||``)."""
    member_name_field: ClassVar[str] = "name"
    """The field of a ``@call.member`` capture holding the called member's name."""
    class_types: ClassVar[frozenset[str]]
    function_types: ClassVar[frozenset[str]]
    comment_types: ClassVar[frozenset[str]] = frozenset({"comment"})
    self_receivers: ClassVar[frozenset[str]] = frozenset({"this", "super"})
    bare_calls_reach_members: ClassVar[bool] = False
    """Whether ``helper()`` inside a method may mean ``this.helper()`` (Java, C#, ...)."""
    distinct_names: ClassVar[bool] = False
    """Whether units of one file that would share type and qualified name (overloads,
    accessor pairs, methods of two anonymous classes) get their parameter types or line
    appended to tell them apart (see ``units.distinguish``)."""
    leading_attached: ClassVar[frozenset[str]] = frozenset()
    """Sibling node types before a definition that belong to it (decorators, attributes)."""

    misread_query: ClassVar[str] = ""
    """A tree-sitter query matching what the grammar reads wrongly with no syntax error
    (a declaration read as an expression); a parse it matches goes to ``repair`` too."""

    def is_branch(self, binary: Node) -> bool:
        """Whether a ``@binary`` capture is a decision point (short-circuit operators)."""
        operator = binary.child_by_field_name("operator")
        return operator is not None and operator.type in self.branch_operators

    def repair(self, src: bytes) -> bytes | None:
        """For a file whose parse has syntax errors (or matches ``misread_query``): the
        same text with the constructs the grammar wrongly rejects rewritten to ones it
        accepts, byte for byte the same length
        (every node's offsets and lines then point into ``src``, which all text is read
        from); None when there is nothing to rewrite. The rewritten parse is used only when
        less of the text is under syntax errors."""
        return None

    # --- naming and structure -------------------------------------------------------

    def name(self, node: Node, src: bytes) -> str | None:
        """The definition's own (unqualified) name; None when anonymous."""
        name = node.child_by_field_name("name")
        return node_text(name, src) if name is not None else None

    def scope_name(self, node: Node, src: bytes) -> str | None:
        return self.name(node, src)

    def anonymous_scope(self, node: Node, src: bytes) -> str | None:
        """The scope name of a definition with no name of its own (a class expression
        nothing names): its members are then named and typed as members of a scope."""
        return None

    def kind(self, node: Node, enclosing: Enclosing) -> DefKind:
        if node.type in self.class_types:
            return "class"
        return "method" if enclosing in ("class", "scope") else "function"

    def anchor(self, node: Node) -> Node:
        """The first node of the definition as written (decorators, ``export``)."""
        first = node
        prev = first.prev_named_sibling
        while prev is not None and prev.type in self.leading_attached:
            first = prev
            prev = first.prev_named_sibling
        return first

    def body(self, node: Node) -> Node | None:
        return node.child_by_field_name("body")

    def is_definition(self, node: Node) -> bool:
        """Declarations without a body (abstract, interface, extern) are not units."""
        return node.type in self.class_types or self.body(node) is not None

    def parameter_types(self, node: Node, src: bytes) -> str | None:
        """``(JsonWriter,T)``: what tells overloads apart, without dots (``.`` separates
        the parts of qualified names); None where a language has nothing to offer."""
        return None

    def signature(self, node: Node, src: bytes) -> str:
        body = self.body(node)
        end = body.start_byte if body is not None else node.end_byte
        return trim_signature(src[node.start_byte:end].decode("utf-8", "replace"))

    # --- metadata -------------------------------------------------------------------

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        return None

    def return_type(self, node: Node, src: bytes) -> str | None:
        rt = node.child_by_field_name("return_type")
        return squash(node_text(rt, src)).lstrip(":").strip() if rt is not None else None

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        return None

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        return []

    def docstring(self, node: Node, anchor: Node, src: bytes) -> DocComment | None:
        return self.leading_comment(anchor, src)

    def module_docstring(self, root: Node, src: bytes) -> DocComment | None:
        """The file's own docstring (Python module docstring, Go package comment)."""
        return None

    def is_doc_comment(self, text: str) -> bool:
        return text.startswith("/**")

    def clean_doc(self, text: str) -> str:
        return clean_block_comment(text)

    def leading_comment(self, anchor: Node, src: bytes) -> DocComment | None:
        """The doc comment right before ``anchor`` (no blank line between)."""
        prev = anchor.prev_named_sibling
        if prev is None or prev.type not in self.comment_types:
            return None
        if last_row(prev) < anchor.start_point.row - 1:
            return None
        text = node_text(prev, src)
        if not self.is_doc_comment(text):
            return None
        return DocComment(self.clean_doc(text), prev.start_byte, prev.end_byte, True)

    def line_comment_run(self, anchor: Node, src: bytes, marker: str) -> DocComment | None:
        """Consecutive ``marker`` line comments ending on the line before ``anchor``."""
        first: Node | None = None
        last: Node | None = None
        row = anchor.start_point.row
        prev = anchor.prev_named_sibling
        while (prev is not None and prev.type in self.comment_types
               and row - 1 <= last_row(prev) < row):
            if not src[prev.start_byte:prev.end_byte].startswith(marker.encode()):
                break
            first = prev
            last = last or prev
            row = prev.start_point.row
            prev = prev.prev_named_sibling
        if first is None or last is None:
            return None
        text = src[first.start_byte:last.end_byte].decode("utf-8", "replace")
        return DocComment(clean_line_comments(text, marker[0]), first.start_byte,
                          last.end_byte, True)

    # --- calls, imports, exports -------------------------------------------------------

    def class_member_names(self, owner: str, name: str) -> tuple[str, ...]:
        """Qualified names ``owner.name(...)`` may call, most likely first (Ruby's class
        methods are named ``Owner.self.name``)."""
        return (f"{owner}.{name}",)

    def normalize_callee(self, callee: Callee) -> Callee:
        """Language idioms for calls (Ruby's ``Foo.new`` is a constructor call)."""
        return callee

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        return []

    def exports(self, root: Node, src: bytes, top_level: list[tuple[str, Node]]) -> list[str]:
        """Names a file exports; ``top_level`` holds its top-level (name, definition) pairs."""
        return [name for name, node in top_level
                if self.visibility(node, name, src) in (None, "public")]


_CALLEE_NAME = re.compile(r"[A-Za-z_$][\w$]*[!?]?\Z")
_PLAIN_RECEIVER = re.compile(r"[A-Za-z_][\w.]*")
_SEPARATORS = ("?.", "&.", "::", "->", ".", "\\")


def strip_generics(text: str) -> str:
    """Every ``<...>`` part removed: ``Map<K, List<V>>[]`` -> ``Map[]``."""
    out: list[str] = []
    depth = 0
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def _strip_type_arguments(text: str) -> str:
    """``foo<T>`` / ``foo::<T>`` / ``List<Map<K, V>>`` -> ``foo`` / ``foo`` / ``List``."""
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        if c == ">":
            depth += 1
        elif c == "<":
            depth -= 1
            if depth == 0:
                head = text[:i].rstrip()
                return head[:-2] if head.endswith("::") else head
    return text


_NAME_WINDOW = 1024
_WORD_RUN = re.compile(r"[\w$]*")


def _trailing_name(text: str) -> re.Match[str] | None:
    """``_CALLEE_NAME`` searched near the end of ``text`` first: a search over the whole
    text costs its length, and a chain of N calls has N call sites, each with the text of
    the chain before it."""
    start = len(text) - _NAME_WINDOW
    if start <= 0:
        return _CALLEE_NAME.search(text)
    m = _CALLEE_NAME.search(text, start)
    run = _WORD_RUN.match(text, start)
    if run is not None and run.end() >= (m.start() if m is not None else len(text) - 1):
        return _CALLEE_NAME.search(text)  # the name may begin before the window
    return m


def callee_from_text(text: str, constructor: bool = False) -> Callee | None:
    """Split the callee expression of a call site into receiver and name.

    ``self.repo.save`` -> (``self.repo``, ``save``); ``Foo::new`` -> (``Foo``, ``new``);
    ``$this->helper`` -> (``$this``, ``helper``). Calls of computed expressions (``f()()``,
    ``handlers[k]()``) have no name and give None.
    """
    text = text.strip()
    # Fast paths for the common shapes: ``name`` and ``a.b.name``.
    if text.isidentifier():
        return Callee(None, text, constructor)
    head, dot, tail = text.rpartition(".")
    if dot and tail.isidentifier() and _PLAIN_RECEIVER.fullmatch(head):
        return Callee(head, tail, constructor)
    if text.endswith(">"):
        text = _strip_type_arguments(text)
    m = _trailing_name(text)
    if m is None:
        return None
    rest = text[:m.start()].rstrip()
    if rest:
        for sep in _SEPARATORS:
            if rest.endswith(sep):
                rest = rest[:-len(sep)].rstrip()
                break
        else:
            return None
        if rest.endswith(">"):
            rest = _strip_type_arguments(rest)
    return Callee(squash(rest) or None, m.group(), constructor)
