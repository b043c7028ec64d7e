"""Rust: functions, structs, enums, traits; ``impl`` blocks name their methods
``Type.method``; ``mod`` blocks qualify names; attributes are the decorators."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._base import (
    Binding,
    DefKind,
    DocComment,
    Enclosing,
    LanguageSpec,
    clean_block_comment,
    last_row,
    node_text,
    param,
    squash,
)

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict

_TYPE_NAME = re.compile(r"[A-Za-z_]\w*")
# Where a type wraps the one that names it: ``&'a mut Foo<T>``, ``*const T``, ``[T]``,
# ``dyn Trait + Send``, ``path::Foo<T>``.
_INNER_TYPE = {"reference_type": "type", "pointer_type": "type", "array_type": "element",
               "generic_type": "type", "scoped_type_identifier": "name",
               "dynamic_type": "trait"}


def _type_name(node: Node, src: bytes) -> str | None:
    """The name an ``impl`` qualifies its items with: ``impl<'a> X for &'a mut Foo<T>``
    -> ``Foo``; None for types without one (``()``, tuples, function pointers)."""
    while True:
        if node.type in ("type_identifier", "primitive_type"):
            text = node_text(node, src)
            return text[2:] if text.startswith("r#") else text
        inner: Node | None
        if node.type == "bounded_type":
            inner = node.named_children[0] if node.named_child_count else None
        else:
            field = _INNER_TYPE.get(node.type)
            inner = node.child_by_field_name(field) if field is not None else None
        if inner is None:
            if node.type in ("unit_type", "tuple_type", "function_type", "never_type"):
                return None
            m = _TYPE_NAME.search(node_text(node, src).rsplit("::", 1)[-1])
            return m.group() if m else None
        node = inner


class RustSpec(LanguageSpec):
    key = "rust"
    branch_operators = frozenset({"&&", "||"})
    grammar = ("tree_sitter_rust", "language")
    distinct_names = True
    class_types = frozenset({"struct_item", "enum_item", "trait_item", "union_item"})
    function_types = frozenset({"function_item"})
    comment_types = frozenset({"line_comment", "block_comment"})
    leading_attached = frozenset({"attribute_item"})
    self_receivers = frozenset({"self", "Self"})
    query = """
    [(function_item) (struct_item) (enum_item) (trait_item) (union_item)] @def
    [(impl_item) (mod_item body: (_))] @scope
    (call_expression function: (_) @call)
    (struct_expression name: (_) @new)
    [(if_expression) (match_arm) (while_expression) (for_expression)] @branch
    (binary_expression) @binary
    (use_declaration) @import
    """

    def name(self, node: Node, src: bytes) -> str | None:
        own = super().name(node, src)
        # ``fn r#type()`` is called as ``r#type()``, a call of ``type``.
        return own[2:] if own is not None and own.startswith("r#") else own

    def scope_name(self, node: Node, src: bytes) -> str | None:
        if node.type == "mod_item":
            return self.name(node, src)
        type_node = node.child_by_field_name("type")
        return _type_name(type_node, src) if type_node is not None else None

    def kind(self, node: Node, enclosing: Enclosing) -> DefKind:
        if node.type in self.class_types:
            return "class"
        holder = node.parent.parent if node.parent is not None else None
        if holder is not None and holder.type in ("impl_item", "trait_item"):
            return "method"
        return "function"

    def body(self, node: Node) -> Node | None:
        return node.child_by_field_name("body")

    def is_definition(self, node: Node) -> bool:
        # Unit structs (``struct Marker;``) have no body but are still types.
        return node.type in self.class_types or self.body(node) is not None

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        for child in node.named_children:
            if child.type == "visibility_modifier":
                return "public"
        holder = node.parent.parent if node.parent is not None else None
        if holder is not None and (holder.type == "trait_item" or (
                holder.type == "impl_item" and holder.child_by_field_name("trait") is not None)):
            return "public"
        return "private"

    def _trailing_comment(self, node: Node) -> bool:
        """A comment on the line an attribute ends (``#[cfg(unix)] // why``)."""
        before = node.prev_named_sibling
        return node.type in self.comment_types and before is not None \
            and before.type == "attribute_item" and before.end_point.row == node.start_point.row

    def anchor(self, node: Node) -> Node:
        """The first of the attributes right before the item; a comment trailing one of
        them does not end the run."""
        first = node
        prev = first.prev_named_sibling
        while prev is not None and (prev.type == "attribute_item"
                                    or self._trailing_comment(prev)):
            if prev.type == "attribute_item":
                first = prev
            prev = prev.prev_named_sibling
        return first

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        out: list[str] = []
        sibling: Node | None = anchor
        while sibling is not None and sibling is not node and (
                sibling.type == "attribute_item" or self._trailing_comment(sibling)):
            if sibling.type == "attribute_item":
                text = squash(node_text(sibling, src))
                out.append(text[2:-1] if text.startswith("#[") else text)
            sibling = sibling.next_named_sibling
        return out

    def docstring(self, node: Node, anchor: Node, src: bytes) -> DocComment | None:
        prev = anchor.prev_named_sibling
        if prev is not None and prev.type == "block_comment":
            text = node_text(prev, src)
            if text.startswith("/**") and last_row(prev) >= anchor.start_point.row - 1:
                return DocComment(clean_block_comment(text), prev.start_byte, prev.end_byte,
                                  True)
            return None
        return self.line_comment_run(anchor, src, "///")

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return []
        out: list[ParamDict] = []
        for child in params.named_children:
            if child.type != "parameter":
                continue
            pattern = child.child_by_field_name("pattern")
            type_node = child.child_by_field_name("type")
            out.append(param(
                name=squash(node_text(pattern, src)) if pattern is not None else "_",
                type=squash(node_text(type_node, src)) if type_node is not None else None))
        return out

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        arg = node.child_by_field_name("argument")
        if arg is None:
            return []
        out: list[Binding] = []
        stack: list[tuple[str, Node]] = [("", arg)]
        while stack:
            prefix, item = stack.pop()
            itype = item.type
            if itype in ("scoped_use_list", "use_list"):
                path = item.child_by_field_name("path")
                base = prefix + (node_text(path, src) + "::" if path is not None else "")
                inner = item.child_by_field_name("list") if itype == "scoped_use_list" else item
                if inner is not None:
                    stack.extend((base, c) for c in reversed(inner.named_children))
            elif itype == "use_as_clause":
                path = item.child_by_field_name("path")
                alias = item.child_by_field_name("alias")
                if path is not None and alias is not None:
                    full = prefix + node_text(path, src)
                    out.append(Binding(node_text(alias, src), full.rsplit("::", 1)[-1], full))
            elif itype == "use_wildcard":
                out.append(Binding(None, None, prefix + squash(node_text(item, src))))
            else:
                full = prefix + squash(node_text(item, src))
                last = full.rsplit("::", 1)[-1]
                out.append(Binding(None if last == "self" else last, last, full))
        return out

    def exports(self, root: Node, src: bytes, top_level: list[tuple[str, Node]]) -> list[str]:
        return [name for name, node in top_level if any(
            c.type == "visibility_modifier" for c in node.named_children)]
