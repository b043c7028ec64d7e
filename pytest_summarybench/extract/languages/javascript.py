"""JavaScript: declarations, classes, methods, and functions bound to names.

Arrow functions, function expressions and class expressions become units when something
names them: a variable (``const f = () => ...``), a class field, an object key, an
assignment (``module.exports.f = function``, ``x = class X {}``) or ``export default``,
also through parentheses and TypeScript's ``as``, ``satisfies``, ``!`` and ``<T>``
(``const f = ((url) => ...) as Got``). Anonymous callbacks are not units; their calls count
for the enclosing unit. A class expression nothing names is a name-only scope
(``<anonymous Base@L12>``), so its methods are methods. TypeScript extends this spec.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._base import (
    Binding,
    DefKind,
    Enclosing,
    LanguageSpec,
    node_text,
    param,
    squash,
    strip_generics,
    trim_signature,
)

if TYPE_CHECKING:
    from tree_sitter import Node

    from ...schemas.units import Visibility
    from ._base import ParamDict

_FUNCTION_VALUES = "[(arrow_function) (function_expression) (generator_function)]"
WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression",
                      "non_null_expression", "type_assertion"})
"""Expressions that only wrap a value (``(f)``, ``f as T``, ``f satisfies T``, ``f!``,
``<T>f``): a function inside one is named by what names the wrapper."""
_WRAPPED = "({wrapper} . " + _FUNCTION_VALUES + " @def)"
"""A function value a wrapper holds first. Anchored: an unanchored child pattern waits
through every child of every enclosing wrapper, which is quadratic in how deep they nest
(``((((...))))``)."""
_PARENTHESIZED = (_WRAPPED.format(wrapper="parenthesized_expression")
                  + "\n    (parenthesized_expression . (comment) . " + _FUNCTION_VALUES
                  + " @def)")
"""A function value in parentheses, after at most one comment."""
_SIMPLE_TYPE = re.compile(r"[A-Za-z_$][\w$.]*(\[\])*")

JS_BRANCHES = """
    [(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
     (switch_case) (catch_clause) (ternary_expression)] @branch
    (binary_expression) @binary
"""
JS_CALLS_AND_IMPORTS = """
    (call_expression function: (_) @call)
    (new_expression constructor: (_) @new)
    (import_statement) @import
    (variable_declarator
      value: (call_expression function: (identifier) @_req arguments: (arguments . (string)))
      (#eq? @_req "require")) @import
"""


def _unquote(text: str) -> str:
    return text.strip().strip("'\"`")


def unwrap(node: Node) -> tuple[Node, Node | None]:
    """The outermost wrapper around ``node`` (itself when unwrapped) and what holds it."""
    top = node
    parent = node.parent
    while parent is not None and parent.type in WRAPPERS:
        top, parent = parent, parent.parent
    return top, parent


def _holds(context: Node, field_name: str, top: Node) -> bool:
    held = context.child_by_field_name(field_name)
    return held is not None and held.id == top.id


class JavaScriptSpec(LanguageSpec):
    key = "javascript"
    branch_operators = frozenset({"&&", "||", "??"})
    grammar = ("tree_sitter_javascript", "language")
    class_types = frozenset({"class_declaration", "class"})
    function_types = frozenset({"function_declaration", "generator_function_declaration",
                                "method_definition", "arrow_function", "function_expression",
                                "generator_function"})
    leading_attached = frozenset({"decorator"})
    self_receivers = frozenset({"this", "super"})
    field_types: tuple[str, ...] = ("field_definition",)
    distinct_names = True
    query = f"""
    [(function_declaration) (generator_function_declaration) (method_definition)
     (class_declaration) (class)] @def
    (variable_declarator value: {_FUNCTION_VALUES} @def)
    (field_definition value: {_FUNCTION_VALUES} @def)
    (pair value: {_FUNCTION_VALUES} @def)
    (assignment_expression left: [(member_expression) (identifier)]
                           right: {_FUNCTION_VALUES} @def)
    (export_statement value: {_FUNCTION_VALUES} @def)
    {_PARENTHESIZED}
    (variable_declarator name: (identifier)
                         value: [(object) (parenthesized_expression . (object))] @scope)
    {JS_BRANCHES}
    {JS_CALLS_AND_IMPORTS}
    """

    def name(self, node: Node, src: bytes) -> str | None:
        own = node.child_by_field_name("name")
        if node.type in ("function_declaration", "generator_function_declaration",
                         "class_declaration", "abstract_class_declaration",
                         "method_definition", "interface_declaration", "enum_declaration"):
            return node_text(own, src) if own is not None else None
        top, context = unwrap(node)
        bound = self._bound_name(top, context, src) if context is not None else None
        if bound is None and node.type == "class" and own is not None:
            return node_text(own, src)  # ``foo(class Bar {})``: the class's own name
        return bound

    def _bound_name(self, top: Node, context: Node, src: bytes) -> str | None:
        """The name ``context`` gives the value ``top`` it holds, if it gives one."""
        ctype = context.type
        if ctype == "variable_declarator":
            target = context.child_by_field_name("name")
            return node_text(target, src) if target is not None and \
                target.type == "identifier" and _holds(context, "value", top) else None
        if ctype in self.field_types:
            target = context.child_by_field_name("property") or \
                context.child_by_field_name("name")
            return node_text(target, src) if target is not None and \
                _holds(context, "value", top) else None
        if ctype == "pair":
            key = context.child_by_field_name("key")
            return _unquote(node_text(key, src)) if key is not None and \
                _holds(context, "value", top) else None
        if ctype == "assignment_expression":
            left = context.child_by_field_name("left")
            return squash(node_text(left, src)) if left is not None and \
                left.type in ("identifier", "member_expression") and \
                _holds(context, "right", top) else None
        if ctype == "export_statement":
            return "default" if _holds(context, "value", top) else None
        return None

    def anonymous_scope(self, node: Node, src: bytes) -> str | None:
        """``<anonymous Base@L12>`` for a class expression nothing names."""
        if node.type != "class":
            return None
        base = "class"
        for heritage in node.named_children:
            if heritage.type != "class_heritage":
                continue
            clause = next((c for c in heritage.named_children
                           if c.type == "extends_clause"), heritage)
            value = clause.child_by_field_name("value") or \
                next(iter(clause.named_children), None)
            if value is not None and value.type in ("identifier", "member_expression"):
                base = node_text(value, src).rsplit(".", 1)[-1]
        return f"<anonymous {base}@L{node.start_point.row + 1}>"

    def scope_name(self, node: Node, src: bytes) -> str | None:
        """An object literal (possibly wrapped: ``{...} as const``) bound to a variable."""
        inner = node
        while inner.type in WRAPPERS and inner.named_child_count:
            inner = inner.named_children[0]
        parent = node.parent
        target = parent.child_by_field_name("name") if parent is not None else None
        return node_text(target, src) if target is not None and inner.type == "object" \
            else None

    def kind(self, node: Node, enclosing: Enclosing) -> DefKind:
        if node.type in self.class_types:
            return "class"
        parent = unwrap(node)[1]
        if node.type == "method_definition" or (
                parent is not None and parent.type in self.field_types):
            return "method" if enclosing in ("class", "scope") else "function"
        return "method" if enclosing == "scope" and parent is not None \
            and parent.type == "pair" else "function"

    def anchor(self, node: Node) -> Node:
        if node.type in ("method_definition", *self.field_types):
            return super().anchor(node)
        parent = unwrap(node)[1]
        if parent is None:
            return node
        first = node
        if parent.type in self.field_types:
            return super().anchor(parent)
        if parent.type == "variable_declarator":
            decl = parent.parent
            if decl is None or decl.named_child_count != 1:
                return parent
            first, parent = decl, decl.parent
        elif parent.type == "assignment_expression":
            stmt = parent.parent
            if stmt is None or stmt.type != "expression_statement":
                return parent
            first, parent = stmt, stmt.parent
        if parent is not None and parent.type == "export_statement":
            return parent
        return first

    def body(self, node: Node) -> Node | None:
        return node.child_by_field_name("body")

    def signature(self, node: Node, src: bytes) -> str:
        body = self.body(node)
        start = node.start_byte
        parent = unwrap(node)[1]
        if parent is not None and parent.type in ("variable_declarator", "pair",
                                                  "assignment_expression", *self.field_types):
            start = parent.start_byte
        end = body.start_byte if body is not None else node.end_byte
        return trim_signature(src[start:end].decode("utf-8", "replace"))

    def decorators(self, node: Node, anchor: Node, src: bytes) -> list[str]:
        found: list[Node] = []
        sibling: Node | None = anchor
        while sibling is not None and sibling.type == "decorator":
            found.append(sibling)
            sibling = sibling.next_named_sibling
        for holder in (node, node.parent):
            if holder is not None and holder.type in ("class_declaration", "export_statement",
                                                      "abstract_class_declaration"):
                found.extend(c for c in holder.children_by_field_name("decorator"))
        return [squash(node_text(d, src))[1:] for d in found]

    def visibility(self, node: Node, name: str, src: bytes) -> Visibility | None:
        if name.startswith("#"):
            return "private"
        parent = unwrap(node)[1]
        holder = parent if parent is not None and parent.type in self.field_types else node
        for child in holder.named_children:
            if child.type == "accessibility_modifier":
                text = node_text(child, src)
                if text in ("public", "private", "protected"):
                    return text  # type: ignore[return-value]
        return "public"

    def parameters(self, node: Node, src: bytes, kind: DefKind) -> list[ParamDict] | None:
        params = node.child_by_field_name("parameters")
        if params is None:
            single = node.child_by_field_name("parameter")
            return [param(name=node_text(single, src))] if single is not None else []
        out: list[ParamDict] = []
        for child in params.named_children:
            parsed = self._parameter(child, src)
            if parsed is not None:
                out.append(parsed)
        return out

    def parameter_types(self, node: Node, src: bytes) -> str | None:
        """``(url,options)``: each parameter's type where it is a plain name (TypeScript),
        else its name (``{}``/``[]`` for a destructured one); no dots, as in names."""
        params = node.child_by_field_name("parameters")
        if params is None:
            single = node.child_by_field_name("parameter")
            return f"({node_text(single, src)})" if single is not None else "()"
        tokens = [self._parameter_token(c, src) for c in params.named_children
                  if c.type not in self.comment_types]
        return f"({','.join(tokens)})"

    def _parameter_token(self, child: Node, src: bytes) -> str:
        pattern: Node | None = child
        type_node = None
        if child.type in ("required_parameter", "optional_parameter"):
            pattern = child.child_by_field_name("pattern")
            type_node = child.child_by_field_name("type")
        if type_node is not None:
            text = "".join(strip_generics(node_text(type_node, src).lstrip(":")).split())
            if _SIMPLE_TYPE.fullmatch(text):
                base, bracket, dims = text.partition("[")
                return base.rsplit(".", 1)[-1] + bracket + dims
        while pattern is not None and pattern.type in ("assignment_pattern", "rest_pattern"):
            inner = pattern.child_by_field_name("left") if pattern.type == \
                "assignment_pattern" else next(iter(pattern.named_children), None)
            pattern = inner
        if pattern is None:
            return ""
        if pattern.type == "object_pattern":
            return "{}"
        if pattern.type == "array_pattern":
            return "[]"
        return node_text(pattern, src)

    def _parameter(self, child: Node, src: bytes) -> ParamDict | None:
        ctype = child.type
        if ctype == "identifier":
            return param(name=node_text(child, src))
        if ctype == "assignment_pattern":
            left = child.child_by_field_name("left")
            right = child.child_by_field_name("right")
            return param(name=node_text(left, src) if left is not None else "",
                             optional=True,
                             default_value=node_text(right, src) if right is not None else None)
        if ctype == "rest_pattern":
            return param(name="..." + node_text(child, src).lstrip("."), optional=True)
        if ctype in ("object_pattern", "array_pattern"):
            return param(name=squash(node_text(child, src)))
        return None

    def imports(self, node: Node, src: bytes) -> list[Binding]:
        if node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            args = value.child_by_field_name("arguments") if value is not None else None
            if args is None or args.named_child_count == 0:
                return []
            module = _unquote(node_text(args.named_children[0], src))
            target = node.child_by_field_name("name")
            if target is None:
                return [Binding(None, None, module)]
            if target.type == "identifier":
                return [Binding(node_text(target, src), None, module)]
            out = []
            for prop in target.named_children:
                if prop.type == "shorthand_property_identifier_pattern":
                    name = node_text(prop, src)
                    out.append(Binding(name, name, module))
                elif prop.type == "pair_pattern":
                    key = prop.child_by_field_name("key")
                    value_node = prop.child_by_field_name("value")
                    if key is not None and value_node is not None:
                        out.append(Binding(node_text(value_node, src), node_text(key, src),
                                           module))
            return out or [Binding(None, None, module)]
        source = node.child_by_field_name("source")
        if source is None:
            return []
        module = _unquote(node_text(source, src))
        out = []
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for item in clause.named_children:
                if item.type == "identifier":
                    out.append(Binding(node_text(item, src), "default", module))
                elif item.type == "namespace_import":
                    for ident in item.named_children:
                        out.append(Binding(node_text(ident, src), None, module))
                elif item.type == "named_imports":
                    for spec in item.named_children:
                        if spec.type != "import_specifier":
                            continue
                        name_node = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias")
                        if name_node is None:
                            continue
                        symbol = _unquote(node_text(name_node, src))
                        local = node_text(alias, src) if alias is not None else symbol
                        out.append(Binding(local, symbol, module))
        return out or [Binding(None, None, module)]

    def exports(self, root: Node, src: bytes, top_level: list[tuple[str, Node]]) -> list[str]:
        names: list[str] = []
        for stmt in root.named_children:
            if stmt.type == "expression_statement":
                names.extend(self._commonjs_exports(stmt, src))
                continue
            if stmt.type != "export_statement":
                continue
            text = src[stmt.start_byte:stmt.start_byte + 20]
            if text.startswith(b"export default"):
                names.append("default")
                continue
            decl = stmt.child_by_field_name("declaration")
            if decl is not None:
                own = decl.child_by_field_name("name")
                if own is not None:
                    names.append(node_text(own, src))
                for declarator in decl.named_children:
                    if declarator.type == "variable_declarator":
                        target = declarator.child_by_field_name("name")
                        if target is not None:
                            names.append(node_text(target, src))
                continue
            for clause in stmt.named_children:
                if clause.type != "export_clause":
                    continue
                for spec in clause.named_children:
                    alias = spec.child_by_field_name("alias")
                    name = spec.child_by_field_name("name")
                    chosen = alias if alias is not None else name
                    if chosen is not None:
                        names.append(_unquote(node_text(chosen, src)))
        return names

    @staticmethod
    def _commonjs_exports(stmt: Node, src: bytes) -> list[str]:
        """``module.exports = { a, b: c }`` / ``module.exports.x = ...`` / ``exports.x = ...``."""
        assign = stmt.named_children[0] if stmt.named_child_count else None
        if assign is None or assign.type != "assignment_expression":
            return []
        left = assign.child_by_field_name("left")
        right = assign.child_by_field_name("right")
        if left is None or right is None:
            return []
        target = squash(node_text(left, src))
        if target == "module.exports":
            if right.type != "object":
                return ["default"]
            out = []
            for prop in right.named_children:
                if prop.type == "shorthand_property_identifier":
                    out.append(node_text(prop, src))
                elif prop.type in ("pair", "method_definition"):
                    key = prop.child_by_field_name("key") or prop.child_by_field_name("name")
                    if key is not None:
                        out.append(_unquote(node_text(key, src)))
            return out
        for prefix in ("module.exports.", "exports."):
            if target.startswith(prefix):
                return [target[len(prefix):]]
        return []
