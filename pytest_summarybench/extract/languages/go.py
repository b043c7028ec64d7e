"""Go: functions, methods named ``Receiver.Method``, struct and interface types."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._base import Binding, DefKind, DocComment, Enclosing, LanguageSpec, node_text, param, squash

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict

_RECEIVER_TYPE = re.compile(r"[A-Za-z_]\w*")
_MAJOR_VERSION = re.compile(r"v\d+\Z")


class GoSpec(LanguageSpec):
    key = "go"
    branch_operators = frozenset({"&&", "||"})
    grammar = ("tree_sitter_go", "language")
    distinct_names = True
    class_types = frozenset({"type_spec"})
    function_types = frozenset({"function_declaration", "method_declaration"})
    self_receivers = frozenset()
    query = """
    [(function_declaration) (method_declaration)] @def
    (type_spec type: [(struct_type) (interface_type)]) @def
    (call_expression function: (_) @call)
    (composite_literal type: [(type_identifier) (qualified_type) (generic_type)] @new)
    [(if_statement) (for_statement) (expression_case) (type_case) (communication_case)]
      @branch
    (binary_expression) @binary
    (import_spec) @import
    """

    def name(self, node: Node, src: bytes) -> str | None:
        own = node.child_by_field_name("name")
        if own is None:
            return None
        name = node_text(own, src)
        if node.type == "method_declaration":
            receiver = node.child_by_field_name("receiver")
            recv_type = self.receiver_type(receiver, src) if receiver is not None else None
            if recv_type:
                return f"{recv_type}.{name}"
        return name

    @staticmethod
    def receiver_type(receiver: Node, src: bytes) -> str | None:
        """``(s *Server[T])`` -> ``Server``."""
        for decl in receiver.named_children:
            type_node = decl.child_by_field_name("type")
            if type_node is not None:
                m = _RECEIVER_TYPE.search(node_text(type_node, src))
                return m.group() if m else None
        return None

    def kind(self, node: Node, enclosing: Enclosing) -> DefKind:
        if node.type == "type_spec":
            return "class"
        return "method" if node.type == "method_declaration" else "function"

    def anchor(self, node: Node) -> Node:
        parent = node.parent
        if node.type == "type_spec" and parent is not None \
                and parent.type == "type_declaration" and parent.named_child_count == 1:
            return parent
        return node

    def body(self, node: Node) -> Node | None:
        if node.type == "type_spec":
            return node.child_by_field_name("type")
        return node.child_by_field_name("body")

    def signature(self, node: Node, src: bytes) -> str:
        if node.type == "type_spec":
            own = node.child_by_field_name("type")
            kind = "struct" if own is not None and own.type == "struct_type" else "interface"
            head = node.child_by_field_name("name")
            params = node.child_by_field_name("type_parameters")
            text = node_text(head, src) if head is not None else ""
            if params is not None:
                text += node_text(params, src)
            return f"type {text} {kind}"
        return super().signature(node, src)

    def module_docstring(self, root: Node, src: bytes) -> DocComment | None:
        for child in root.named_children:
            if child.type == "package_clause":
                return self.line_comment_run(child, src, "//")
        return None

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        short = name.rsplit(".", 1)[-1]
        return "public" if short[:1].isupper() else "private"

    def docstring(self, node: Node, anchor: Node, src: bytes) -> DocComment | None:
        return self.line_comment_run(anchor, src, "//")

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return []
        out: list[ParamDict] = []
        for decl in params.named_children:
            if decl.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            type_node = decl.child_by_field_name("type")
            type_text = squash(node_text(type_node, src)) if type_node is not None else None
            variadic = decl.type == "variadic_parameter_declaration"
            if variadic and type_text is not None:
                type_text = "..." + type_text
            names = decl.children_by_field_name("name")
            if not names:
                out.append(param(name="_", type=type_text, optional=variadic))
            for name in names:
                out.append(param(name=node_text(name, src), type=type_text,
                                     optional=variadic))
        return out

    def return_type(self, node: Node, src: bytes) -> str | None:
        result = node.child_by_field_name("result")
        return squash(node_text(result, src)) if result is not None else None

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        path_node = node.child_by_field_name("path")
        if path_node is None:
            return []
        path = node_text(path_node, src).strip('"`')
        alias = node.child_by_field_name("name")
        if alias is not None:
            local = node_text(alias, src)
            return [Binding(None if local in ("_", ".") else local, None, path)]
        parts = path.split("/")
        last = parts[-1]
        if _MAJOR_VERSION.match(last) and len(parts) > 1:
            last = parts[-2]
        return [Binding(last.replace("-", "_"), None, path)]

    def exports(self, root: Node, src: bytes, top_level: list[tuple[str, Node]]) -> list[str]:
        return [name for name, _ in top_level if "." not in name and name[:1].isupper()]
