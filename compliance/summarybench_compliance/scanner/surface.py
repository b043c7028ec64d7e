"""What an agent module exposes to its model, read from the syntax tree: the tools it hands
over (decorated, wrapped, registered, listed in a dispatch table or a tool schema) and the
texts that describe its tools and agents, with values resolved through the module's
configuration (:class:`.values.ConstResolver`). Article 11 judges the texts; article 12
reuses the tool discovery.

Two answers to "which functions are tools" live here, and they differ on purpose.
:class:`Surface` is the full discovery (wrappers, ``tools=`` lists, dispatch tables,
schemas, tool classes, tool specs in configuration) with the descriptions each tool is
given, which is what documentation and record-keeping are judged on.
:func:`agent_tools` is the narrow, cheap reading the article 9 and 10 rules use: the
functions the syntax facts mark as tools plus a few framework registration decorators,
without building a :class:`Surface`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .facts import CodeFacts, FunctionFact, dotted, tokens
from .values import UNKNOWN, ConstResolver, Instance, assigned_value

DESCRIPTIVE_KEYS = frozenset({
    "description", "description_override", "backstory", "goal", "role", "instructions",
    "system_message", "system_prompt", "expected_output",
})
"""Keyword arguments, class attributes and config keys that describe an agent, task or tool."""
_SCHEMA_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})
_FREE_TEXT_KEYS = DESCRIPTIVE_KEYS - {"role"}
_PARAMETER_CALLS = frozenset({"Field", "Param", "Parameter", "ParameterMetadata", "Argument",
                              "Option", "Body", "Query", "Path"})
"""Calls whose ``description=`` documents one argument, not an agent or a tool."""
_CHAT_ROLES = frozenset({"system", "user", "assistant", "tool", "function", "developer",
                         "model", "human", "ai"})

_MARKERS = re.compile(
    r"\b(tbd|tba|tbc|todo|fixme|xxx|lorem|ipsum|placeholder|wip|n/a)\b"
    r"|\b(documentation|docs|details|description|more) to follow\b"
    r"|\bto be (added|written|documented|filled in|defined)\b"
    r"|\b(fill (this )?in|coming soon|no description|not documented|describe (this|me))\b",
    re.IGNORECASE)
"""Words that mark a text as not written yet."""
GENERIC_WORDS = frozenset({
    "a", "an", "the", "this", "that", "it", "its", "my", "our", "your", "you", "are", "is",
    "be", "of", "to", "for", "with", "and", "or", "do", "does", "perform", "complete",
    "execute", "handle", "helpful", "useful", "agent", "agents", "assistant", "bot", "tool",
    "tools", "helper", "wrapper", "module", "function", "class", "service", "system",
    "task", "tasks", "job", "thing", "stuff", "result", "results", "output", "input",
    "entry", "point", "main", "run", "runner", "handler", "code", "script", "default",
    "example", "sample", "test", "generic", "basic", "simple", "documentation", "docs",
})
"""Words that fit any agent or tool: a text made only of these describes nothing."""
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")
_TEMPLATE_FIELD = re.compile(r"\{[^{}]*\}")


_NUMBERED_NAME = re.compile(r"^(agent|tool|assistant|bot|worker|task)[ _-]?\d+$", re.I)


def placeholder_reason(text: str, key: str = "description") -> str | None:
    """Why ``text`` describes nothing (empty, a marker such as TBD, generic words only, a
    single word for a free-text field), or None when it reads as a description. For
    ``key="name"`` (an agent's or tool's name) only one or two characters or a numbered
    generic name (``agent_1``, ``Tool 2``) count."""
    if key == "name":
        name = text.strip()
        if len(name) <= 2 or _NUMBERED_NAME.match(name):
            return f"placeholder name ({name!r})"
        return None
    bare = _TEMPLATE_FIELD.sub(" ", text).strip()
    words = _WORD.findall(bare)
    if len("".join(words)) <= 2:
        return "empty" if not words else f"too short ({text.strip()!r})"
    marker = _MARKERS.search(bare)
    # "todo list" or "format XXX-XXX" inside a real sentence is content, not a marker: a
    # marker counts in a short text, or written in capitals (TODO, TBD) anywhere.
    if marker and (len(words) <= 6 or marker.group(0).isupper()):
        return f"not written yet ({text.strip()[:40]!r})"
    lowered = [w.lower() for w in words]
    if len(lowered) <= 8 and all(w in GENERIC_WORDS or w.isdigit() for w in lowered):
        return f"generic words only ({text.strip()[:40]!r})"
    if key in _FREE_TEXT_KEYS and len(lowered) == 1:
        return f"one word ({text.strip()!r})"
    return None


# ---------------------------------------------------------------------------------------
# Tools


@dataclass
class Tool:
    """A function, method or class the module hands to an agent as a tool."""

    name: str
    line: int
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    how: str
    """How it is exposed: decorator, wrapper call, tools list, dispatch table, schema."""
    texts: list[tuple[str, object]] = field(default_factory=list)
    """(source, resolved text or UNKNOWN) of every description found."""

    @property
    def bodies(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """The code that runs when the tool is called."""
        if isinstance(self.node, ast.ClassDef):
            return [n for n in self.node.body
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and not n.name.startswith("__")]
        return [self.node]

    def documentation(self) -> tuple[str, str | None]:
        """('documented'|'unknown'|'placeholder'|'undocumented', reason)."""
        reasons = []
        unknown = False
        for source, text in self.texts:
            if text is UNKNOWN:
                unknown = True
                continue
            if not isinstance(text, str):
                continue
            reason = placeholder_reason(text, "description")
            if reason is None:
                return "documented", None
            reasons.append(f"{source}: {reason}")
        if reasons:
            return "placeholder", "; ".join(reasons)
        if unknown:
            return "unknown", None
        return "undocumented", None


_TOOL_DECORATOR = ("tool", "function_tool", "kernel_function", "register_for_llm",
                   "register_for_execution", "ai_function")


def _decorator_is_tool(decorator: ast.expr) -> bool:
    last = dotted(decorator).rsplit(".", 1)[-1]
    return last in _TOOL_DECORATOR or "tool" in tokens(last)


def _wrapper_is_tool(callee: str) -> bool:
    """A call that wraps or registers a function as a tool."""
    last = callee.rsplit(".", 1)[-1]
    words = set(tokens(callee.replace(".", "_")))
    return bool(words & {"tool", "tools"}) or last in (
        "register_function", "from_function", "from_defaults", "add_function",
        "add_functions", "from_callable", "kernel_function")


def _is_tool_class(cls: ast.ClassDef) -> bool:
    return any("tool" in tokens(dotted(b).rsplit(".", 1)[-1]) for b in cls.bases)


def surface_of(facts: CodeFacts) -> Surface:
    """The module's surface, derived once per scan and shared by the rules that read it."""
    surface = facts.derived.get(__name__)
    if not isinstance(surface, Surface):
        surface = facts.derived[__name__] = Surface(facts)
    return surface


class Surface:
    """The tools and descriptive texts of one module."""

    def __init__(self, facts: CodeFacts) -> None:
        self.facts = facts
        self.nodes: list[ast.AST] = list(ast.walk(facts.tree))
        """Every node of the module, walked once."""
        self.consts = ConstResolver(facts.tree, self.nodes)
        self.defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.methods: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.owner: dict[ast.AST, str] = {}
        self._texts: list[tuple[int, str, str, object]] | None = None
        for node in self.nodes:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.methods[(node.name, item.name)] = item
                        self.owner[item] = node.name
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.setdefault(node.name, node)
        self.tools: dict[str, Tool] = {}
        self._find_tools()

    # -- tools ------------------------------------------------------------------------

    def _function_ref(self, node: ast.expr) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if isinstance(node, ast.Name):
            return self.defs.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in ("self", "cls"):
            for (_, method), fn in self.methods.items():
                if method == node.attr:
                    return fn
        return None

    def _add(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, how: str) -> Tool:
        tool = self.tools.get(node.name)
        if tool is None:
            tool = Tool(node.name, node.lineno, node, how)
            doc = ast.get_docstring(node)
            if doc is not None:
                tool.texts.append(("docstring", doc))
            self.tools[node.name] = tool
        return tool

    def _describe(self, tool: Tool, call: ast.Call, source: str) -> None:
        """Descriptions the wrapper call gives, also nested (``tool_metadata=ToolMetadata(
        description=...)``)."""
        for node in ast.walk(call):
            if isinstance(node, ast.Call) and dotted(node.func).rsplit(".", 1)[
                    -1] not in _PARAMETER_CALLS:
                for kw in node.keywords:
                    if kw.arg in ("description", "description_override"):
                        tool.texts.append((source, self.consts.resolve(kw.value)))

    def _find_tools(self) -> None:
        for node in self.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in node.decorator_list:
                    if _decorator_is_tool(decorator):
                        tool = self._add(node, "decorator")
                        if isinstance(decorator, ast.Call):
                            self._describe(tool, decorator, "decorator description")
            elif isinstance(node, ast.ClassDef) and _is_tool_class(node):
                tool = self._add(node, "tool class")
                for stmt in node.body:
                    target, value = assigned_value(stmt)
                    if target == "description":
                        tool.texts.append(("class attribute", self.consts.resolve(value)))
        for call in self.facts.calls:
            refs = [*call.node.args, *(kw.value for kw in call.node.keywords
                                       if kw.arg in ("fn", "func", "function", "async_fn",
                                                     "f", "callable", "coroutine"))]
            functions = [f for f in map(self._function_ref, refs) if f is not None]
            if functions and _wrapper_is_tool(call.name):
                for fn in functions:
                    self._describe(self._add(fn, f"wrapped by {call.name}"), call.node,
                                   f"{call.last} description")
            tools_kw = call.keyword("tools") or call.keyword("functions")
            if tools_kw is not None:
                for ref in ast.walk(tools_kw):
                    if isinstance(ref, ast.expr):
                        listed = self._function_ref(ref)
                        if listed is not None:
                            self._add(listed, f"tools= of {call.name}")
        for node in self.nodes:
            if isinstance(node, ast.Dict):
                self._dict_tools(node)
        for resolved in self.consts.values.values():
            self._config_tools(resolved)

    def _config_tools(self, value: object, depth: int = 0) -> None:
        """Tool specs in resolved configuration (a JSON schema string, a dataclass spec):
        an entry naming a module function gives that tool its description."""
        if depth > 8:
            return
        fields = value.fields if isinstance(value, Instance) else value
        if isinstance(fields, dict):
            named = [fields.get(k) for k in ("name", "function", "fn", "handler", "tool")]
            texts = [fields[k] for k in ("description", "summary", "desc", "help")
                     if isinstance(fields.get(k), str)]
            for name in named:
                if isinstance(name, str) and name in self.defs and (
                        texts or name in self.tools):
                    tool = self._add(self.defs[name], "tool spec")
                    tool.texts.extend(("spec description", t) for t in texts)
                    break
            for item in fields.values():
                self._config_tools(item, depth + 1)
        elif isinstance(fields, list):
            for item in fields:
                self._config_tools(item, depth + 1)

    def _dict_tools(self, node: ast.Dict) -> None:
        keys = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        # A dispatch table: {"lookup_order": lookup_order, ...}
        for key, value in keys.items():
            refs = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            for ref in refs:  # {"name": fn} or {"name": (fn, "description")}
                fn = self._function_ref(ref)
                if fn is not None and fn.name == key.rsplit(".", 1)[-1]:
                    tool = self._add(fn, "dispatch table")
                    for other in refs:
                        text = self.consts.resolve(other) if other is not ref else None
                        if isinstance(text, str):
                            tool.texts.append(("dispatch table entry", text))
        # A tool schema: {"name": "lookup_order", "description": ..., "parameters": ...}
        name = keys.get("name")
        if isinstance(name, ast.Constant) and isinstance(name.value, str) \
                and name.value in self.defs and ({"description", "parameters", "input_schema"}
                                                 & set(keys)):
            tool = self._add(self.defs[name.value], "tool schema")
            if "description" in keys:
                tool.texts.append(("schema description", self.consts.resolve(keys["description"])))

    # -- descriptive texts -------------------------------------------------------------

    def descriptive_texts(self) -> list[tuple[int, str, str, object]]:
        """(line, where, key, resolved text) for agent/task/tool descriptions in calls,
        class attributes, dict literals and used configuration."""
        if self._texts is None:
            self._texts = self._descriptive_texts()
        return self._texts

    def _descriptive_texts(self) -> list[tuple[int, str, str, object]]:
        out: list[tuple[int, str, str, object]] = []
        for call in self.facts.calls:
            if call.last in _PARAMETER_CALLS:
                continue
            if call.last[:1].isupper() and ({"agent", "tool"} & set(tokens(call.last))):
                name = call.node.args[0] if call.node.args else call.keyword("name")
                value = self.consts.resolve(name) if name is not None else UNKNOWN
                if isinstance(value, str):
                    out.append((call.line, f"name of {call.name}", "name", value))
            for kw in call.node.keywords:
                if kw.arg in DESCRIPTIVE_KEYS:
                    out.append((call.line, f"{kw.arg}= on {call.name}", kw.arg,
                                self.consts.resolve(kw.value)))
                elif kw.arg is None:  # Agent(**CONFIG)
                    value = self.consts.resolve(kw.value)
                    for path, key, text in config_texts(value):
                        out.append((call.line, f"**{path} on {call.name}", key, text))
        for node in self.nodes:
            if isinstance(node, ast.ClassDef) and _is_tool_class(node):
                for stmt in node.body:
                    target, value = assigned_value(stmt)
                    if target in DESCRIPTIVE_KEYS:
                        out.append((stmt.lineno, f"{node.name}.{target}", target,
                                    self.consts.resolve(value)))
            elif isinstance(node, ast.Dict) and not is_parameter_schema(node):
                for k, v in zip(node.keys, node.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value in DESCRIPTIVE_KEYS:
                        if k.value == "role" and isinstance(v, ast.Constant) \
                                and v.value in _CHAT_ROLES:
                            continue  # a chat message's speaker, not an agent's role
                        out.append((k.lineno, f"'{k.value}' key", k.value,
                                    self.consts.resolve(v)))
        # Parsed YAML/JSON and dataclass configs (dict literals were walked above), when
        # the module reads them.
        used = {n.id for n in self.nodes
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for const in sorted(self.consts.parsed & used):
            for path, key, text in config_texts(self.consts.values[const]):
                out.append((0, f"{const}.{path}", key, text))
        return out


# ---------------------------------------------------------------------------------------
# Descriptive keys in configuration


def is_parameter_schema(node: ast.Dict) -> bool:
    return any(isinstance(k, ast.Constant) and k.value == "type" and isinstance(v, ast.Constant)
               and v.value in _SCHEMA_TYPES for k, v in zip(node.keys, node.values, strict=True))


def config_texts(value: object, path: str = "") -> Iterator[tuple[str, str, str]]:
    """(path, key, text) for every descriptive key in a resolved config structure."""
    if isinstance(value, Instance):
        value = value.fields
    if isinstance(value, dict) and value.get("type") in _SCHEMA_TYPES:
        return  # a parameter's JSON schema: its description names an argument, not a tool
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if key in DESCRIPTIVE_KEYS and isinstance(item, str):
                yield here, str(key), item
            elif key in DESCRIPTIVE_KEYS and item is None:
                yield here, str(key), ""
            else:
                yield from config_texts(item, here)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from config_texts(item, f"{path}[{i}]")


# ---------------------------------------------------------------------------------------
# The narrow reading: tools by fact and decorator

_REGISTERING_DECORATORS = frozenset({"kernel_function", "register_for_llm", "function_tool",
                              "tool", "FunctionTool"})


def agent_tools(facts: CodeFacts) -> list[FunctionFact]:
    """Functions exposed to a model: the facts' tools plus framework registrations
    (``@kernel_function``, ``@agent.register_for_llm``, ``@function_tool``)."""
    out = []
    for function in facts.functions.values():
        lasts = {d.rsplit(".", 1)[-1] for d in function.decorators}
        if function.is_tool or lasts & _REGISTERING_DECORATORS:
            out.append(function)
    return out
