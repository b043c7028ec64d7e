"""TypeScript (and TSX): JavaScript plus types, interfaces, enums and access modifiers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import node_text, param, squash
from .javascript import (
    _FUNCTION_VALUES,
    _PARENTHESIZED,
    _WRAPPED,
    JS_BRANCHES,
    JS_CALLS_AND_IMPORTS,
    JavaScriptSpec,
)

if TYPE_CHECKING:
    from tree_sitter import Node

    from ._base import ParamDict


_TYPE_ASSERTION = f"(type_assertion . (type_arguments) . {_FUNCTION_VALUES} @def)"
"""``<T>(() => ...)``: TSX has no such node (``<T>`` opens an element there)."""


class TypeScriptSpec(JavaScriptSpec):
    key = "typescript"
    grammar = ("tree_sitter_typescript", "language_typescript")
    class_types = frozenset({"class_declaration", "class", "abstract_class_declaration",
                             "interface_declaration", "enum_declaration"})
    field_types = ("public_field_definition",)
    query = f"""
    [(function_declaration) (generator_function_declaration) (method_definition)
     (class_declaration) (abstract_class_declaration) (interface_declaration)
     (enum_declaration) (class)] @def
    (variable_declarator value: {_FUNCTION_VALUES} @def)
    (public_field_definition value: {_FUNCTION_VALUES} @def)
    (pair value: {_FUNCTION_VALUES} @def)
    (assignment_expression left: [(member_expression) (identifier)]
                           right: {_FUNCTION_VALUES} @def)
    (export_statement value: {_FUNCTION_VALUES} @def)
    {_PARENTHESIZED}
    {_WRAPPED.format(wrapper="as_expression")}
    {_WRAPPED.format(wrapper="satisfies_expression")}
    {_WRAPPED.format(wrapper="non_null_expression")}
    {_TYPE_ASSERTION}
    (variable_declarator name: (identifier)
                         value: [(object) (parenthesized_expression) (as_expression)
                                 (satisfies_expression)] @scope)
    {JS_BRANCHES}
    {JS_CALLS_AND_IMPORTS}
    """

    tsx_query = query.replace(_TYPE_ASSERTION, "")

    def _parameter(self, child: Node, src: bytes) -> ParamDict | None:
        if child.type not in ("required_parameter", "optional_parameter"):
            return super()._parameter(child, src)
        pattern = child.child_by_field_name("pattern")
        type_node = child.child_by_field_name("type")
        value = child.child_by_field_name("value")
        name = node_text(pattern, src) if pattern is not None else ""
        if pattern is not None and pattern.type == "rest_pattern":
            name = "..." + name.lstrip(".")
        return param(
            name=squash(name),
            type=squash(node_text(type_node, src)).lstrip(":").strip()
            if type_node is not None else None,
            optional=child.type == "optional_parameter" or value is not None
            or name.startswith("..."),
            default_value=node_text(value, src) if value is not None else None,
        )
