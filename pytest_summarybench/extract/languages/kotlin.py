"""Kotlin: classes, interfaces and objects; member, top-level and local functions.

Companion objects are transparent: ``companion object { fun create() }`` inside ``Foo``
gives the method ``Foo.create``. An object expression (``object : Base() { ... }``) and an
enum entry with a body are name-only scopes, so their functions are methods named after
where they are: ``Outer.f.<anonymous Base@L42>.run`` (``Any`` without a supertype),
``Mode.FAST.apply``, as in Java. Overloads are told apart by their parameter types.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._base import Binding, DefKind, LanguageSpec, node_text, param, squash

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict


_QUALIFIER = re.compile(r"\b\w+\.")

# What tree-sitter-kotlin 1.1.0 wrongly rejects, found on okhttp and kotlinx.coroutines
# (docs/extraction.md, "## Kotlin"). Each is rewritten in place (``KotlinSpec.repair``).
_IN_WORD = re.compile(
    rb"^([ \t]*)in(?!ternal\b|line\b|it\b|fix\b|ner\b|terface\b)(?=\w)", re.MULTILINE)
"""A statement starting with a name that starts with ``in`` (``in1.close()``): the grammar's
scanner reads the keyword ``in`` continuing the line before, and the rest of the class is
lost. Rewritten ``_n1.close()``."""
_KEYWORD_ASSIGNED = re.compile(
    rb"^([ \t]*)(?:set|get|open|data|value|inner|sealed|final|abstract|override|lateinit)"
    rb"(?=[ \t]*[-+*/%]?=(?!=))", re.MULTILINE)
"""An assignment to a variable named like a soft keyword at the start of a statement
(``set = set or bit``, ``open = isOpen``): the grammar reads a property setter or a
modifier. The name's first letter becomes ``_``."""
_OPEN_CALL = re.compile(rb"(?<![\w.`])o(?=pen\()")
"""A call of a function named ``open`` (``CloseGuard().apply { open(closer) }``): the
grammar reads the modifier. Rewritten ``_pen(``."""
_SUSPEND_NAME = re.compile(rb"(?<![\w.`])s(?=uspend(?:[ \t]*(?:[{:),.\];]|=(?!=))|\())")
"""``suspend`` as a name: ``suspend { ... }`` (the stdlib function taking a lambda), a
named argument ``suspend = false``, a parameter ``suspend: (W) -> Boolean`` and its call
``suspend(waiter)``, a variable ``if (suspend)``; the grammar reads the modifier.
Rewritten ``_uspend``."""
_ACCESSOR_ANNOTATIONS = re.compile(
    rb"^([ \t]*)((?:@[\w.]+(?:\([^()\n]*\))?[ \t]*)+)"
    rb"(?=(?://[^\n]*)?\s*(?:(?:private|protected|internal|public)\s+)?(?<![\w.])[gs]et\s*\()",
    re.MULTILINE)
"""Annotations on a property accessor (``@Synchronized set(value) {``, or on the line
before it after an expression-bodied getter): the grammar reads them as continuing the
expression before. Blanked (accessors are not units)."""
_MULTI_DOLLAR = re.compile(rb'(?<![\w$"])\$\$+(?=")')
"""A multi-dollar string (``$$"a$b"``, Kotlin 2.2), which the grammar does not know: the
dollars before the quote are blanked, leaving a plain string."""
_ONE_LINE_BODY = re.compile(
    rb"^([^\n]*\{[ \t]*(?:[\w@]+[ \t]+)*fun\b[^\n]*?\S) (\}[,;)]*[ \t]*(?://[^\n]*)?)$",
    re.MULTILINE)
"""A class, object or enum entry body on one line (``A { override fun f() = 1 },``): the
grammar wants a separator after the last member. The space before ``}`` becomes ``;``."""
_CTOR_MODIFIERS = re.compile(
    rb"(?<=[\w>\])])(\s+)((?:@\w+\s+)*(?:internal|private|protected|public)\s+)"
    rb"(?=constructor\b)")
"""``class X internal constructor(...)``, ``@PublishedApi internal constructor``: the
grammar takes no modifiers on a primary constructor. They are blanked (whitespace kept)."""

_BODYLESS_MODIFIER = re.compile(
    rb"^([ \t]*@[^\n]*[ \t])((?:annotation|data|value|open|sealed|abstract|enum|inner|final"
    rb"|expect|actual|fun)(?=[ \t]+(?:class|interface|object)[ \t]+\w+[ \t]*(?://[^\n]*)?$))",
    re.MULTILINE)
"""A bodyless declaration of one modifier after annotations on its line
(``@Retention(RUNTIME) @JsonQualifier annotation class JsonString``): the grammar reads
``annotation class JsonString`` as an infix call, annotated. The modifier is blanked
(``@A class X`` it reads right). With the annotations on lines before, blanking makes the
grammar split them off, so those are left alone."""
_CTOR_NEXT_LINE = re.compile(
    rb"(^[ \t]*(?:[\w@]+[ \t]+)*class[ \t]+\w+(?:<[^\n]*>)?)"
    rb"\n([ \t]*(?:@\w+[ \t]+)*(?:(?:internal|private|protected|public)[ \t]+)?)"
    rb"(constructor[ \t]*\()", re.MULTILINE)
"""A primary constructor on the line after its class header, inside a class body
(``public class Options\n  private constructor(``): the grammar reads a bodyless class and
then a secondary constructor, and rejects the rest. The line end moves after
``constructor(`` (the header's bytes only shift within it) and the modifiers are blanked."""


def _ctor_next_line(m: re.Match[bytes]) -> bytes:
    gap = m.group(2)
    if not gap:
        return m.group(0)  # ``Name`` would run into ``constructor``
    return m.group(1) + b" " * len(gap) + m.group(3) + b"\n"


def _blank(text: bytes) -> bytes:
    """Spaces for everything but line ends, so lines stay where they were."""
    return bytes(c if c in b"\r\n" else 32 for c in text)


def _simple_type(text: str) -> str:
    """``kotlin.collections.Map<K, V>?`` -> ``Map?``; ``(Int) -> Unit`` -> ``Function``
    (no dots or parentheses: they separate and end the parts of qualified names)."""
    out: list[str] = []
    depth = 0
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    flat = _QUALIFIER.sub("", "".join(out))
    if "->" in flat:
        return "Function"  # ``(T) -> R``, ``suspend () -> Unit``: Kotlin's FunctionN types
    return "".join(c for c in flat if c not in "() \t\n")


def _child_of_type(node: Node, *types: str) -> Node | None:
    for child in node.children:
        if child.type in types:
            return child
    return None


def _annotation_run(node: Node) -> list[Node] | None:
    """The levels of an ``annotated_expression`` that is only annotations, else None.

    tree-sitter-kotlin reads the annotations before some declarations (after an
    expression-bodied function, say) as an expression statement: ``@A(x)`` becomes the
    annotation ``@A`` of the parenthesized expression ``(x)``, earlier ones wrap it."""
    levels: list[Node] = []
    current: Node | None = node
    while current is not None and current.type == "annotated_expression":
        named = current.named_children
        if len(named) != 2 or named[0].type != "annotation":
            return None
        levels.append(current)
        current = named[1]
        if current.type == "parenthesized_expression":
            return levels
    return None


class KotlinSpec(LanguageSpec):
    key = "kotlin"
    branch_operators = frozenset({"&&", "||", "?:"})
    grammar = ("tree_sitter_kotlin", "language")
    distinct_names = True
    class_types = frozenset({"class_declaration", "object_declaration"})
    function_types = frozenset({"function_declaration"})
    comment_types = frozenset({"block_comment", "line_comment"})
    bare_calls_reach_members = True
    query = """
    [(class_declaration) (object_declaration) (function_declaration)] @def
    [(object_literal) (enum_entry (class_body))] @scope
    (call_expression . (_) @call)
    [(if_expression) (for_statement) (while_statement) (do_while_statement) (catch_block)]
      @branch
    (when_entry condition: (_)) @branch
    (binary_expression) @binary
    (import) @import
    """

    misread_query = """
    ((annotated_expression (infix_expression . (identifier) . (identifier) @keyword .
      (identifier) .))
     (#match? @keyword "^(class|interface|object)$"))
    """

    def repair(self, src: bytes) -> bytes | None:
        fixed = _IN_WORD.sub(lambda m: m.group(1) + b"_n", src)
        fixed = _KEYWORD_ASSIGNED.sub(
            lambda m: m.group(1) + b"_" + m.group(0)[len(m.group(1)) + 1:], fixed)
        fixed = _SUSPEND_NAME.sub(b"_", fixed)
        fixed = _OPEN_CALL.sub(b"_", fixed)
        fixed = _ONE_LINE_BODY.sub(lambda m: m.group(1) + b";" + m.group(2), fixed)
        fixed = _MULTI_DOLLAR.sub(lambda m: _blank(m.group(0)), fixed)
        fixed = _ACCESSOR_ANNOTATIONS.sub(lambda m: m.group(1) + _blank(m.group(2)), fixed)
        fixed = _BODYLESS_MODIFIER.sub(lambda m: m.group(1) + _blank(m.group(2)), fixed)
        fixed = _CTOR_NEXT_LINE.sub(_ctor_next_line, fixed)
        return _CTOR_MODIFIERS.sub(lambda m: m.group(1) + _blank(m.group(2)), fixed)

    def name(self, node: Node, src: bytes) -> str | None:
        """Backquotes are not part of a name (``fun `decode simple certificate`()``)."""
        own = super().name(node, src)
        return own[1:-1] if own is not None and len(own) > 2 and own[0] == own[-1] == "`" \
            else own

    def scope_name(self, node: Node, src: bytes) -> str | None:
        if node.type == "enum_entry":
            own = _child_of_type(node, "identifier", "simple_identifier")
            return node_text(own, src) if own is not None else None
        base = "Any"
        supers = _child_of_type(node, "delegation_specifiers")
        first = supers.named_children[0] if supers is not None and supers.named_children \
            else None
        named = first
        while named is not None and named.type != "user_type":
            # ``Base()``, ``Base by delegate``: the type is the first user_type inside.
            named = named.named_children[0] if named.named_children else None
        if named is not None:
            base = _simple_type(node_text(named, src)).removesuffix("?") or "Any"
        return f"<anonymous {base}@L{node.start_point.row + 1}>"

    def parameter_types(self, node: Node, src: bytes) -> str | None:
        params = _child_of_type(node, "function_value_parameters")
        types: list[str] = []
        vararg = False
        for child in params.children if params is not None else ():
            if child.type == "parameter_modifiers":
                vararg = "vararg" in node_text(child, src)
            elif child.type == "parameter":
                named = child.named_children
                text = _simple_type(node_text(named[1], src)) if len(named) > 1 else "?"
                types.append(f"vararg {text}" if vararg else text)
                vararg = False
        return f"({','.join(types)})"

    def anchor(self, node: Node) -> Node:
        """Annotations the grammar split off as an expression statement belong to the
        declaration after them (the compiler's parser starts it there)."""
        prev = node.prev_named_sibling
        return prev if prev is not None and _annotation_run(prev) is not None else node

    def body(self, node: Node) -> Node | None:
        return _child_of_type(node, "function_body", "class_body", "enum_class_body")

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        mods = _child_of_type(node, "modifiers")
        if mods is not None:
            for child in mods.named_children:
                if child.type == "visibility_modifier":
                    text = node_text(child, src)
                    return text if text in ("public", "private", "protected") \
                        else None  # type: ignore[return-value]
        return "public"

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        split: list[str] = []
        for level in (_annotation_run(anchor) or []) if anchor is not node else []:
            first, rest = level.named_children
            shown = level if rest.type == "parenthesized_expression" else first
            split.append(squash(node_text(shown, src))[1:])
        mods = _child_of_type(node, "modifiers")
        if mods is None:
            return split
        return split + [squash(node_text(c, src))[1:] for c in mods.named_children
                        if c.type == "annotation"]

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = _child_of_type(node, "function_value_parameters")
        if params is None:
            return []
        out: list[ParamDict] = []
        vararg = False
        expect_default = False
        for child in params.children:
            if child.type == "parameter_modifiers":
                vararg = "vararg" in node_text(child, src)
            elif child.type == "parameter":
                named = child.named_children
                name = node_text(named[0], src) if named else ""
                type_text = squash(node_text(named[1], src)) if len(named) > 1 else None
                out.append(param(name=name, type=type_text, optional=vararg))
                vararg = False
            elif child.type == "=":
                expect_default = True
            elif expect_default and child.is_named and out:
                out[-1].update(optional=True, default_value=node_text(child, src))
                expect_default = False
        return out

    def return_type(self, node: Node, src: bytes) -> str | None:
        seen_params = False
        colon = False
        for child in node.children:
            if child.type == "function_value_parameters":
                seen_params = True
            elif seen_params and child.type == ":":
                colon = True
            elif colon and child.is_named:
                return squash(node_text(child, src))
            elif child.type == "function_body":
                break
        return None

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        path = _child_of_type(node, "qualified_identifier", "identifier")
        if path is None:
            return []
        full = node_text(path, src)
        if node_text(node, src).rstrip().endswith("*"):
            return [Binding(None, None, full)]
        alias = None
        seen_as = False
        for child in node.children:
            if child.type == "as":
                seen_as = True
            elif seen_as and child.type == "identifier":
                alias = node_text(child, src)
        last = full.rsplit(".", 1)[-1]
        return [Binding(alias or last, last, full)]
