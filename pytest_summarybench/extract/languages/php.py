"""PHP: classes, interfaces, traits and enums; methods and functions; ``#[...]``
attributes; ``use`` imports. Parameter names are given without the ``$`` sigil.

An anonymous class (``new class extends Base { ... }``) is a name-only scope, so its
methods are methods named after where they are: ``Outer.make.<anonymous Base@L42>.run``
(the base class, else the first interface, else ``class``; and its line), as in Java."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import Binding, DefKind, LanguageSpec, node_text, param, squash

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict


class PhpSpec(LanguageSpec):
    key = "php"
    branch_operators = frozenset({"&&", "||", "and", "or", "??"})
    grammar = ("tree_sitter_php", "language_php")
    distinct_names = True
    class_types = frozenset({"class_declaration", "interface_declaration",
                             "trait_declaration", "enum_declaration"})
    function_types = frozenset({"function_definition", "method_declaration"})
    self_receivers = frozenset({"$this", "self", "static", "parent"})
    query = """
    [(class_declaration) (interface_declaration) (trait_declaration) (enum_declaration)
     (function_definition) (method_declaration)] @def
    (anonymous_class) @scope
    (function_call_expression function: (_) @call)
    [(member_call_expression) (nullsafe_member_call_expression) (scoped_call_expression)]
      @call.member
    (object_creation_expression [(name) (qualified_name)] @new)
    [(if_statement) (else_if_clause) (for_statement) (foreach_statement) (while_statement)
     (do_statement) (catch_clause) (conditional_expression) (case_statement)
     (match_conditional_expression)] @branch
    (binary_expression) @binary
    (namespace_use_declaration) @import
    """

    def scope_name(self, node: Node, src: bytes) -> str | None:
        base = "class"
        for clause in ("base_clause", "class_interface_clause"):
            found = next((c for c in node.named_children if c.type == clause), None)
            named = found.named_children if found is not None else []
            if named:
                base = node_text(named[0], src).rsplit("\\", 1)[-1]
                break
        return f"<anonymous {base}@L{node.start_point.row + 1}>"

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        for child in node.named_children:
            if child.type == "visibility_modifier":
                text = node_text(child, src).lower()
                if text in ("public", "private", "protected"):
                    return text  # type: ignore[return-value]
        return "public"

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        out: list[str] = []
        for lst in node.children_by_field_name("attributes"):
            for group in lst.named_children:
                out.extend(squash(node_text(a, src)) for a in group.named_children
                           if a.type == "attribute")
        return out

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return []
        out: list[ParamDict] = []
        for child in params.named_children:
            if child.type not in ("simple_parameter", "variadic_parameter",
                                  "property_promotion_parameter"):
                continue
            name = child.child_by_field_name("name")
            type_node = child.child_by_field_name("type")
            default = child.child_by_field_name("default_value")
            variadic = child.type == "variadic_parameter"
            out.append(param(
                name=("..." if variadic else "")
                + (node_text(name, src).lstrip("$") if name is not None else ""),
                type=squash(node_text(type_node, src)) if type_node is not None else None,
                optional=variadic or default is not None,
                default_value=node_text(default, src) if default is not None else None))
        return out

    def return_type(self, node: Node, src: bytes) -> str | None:
        rt = node.child_by_field_name("return_type")
        return squash(node_text(rt, src)) if rt is not None else None

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        out: list[Binding] = []
        prefix = ""
        for child in node.named_children:
            if child.type in ("namespace_name", "qualified_name", "name"):
                prefix = node_text(child, src).strip("\\") + "\\"
            elif child.type == "namespace_use_group":
                for clause in child.named_children:
                    out.extend(self._clause(clause, src, prefix))
            elif child.type == "namespace_use_clause":
                out.extend(self._clause(child, src, ""))
        return out

    @staticmethod
    def _clause(clause: Node, src: bytes, prefix: str) -> list[Binding]:
        if clause.type != "namespace_use_clause":
            return []
        alias = clause.child_by_field_name("alias")
        path = None
        for part in clause.named_children:
            if part.type in ("qualified_name", "name") and part != alias:
                path = node_text(part, src).strip("\\")
                break
        if path is None:
            return []
        full = prefix + path
        last = full.rsplit("\\", 1)[-1]
        return [Binding(node_text(alias, src) if alias is not None else last, last, full)]
