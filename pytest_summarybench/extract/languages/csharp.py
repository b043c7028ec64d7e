"""C#: classes, structs, interfaces, records and enums; methods, constructors and local
functions; attributes are the decorators. Namespaces do not qualify unit names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import (
    Binding,
    DefKind,
    DocComment,
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

_VISIBILITY = ("public", "private", "protected")
_PARAM_PARTS = ("type", "name", "attribute_list", "modifier", "parameter_modifier")


class CSharpSpec(LanguageSpec):
    key = "csharp"
    branch_operators = frozenset({"&&", "||", "??"})
    grammar = ("tree_sitter_c_sharp", "language")
    class_types = frozenset({"class_declaration", "struct_declaration", "interface_declaration",
                             "record_declaration", "enum_declaration"})
    function_types = frozenset({"method_declaration", "constructor_declaration",
                                "local_function_statement"})
    self_receivers = frozenset({"this", "base"})
    bare_calls_reach_members = True
    query = """
    [(class_declaration) (struct_declaration) (interface_declaration) (record_declaration)
     (enum_declaration) (method_declaration) (constructor_declaration)
     (local_function_statement)] @def
    (invocation_expression function: (_) @call)
    (object_creation_expression type: (_) @new)
    [(if_statement) (for_statement) (foreach_statement) (while_statement) (do_statement)
     (catch_clause) (conditional_expression) (switch_section) (switch_expression_arm)]
      @branch
    (binary_expression) @binary
    (using_directive) @import
    """

    def is_definition(self, node: Node) -> bool:
        return node.type in self.class_types or self.body(node) is not None

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        found: list[str] = [node_text(c, src) for c in node.children if c.type == "modifier"]
        for word in _VISIBILITY:
            if word in found:
                return word  # type: ignore[return-value]
        if "internal" in found:
            return None
        parent = node.parent.parent if node.parent is not None else None
        if parent is not None and parent.type == "interface_declaration":
            return "public"
        if node.type in self.function_types and node.type != "local_function_statement":
            return "private"
        return None

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        return [squash(node_text(attr, src))
                for lst in node.children if lst.type == "attribute_list"
                for attr in lst.named_children if attr.type == "attribute"]

    def docstring(self, node: Node, anchor: Node, src: bytes) -> DocComment | None:
        prev = anchor.prev_named_sibling
        if prev is not None and node_text(prev, src).startswith("/**"):
            if prev.type == "comment" and last_row(prev) >= anchor.start_point.row - 1:
                return DocComment(clean_block_comment(node_text(prev, src)), prev.start_byte,
                                  prev.end_byte, True)
            return None
        return self.line_comment_run(anchor, src, "///")

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return []
        out: list[ParamDict] = []
        loose_type: str | None = None
        for i, child in enumerate(params.children):
            field = params.field_name_for_child(i)
            if child.type == "parameter":
                name = child.child_by_field_name("name")
                type_node = child.child_by_field_name("type")
                default = None
                for j, part in enumerate(child.children):
                    if part.is_named and child.field_name_for_child(j) is None \
                            and part.type not in _PARAM_PARTS:
                        default = node_text(part, src)
                out.append(param(
                    name=node_text(name, src) if name is not None else "",
                    type=squash(node_text(type_node, src)) if type_node is not None else None,
                    optional=default is not None, default_value=default))
            elif field == "type":
                # ``params string[] xs`` is parsed as loose type/name fields.
                loose_type = squash(node_text(child, src))
            elif field == "name":
                out.append(param(name=node_text(child, src), type=loose_type,
                                     optional=True))
                loose_type = None
        return out

    def return_type(self, node: Node, src: bytes) -> str | None:
        rt = node.child_by_field_name("returns") or (
            node.child_by_field_name("type") if node.type == "local_function_statement"
            else None)
        return squash(node_text(rt, src)) if rt is not None else None

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        text = squash(node_text(node, src)).removeprefix("global ").removeprefix("using")
        text = text.strip().rstrip(";").strip()
        if text.startswith("static "):
            return [Binding(None, None, text[len("static "):].strip())]
        if "=" in text:
            alias, target = (part.strip() for part in text.split("=", 1))
            return [Binding(alias, None, target)]
        return [Binding(None, None, text)]

    def exports(self, root: Node, src: bytes, top_level: list[tuple[str, Node]]) -> list[str]:
        return [name for name, node in top_level
                if node.type in self.class_types and self.visibility(node, name, src) == "public"]
