"""Ruby: classes and modules, instance and singleton methods, ``private`` sections,
``require`` imports, ``#`` comment blocks as doc comments.

A singleton method is named as written, ``Foo.self.create`` for ``def self.create`` and
for a ``def create`` inside ``class << self``: Ruby lets a class have an instance method
and a class method of the same name, and the two are different units."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import Binding, Callee, DefKind, DocComment, LanguageSpec, node_text, param, squash

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict

_PREFIX = {"splat_parameter": "*", "hash_splat_parameter": "**", "block_parameter": "&"}
_VISIBILITY_WORDS = ("private", "protected", "public")


class RubySpec(LanguageSpec):
    key = "ruby"
    branch_operators = frozenset({"&&", "||", "and", "or"})
    member_name_field = "method"
    grammar = ("tree_sitter_ruby", "language")
    distinct_names = True
    class_types = frozenset({"class", "module"})
    function_types = frozenset({"method", "singleton_method"})
    self_receivers = frozenset({"self", "super"})
    bare_calls_reach_members = True
    query = """
    [(class) (module) (method) (singleton_method)] @def
    (singleton_class) @scope
    (call) @call.member
    [(if) (elsif) (unless) (while) (until) (for) (when) (rescue) (conditional)
     (if_modifier) (unless_modifier) (while_modifier) (until_modifier) (rescue_modifier)]
      @branch
    (binary) @binary
    (call . method: (identifier) @_req arguments: (argument_list . (string))
      (#any-of? @_req "require" "require_relative")) @import
    """

    def name(self, node: Node, src: bytes) -> str | None:
        own = node.child_by_field_name("name")
        if own is None:
            return None
        # ``class ::Foo`` names the top-level ``Foo``.
        name = squash(node_text(own, src)).replace("::", ".").lstrip(".")
        if node.type == "singleton_method":
            receiver = node.child_by_field_name("object")
            if receiver is not None:
                return f"{squash(node_text(receiver, src))}.{name}"
        return name

    def scope_name(self, node: Node, src: bytes) -> str | None:
        """``class << self`` qualifies its methods as ``self``."""
        value = node.child_by_field_name("value")
        return squash(node_text(value, src)) if value is not None else None

    def class_member_names(self, owner: str, name: str) -> tuple[str, ...]:
        """``Foo.create`` calls a class method (``Foo.self.create``), or a module's own
        function defined with a plain ``def`` (``module_function``, ``extend self``)."""
        return f"{owner}.self.{name}", f"{owner}.{name}"

    def is_definition(self, node: Node) -> bool:
        return True

    def body(self, node: Node) -> Node | None:
        return node.child_by_field_name("body")

    def signature(self, node: Node, src: bytes) -> str:
        if node.type in self.class_types:
            body = node.child_by_field_name("body")
            end = body.start_byte if body is not None else node.end_byte
            # Leading comments inside the class head are not part of the signature.
            for child in node.named_children:
                if child.type == "comment" and child.start_byte < end:
                    end = child.start_byte
                    break
            return squash(src[node.start_byte:end].decode("utf-8", "replace"))
        params = node.child_by_field_name("parameters")
        own = node.child_by_field_name("name")
        end_node = params if params is not None else own
        end = end_node.end_byte if end_node is not None else node.start_byte
        return squash(src[node.start_byte:end].decode("utf-8", "replace"))

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        parent = node.parent
        if parent is not None and parent.type == "argument_list":
            call = parent.parent
            method = call.child_by_field_name("method") if call is not None else None
            if method is not None and node_text(method, src) in _VISIBILITY_WORDS:
                return node_text(method, src)  # type: ignore[return-value]
        if node.type == "singleton_method":
            return "public"
        sibling = node.prev_named_sibling
        while sibling is not None:
            if sibling.type == "identifier":
                word = node_text(sibling, src)
                if word in _VISIBILITY_WORDS:
                    return word  # type: ignore[return-value]
            sibling = sibling.prev_named_sibling
        return "public"

    def docstring(self, node: Node, anchor: Node, src: bytes) -> DocComment | None:
        run = self.line_comment_run(anchor, src, "#")
        if run is not None:
            return run
        # A class's first definition: its comments sit before the body node.
        parent = anchor.parent
        if parent is not None and parent.type in ("body_statement", "argument_list") \
                and parent.start_byte == anchor.start_byte:
            return self.line_comment_run(parent, src, "#")
        return None

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return []
        out: list[ParamDict] = []
        for child in params.named_children:
            ctype = child.type
            if ctype == "identifier":
                out.append(param(name=node_text(child, src)))
                continue
            name = child.child_by_field_name("name")
            value = child.child_by_field_name("value")
            text = node_text(name, src) if name is not None else ""
            if ctype in _PREFIX:
                out.append(param(name=_PREFIX[ctype] + text, optional=True))
            elif ctype in ("optional_parameter", "keyword_parameter"):
                out.append(param(
                    name=text + (":" if ctype == "keyword_parameter" else ""),
                    optional=value is not None,
                    default_value=node_text(value, src) if value is not None else None))
        return out

    def return_type(self, node: Node, src: bytes) -> str | None:
        return None

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        args = node.child_by_field_name("arguments")
        if args is None or args.named_child_count == 0:
            return []
        return [Binding(None, None, node_text(args.named_children[0], src).strip("'\""))]

    def normalize_callee(self, callee: Callee) -> Callee:
        """``Foo.new`` constructs a ``Foo``."""
        if callee.name == "new":
            if callee.receiver is None:
                return Callee("self", "new", True)
            return Callee(None, callee.receiver.rsplit("::", 1)[-1].rsplit(".", 1)[-1], True)
        return callee
