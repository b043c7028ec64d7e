"""Java: classes, interfaces, enums and records; methods and constructors; annotations.

Anonymous class bodies (``new TypeAdapter<T>() { ... }``) and enum constants' bodies are
name-only scopes, so their methods are methods with names that say where they are:
``Outer.create.<anonymous TypeAdapter@L42>.read``, ``TimeUnit.SECONDS.toMillis``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._base import Binding, DefKind, LanguageSpec, node_text, param, squash, strip_generics

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict

_VISIBILITY = ("public", "private", "protected")


class JavaSpec(LanguageSpec):
    key = "java"
    branch_operators = frozenset({"&&", "||"})
    grammar = ("tree_sitter_java", "language")
    class_types = frozenset({"class_declaration", "interface_declaration", "enum_declaration",
                             "record_declaration", "annotation_type_declaration"})
    function_types = frozenset({"method_declaration", "constructor_declaration",
                                "compact_constructor_declaration"})
    comment_types = frozenset({"block_comment", "line_comment"})
    bare_calls_reach_members = True
    distinct_names = True
    query = """
    (object_creation_expression (class_body) @scope)
    (enum_constant body: (class_body) @scope)
    [(class_declaration) (interface_declaration) (enum_declaration) (record_declaration)
     (annotation_type_declaration) (method_declaration) (constructor_declaration)
     (compact_constructor_declaration)] @def
    (method_invocation) @call.member
    (object_creation_expression type: (_) @new)
    [(if_statement) (for_statement) (enhanced_for_statement) (while_statement)
     (do_statement) (catch_clause) (ternary_expression)] @branch
    (switch_label (_)) @branch
    (binary_expression) @binary
    (import_declaration) @import
    """

    def scope_name(self, node: Node, src: bytes) -> str | None:
        holder = node.parent
        if holder is None:
            return None
        if holder.type == "enum_constant":
            name = holder.child_by_field_name("name")
            return node_text(name, src) if name is not None else None
        base = holder.child_by_field_name("type")
        simple = simple_type(node_text(base, src)) if base is not None else "Object"
        return f"<anonymous {simple}@L{holder.start_point.row + 1}>"

    def parameter_types(self, node: Node, src: bytes) -> str | None:
        params = node.child_by_field_name("parameters")
        types: list[str] = []
        for child in params.named_children if params is not None else ():
            if child.type == "spread_parameter":
                name = ""
                for part in child.named_children:
                    if part.type == "variable_declarator":
                        inner = part.child_by_field_name("name")
                        name = node_text(inner if inner is not None else part, src)
                types.append(parameter_type(node_text(child, src), name))
            elif child.type == "formal_parameter":
                name_node = child.child_by_field_name("name")
                name = node_text(name_node, src) if name_node is not None else ""
                if name != "this":  # a receiver parameter is no parameter of the call
                    types.append(parameter_type(node_text(child, src), name))
        return f"({','.join(types)})"

    @staticmethod
    def _modifiers(node: Node) -> Node | None:
        for child in node.children:
            if child.type == "modifiers":
                return child
        return None

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        mods = self._modifiers(node)
        if mods is not None:
            for child in mods.children:
                if child.type in _VISIBILITY:
                    return child.type  # type: ignore[return-value]
        parent = node.parent
        if parent is not None and parent.type in ("interface_body",
                                                  "annotation_type_body"):
            return "public"
        return None

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        mods = self._modifiers(node)
        if mods is None:
            return []
        return [squash(node_text(c, src))[1:] for c in mods.named_children
                if c.type in ("marker_annotation", "annotation")]

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return []
        out: list[ParamDict] = []
        for child in params.named_children:
            if child.type == "formal_parameter":
                name = child.child_by_field_name("name")
                type_node = child.child_by_field_name("type")
                dims = child.child_by_field_name("dimensions")
                type_text = node_text(type_node, src) if type_node is not None else None
                if type_text is not None and dims is not None:
                    type_text += node_text(dims, src)
                out.append(param(name=node_text(name, src) if name is not None else "",
                                     type=squash(type_text) if type_text else None))
            elif child.type == "spread_parameter":
                type_text = None
                name_text = ""
                for part in child.named_children:
                    if part.type == "variable_declarator":
                        inner = part.child_by_field_name("name")
                        name_text = node_text(inner if inner is not None else part, src)
                    elif part.type != "modifiers":
                        type_text = node_text(part, src)
                out.append(param(name=name_text, optional=True,
                                     type=f"{type_text}..." if type_text else None))
        return out

    def return_type(self, node: Node, src: bytes) -> str | None:
        if node.type != "method_declaration":
            return None
        rt = node.child_by_field_name("type")
        dims = node.child_by_field_name("dimensions")
        if rt is None:
            return None
        return squash(node_text(rt, src)) + (node_text(dims, src) if dims is not None else "")

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        text = squash(node_text(node, src)).removeprefix("import").strip().rstrip(";").strip()
        if text.startswith("static "):
            text = text[len("static "):].strip()
        if text.endswith(".*"):
            return [Binding(None, None, text[:-2])]
        last = text.rsplit(".", 1)[-1]
        return [Binding(last, last, text)]


_ANNOTATION = re.compile(r"@[\w.]+(\s*\([^)]*\))?")
_FINAL = re.compile(r"\bfinal\b")
_DIMS = re.compile(r"((\s*\[\s*\])+)$")


def simple_type(text: str) -> str:
    """``java.util.Map.Entry<K, V>`` -> ``Entry``; array dimensions kept, ``...`` as ``[]``."""
    t = "".join(strip_generics(_ANNOTATION.sub("", text)).split()).replace("...", "[]")
    base, bracket, dims = t.partition("[")
    return base.rsplit(".", 1)[-1] + bracket + dims


def parameter_type(text: str, name: str) -> str:
    """A formal parameter as written (``final @A List<T> xs[]``) -> its simple type
    (``List[]``). The oracle (benchmarks/extraction/oracles/java.java) does the same."""
    t = _FINAL.sub(" ", _ANNOTATION.sub(" ", text)).strip()
    dims = ""
    m = _DIMS.search(t)
    if m is not None:
        dims = "".join(m.group(1).split())
        t = t[:m.start()].strip()
    if name and t.endswith(name):
        t = t[:-len(name)]
    return simple_type(t) + dims
