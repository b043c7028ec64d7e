"""Python: functions, classes and methods, docstrings, decorators and imports."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, ClassVar

from ._base import Binding, DefKind, DocComment, LanguageSpec, node_text, param, squash

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict

_STRING_PREFIX = "rRuUbBfF"
_ACCESSORS = frozenset({"setter", "getter", "deleter"})
_OVERLOAD = frozenset({b"overload", b"typing.overload", b"typing_extensions.overload",
                       b"t.overload"})


def _unquote(literal: str) -> str:
    text = literal.lstrip(_STRING_PREFIX)
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote):-len(quote)]
    return text


class PythonSpec(LanguageSpec):
    key = "python"
    grammar = ("tree_sitter_python", "language")
    distinct_names = True
    class_types = frozenset({"class_definition"})
    function_types = frozenset({"function_definition"})
    self_receivers = frozenset({"self", "cls", "super()"})
    query = """
    [(function_definition) (class_definition)] @def
    (call function: (_) @call)
    [(if_statement) (elif_clause) (for_statement) (while_statement) (except_clause)
     (conditional_expression) (boolean_operator) (for_in_clause) (if_clause)
     (case_clause)] @branch
    [(import_statement) (import_from_statement)] @import
    """
    _params: ClassVar[dict[str, tuple[str, bool]]] = {
        "identifier": ("", False),
        "list_splat_pattern": ("*", True),
        "dictionary_splat_pattern": ("**", True),
    }

    def name(self, node: Node, src: bytes) -> str | None:
        """A property's setter or deleter is named after its decorator (``x.setter``): it
        is a declaration of its own, not a second ``x``."""
        own = super().name(node, src)
        parent = node.parent
        if own is None or parent is None or parent.type != "decorated_definition":
            return own
        for decorator in parent.named_children:
            if decorator.type == "decorator":
                head, _, attr = squash(node_text(decorator, src))[1:].strip().rpartition(".")
                if head == own and attr in _ACCESSORS:
                    return f"{own}.{attr}"
        return own

    def is_definition(self, node: Node) -> bool:
        """``@overload`` stubs declare a signature for type checkers only: like other
        languages' bodiless declarations they are not units (the implementation is)."""
        parent = node.parent
        if parent is None or parent.type != "decorated_definition":
            return True
        return not any(d.type == "decorator" and d.text is not None
                       and d.text[1:].strip() in _OVERLOAD for d in parent.named_children)

    def anchor(self, node: Node) -> Node:
        parent = node.parent
        return parent if parent is not None and parent.type == "decorated_definition" else node

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        if kind == "class":
            return None
        params_node = node.child_by_field_name("parameters")
        if params_node is None:
            return []
        params: list[ParamDict] = []
        for child in params_node.named_children:
            ctype = child.type
            if ctype in self._params:
                prefix, optional = self._params[ctype]
                params.append(param(name=prefix + node_text(child, src).lstrip("*"),
                                        optional=optional))
            elif ctype == "typed_parameter":
                inner = child.named_children[0]
                prefix, optional = self._params.get(inner.type, ("", False))
                type_node = child.child_by_field_name("type")
                params.append(param(
                    name=prefix + node_text(inner, src).lstrip("*"), optional=optional,
                    type=node_text(type_node, src) if type_node is not None else None))
            elif ctype in ("default_parameter", "typed_default_parameter"):
                name = child.child_by_field_name("name")
                type_node = child.child_by_field_name("type")
                value = child.child_by_field_name("value")
                params.append(param(
                    name=node_text(name, src) if name is not None else "",
                    type=node_text(type_node, src) if type_node is not None else None,
                    optional=True,
                    default_value=node_text(value, src) if value is not None else None))
        if kind == "method" and params and params[0]["name"] in ("self", "cls"):
            params = params[1:]
        return params

    def return_type(self, node: Node, src: bytes) -> str | None:
        rt = node.child_by_field_name("return_type")
        return squash(node_text(rt, src)) if rt is not None else None

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        if name.startswith("__") and name.endswith("__"):
            return "public"
        return "private" if name.startswith("_") else "public"

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        if anchor is node:
            return []
        return [squash(node_text(d, src))[1:].strip()
                for d in anchor.named_children if d.type == "decorator"]

    def module_docstring(self, root: Node, src: bytes) -> DocComment | None:
        return self._block_docstring(root, src)

    def docstring(self, node: Node, anchor: Node, src: bytes) -> DocComment | None:
        body = node.child_by_field_name("body")
        return self._block_docstring(body, src) if body is not None else None

    @staticmethod
    def _block_docstring(body: Node, src: bytes) -> DocComment | None:
        """A string literal as the block's first statement (comments may precede it)."""
        # Sibling steps, not ``named_children``: a class body or module has many.
        first = body.named_child(0) if body.named_child_count else None
        while first is not None and first.type == "comment":
            first = first.next_named_sibling
        if first is None or first.type != "expression_statement" \
                or first.named_child_count != 1:
            return None
        literal = first.named_child(0)
        if literal is None:
            return None
        if literal.type == "string":
            text = _unquote(node_text(literal, src))
        elif literal.type == "concatenated_string":
            text = "".join(_unquote(node_text(s, src)) for s in literal.named_children)
        else:
            return None
        cleaned = inspect.cleandoc(text) if "\n" in text else text.strip()
        return DocComment(cleaned, first.start_byte, first.end_byte, False)

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        out: list[Binding] = []
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "dotted_name":
                    dotted = node_text(child, src)
                    out.append(Binding(dotted.split(".", 1)[0], None, dotted))
                elif child.type == "aliased_import":
                    name = child.child_by_field_name("name")
                    alias = child.child_by_field_name("alias")
                    if name is not None and alias is not None:
                        out.append(Binding(node_text(alias, src), None, node_text(name, src)))
            return out
        module = node.child_by_field_name("module_name")
        base = node_text(module, src) if module is not None else ""
        joiner = "" if base.endswith(".") else "."
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                name_node = child.child_by_field_name("name")
                alias_node = child.child_by_field_name("alias")
                if name_node is None or alias_node is None:
                    continue
                symbol = node_text(name_node, src)
                out.append(Binding(node_text(alias_node, src), symbol, base + joiner + symbol))
            else:
                symbol = node_text(child, src)
                out.append(Binding(symbol, symbol, base + joiner + symbol))
        if not out and base:
            out.append(Binding(None, None, base))
        return out

    def exports(self, root: Node, src: bytes, top_level: list[tuple[str, Node]]) -> list[str]:
        for stmt in root.named_children:
            if stmt.type != "expression_statement" or stmt.named_child_count != 1:
                continue
            assign = stmt.named_children[0]
            if assign.type not in ("assignment", "augmented_assignment"):
                continue
            left = assign.child_by_field_name("left")
            right = assign.child_by_field_name("right")
            if left is None or right is None or node_text(left, src) != "__all__":
                continue
            if right.type in ("list", "tuple"):
                return [_unquote(node_text(s, src)) for s in right.named_children
                        if s.type == "string"]
        return [name for name, _ in top_level if not name.startswith("_")]
