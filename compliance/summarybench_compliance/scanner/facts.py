"""One pass over a module's syntax tree collecting the facts the article rules read.

Rules never walk the tree themselves: they ask questions of :class:`CodeFacts` (which
functions are exposed to an agent as tools, which keyword arguments agent constructors
receive, which identifiers name personal data), so each rule stays a short list of
checks and the tree is parsed once per scan.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ..errors import ScanError

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)")


def tokens(identifier: str) -> list[str]:
    """Lower-case word tokens of an identifier: ``sendEmail_v2`` -> send, email, v2."""
    return [t for t in _CAMEL.sub("_", identifier).lower().split("_") if t]


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain (calls in the chain are skipped), else ''."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        else:
            break
    return ".".join(reversed(parts))


@dataclass(frozen=True)
class CallFact:
    """One call expression."""

    name: str
    """Dotted callee, e.g. ``subprocess.run`` or ``Agent``."""
    node: ast.Call
    function: str | None
    """The enclosing function definition, if any."""

    @property
    def last(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def line(self) -> int:
        return self.node.lineno

    def keyword(self, name: str) -> ast.expr | None:
        for kw in self.node.keywords:
            if kw.arg == name:
                return kw.value
        return None


@dataclass
class FunctionFact:
    """A function defined in the module."""

    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    docstring: str | None
    decorators: list[str]
    params: dict[str, str]
    """Parameter name -> annotation source ('' when unannotated)."""
    callees: list[str] = field(default_factory=list)
    referenced: bool = False
    """Whether the function is used as a value elsewhere (passed to a tool wrapper,
    put in a tools list, registered with an agent)."""

    @property
    def is_tool(self) -> bool:
        """Exposed to an agent: decorated as a tool, or handed over by reference."""
        decorated = any("tool" in tokens(d.rsplit(".", 1)[-1]) or d.endswith("tool")
                        for d in self.decorators)
        return decorated or self.referenced

    @property
    def line(self) -> int:
        return self.node.lineno


@dataclass
class CodeFacts:
    """Everything the rules need to know about one module."""

    tree: ast.Module
    module_docstring: str | None
    imports: set[str]
    functions: dict[str, FunctionFact]
    calls: list[CallFact]
    strings: list[tuple[str, int]]
    """String constants (and literal parts of f-strings) with their line."""
    identifiers: list[tuple[str, str, int]]
    """(kind, identifier, line): kind is attr, key, placeholder, name, param or keyword."""
    assignments: dict[str, CallFact]
    """Variable name -> the call whose result it was assigned (``writer = Agent(...)``)."""
    derived: dict[str, object] = field(default_factory=dict, repr=False, compare=False)
    """Facts a rule module derives once per scan and others reuse (e.g. the agent surface
    articles 11 and 12 both read), keyed by the deriving module's name."""

    def calls_named(self, *names: str) -> list[CallFact]:
        """Calls whose last dotted component is one of ``names``."""
        return [c for c in self.calls if c.last in names]

    def keyword_values(self, name: str) -> list[tuple[CallFact, ast.expr]]:
        """Every ``name=value`` keyword argument in the module, with its call."""
        out = []
        for call in self.calls:
            value = call.keyword(name)
            if value is not None:
                out.append((call, value))
        return out

    def imports_any(self, *prefixes: str) -> bool:
        return any(m == p or m.startswith(p + ".") for m in self.imports for p in prefixes)

    @property
    def tools(self) -> list[FunctionFact]:
        return [f for f in self.functions.values() if f.is_tool]


class _Collector(ast.NodeVisitor):
    def __init__(self) -> None:
        self.imports: set[str] = set()
        self.functions: dict[str, FunctionFact] = {}
        self.calls: list[CallFact] = []
        self.strings: list[tuple[str, int]] = []
        self.identifiers: list[tuple[str, str, int]] = []
        self.assignments: dict[str, CallFact] = {}
        self.loaded_names: set[str] = set()
        self._function: list[FunctionFact] = []

    def visit_Import(self, node: ast.Import) -> None:
        self.imports.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module:
            self.imports.add(node.module)
            self.imports.update(f"{node.module}.{alias.name}" for alias in node.names)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        params = {a.arg: ast.unparse(a.annotation) if a.annotation else ""
                  for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        fact = FunctionFact(name=node.name, node=node, docstring=ast.get_docstring(node),
                            decorators=[dotted(d) for d in node.decorator_list],
                            params=params)
        if not self._function:
            self.functions.setdefault(node.name, fact)
        for name in params:
            self.identifiers.append(("param", name, node.lineno))
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._function.append(fact)
        for child in node.body:
            self.visit(child)
        self._function.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Call(self, node: ast.Call) -> None:
        enclosing = self._function[0] if self._function else None
        call = CallFact(name=dotted(node.func), node=node,
                        function=enclosing.name if enclosing else None)
        self.calls.append(call)
        if enclosing is not None:
            enclosing.callees.append(call.name)
        for kw in node.keywords:
            if kw.arg:
                self.identifiers.append(("keyword", kw.arg, node.lineno))
        # A bare name in call position is a call, not a reference to the function as a
        # value, so it must not mark the function as handed over to an agent.
        if isinstance(node.func, ast.Name):
            self.identifiers.append(("name", node.func.id, node.lineno))
        else:
            self.visit(node.func)
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            self.visit(kw.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Call):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.assignments[target.id] = CallFact(
                        name=dotted(node.value.func), node=node.value,
                        function=self._function[0].name if self._function else None)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.identifiers.append(("attr", node.attr, node.lineno))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            self.identifiers.append(("key", node.slice.value, node.lineno))
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key in node.keys:
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self.identifiers.append(("key", key.value, key.lineno))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        self.identifiers.append(("name", node.id, node.lineno))
        if isinstance(node.ctx, ast.Load):
            self.loaded_names.add(node.id)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self.strings.append((node.value, node.lineno))
            for placeholder in _PLACEHOLDER.findall(node.value):
                self.identifiers.append(("placeholder", placeholder, node.lineno))


MAX_DEPTH = 100
"""The deepest syntax tree the scanner reads, in levels of nesting. The collector and the
rules recurse on nesting (Python's recursion limit is 1,000 frames, a few per level), and
some walk up a node's ancestors for each node; the datasets' deepest example has 17."""


class TooDeep(ScanError):
    """The syntax tree nests deeper than :data:`MAX_DEPTH`."""


def check_depth(tree: ast.AST, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`TooDeep` when ``tree`` nests deeper than ``limit`` levels (walked
    without recursion, so that any depth is measured)."""
    stack: list[tuple[ast.AST, int, int]] = [(tree, 1, 1)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > limit:
            raise TooDeep(f"the code nests deeper than {limit} levels (at line {line})")
        stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))


def collect(source: str) -> CodeFacts:
    """Parse ``source`` and collect its facts; raises SyntaxError on invalid Python and
    :class:`TooDeep` on code nested past :data:`MAX_DEPTH`."""
    tree = ast.parse(source)
    check_depth(tree)
    collector = _Collector()
    collector.visit(tree)
    for name, fact in collector.functions.items():
        fact.referenced = name in collector.loaded_names
    return CodeFacts(tree=tree, module_docstring=ast.get_docstring(tree),
                     imports=collector.imports, functions=collector.functions,
                     calls=collector.calls, strings=collector.strings,
                     identifiers=collector.identifiers, assignments=collector.assignments)
