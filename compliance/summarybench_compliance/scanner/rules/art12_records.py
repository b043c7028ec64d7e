"""Whether an agent module's persistent writes (:mod:`.art12_sinks`) are on the path the
agent's actions take.

The *action path* is the code that runs because the agent acted: the tools' bodies (and
decorators wrapped around them), callbacks, hooks, filters and handlers registered with
the framework, and, in the function that drives the agent, the statements after the run
call or in the loop around it (anywhere in a function that takes the request, unless the
agent's tools act: then a line before the run records the request, not the actions). A
sink that is only defined, configured, or called once before the agent starts is not on
the path.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..facts import dotted, tokens
from ..values import UNKNOWN
from ..vocabulary import APPROVAL_TOKENS
from .art12_sinks import FunctionNode, SinkMap, calls_in, receiver_of

_RUN_METHODS = frozenset({
    "invoke", "ainvoke", "run", "arun", "run_sync", "run_streamed", "run_stream", "kickoff",
    "kickoff_async", "kickoff_for_each", "chat", "achat", "stream_chat", "astream_chat",
    "initiate_chat", "a_initiate_chat", "initiate_chats", "query", "aquery", "create",
    "stream", "astream", "astream_events", "stream_events", "get_response", "invoke_prompt",
    "invoke_stream", "generate_reply", "a_generate_reply", "batch", "abatch", "on_messages",
})
"""Calls that hand control to the model or the agent: what follows them is the action path."""
_CONSOLE_WORDS = frozenset({"stdout", "console", "print", "streaming", "rich", "stream",
                            "debug"})
"""Handler names that show output to a person (or keep it in memory) instead of keeping it."""
_HANDLER_KEYWORDS = frozenset({"callback", "callbacks", "handler", "handlers", "hooks",
                               "processors", "manager", "tracer", "tracers"})
_REGISTRATION_WORDS = frozenset({
    "callback", "callbacks", "handler", "handlers", "hook", "hooks", "manager", "processor",
    "processors", "register", "add", "subscribe", "listener", "listeners", "filter",
    "filters", "instrument", "tracer", "trace", "middleware", "on", "use",
})


@dataclass(frozen=True)
class Record:
    """A persistent write reached on the action path."""

    line: int
    what: str
    where: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what} in {self.where}"


class RecordMap(SinkMap):
    """The sinks of one module and the action path that reaches them."""

    # -- the action path -------------------------------------------------------------------

    def tool_bodies(self) -> Iterator[tuple[str, FunctionNode]]:
        for tool in self.surface.tools.values():
            for body in tool.bodies:
                yield f"tool {tool.name}", body
            node = tool.node
            if not isinstance(node, ast.ClassDef):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if isinstance(target, ast.Name) and target.id in self.surface.defs:
                        yield f"decorator {target.id} of tool {tool.name}", \
                            self.surface.defs[target.id]

    def callback_bodies(self) -> Iterator[tuple[str, ast.AST]]:
        """Functions, lambdas and handler classes registered with the framework."""
        for call in self.facts.calls:
            callee_words = set(tokens(call.name.replace(".", "_")))
            registered = bool(callee_words & _REGISTRATION_WORDS)
            for kw in call.node.keywords:
                kw_words = set(tokens(kw.arg or ""))
                if kw_words & _REGISTRATION_WORDS or {"step", "task"} & kw_words and \
                        "callback" in (kw.arg or ""):
                    yield from self._registered(kw.value, f"{kw.arg}= of {call.name}")
            if registered:
                for arg in call.node.args:
                    yield from self._registered(arg, f"registered with {call.name}")
        for target, value, line in self._assigned_handlers():
            yield from self._registered(value, f"{target} (line {line})")
        for fn in self.surface.defs.values():
            for decorator in fn.decorator_list:
                words = set(tokens(dotted(decorator).replace(".", "_")))
                if words & {"filter", "hook", "callback", "on", "middleware", "listener"}:
                    yield f"{fn.name} decorated {dotted(decorator)}", fn

    def _assigned_handlers(self) -> Iterator[tuple[str, ast.expr, int]]:
        """``Settings.callback_manager = ...``, ``crew.step_callback = fn``, and run
        configs such as ``config={"callbacks": [handler]}``."""
        for node in self.surface.nodes:
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str) and set(
                            tokens(key.value)) & _HANDLER_KEYWORDS:
                        yield f"'{key.value}' entry", value, key.lineno
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    name = dotted(target)
                    if isinstance(target, ast.Attribute) and set(
                            tokens(target.attr)) & _HANDLER_KEYWORDS:
                        yield name, node.value, node.lineno

    def traced_functions(self) -> list[str]:
        """Tools or agent-driving functions under a tracing decorator (``@traceable``,
        ``@observe``, ``@trace``), whose calls the tracer persists."""
        out = []
        for fn in [*self.surface.defs.values(), *self.surface.methods.values()]:
            tool = fn.name in self.surface.tools
            drives = any(dotted(c.func).rsplit(".", 1)[-1] in _RUN_METHODS and receiver_of(c)
                         for c in calls_in(fn))
            if not (tool or drives):
                continue
            for decorator in fn.decorator_list:
                name = dotted(decorator)
                if set(tokens(name.rsplit(".", 1)[-1])) & {"traceable", "observe", "trace",
                                                          "traced"} and (
                        name in self.agent_spans or name.split(".")[0] in self.agent_spans
                        or name.split(".")[0] in ("langsmith", "langfuse", "mlflow", "weave")):
                    out.append(f"line {fn.lineno}: @{name} traces {fn.name}")
        return out

    def _registered(self, value: ast.expr, where: str) -> Iterator[tuple[str, ast.AST]]:
        for node in ast.walk(value):
            if isinstance(node, ast.Lambda):
                yield f"lambda {where}", node
            elif isinstance(node, (ast.Name, ast.Attribute)):
                fn = self.surface._function_ref(node)
                if fn is not None:
                    yield f"{fn.name} {where}", fn
            if isinstance(node, ast.Call):
                cls = dotted(node.func).rsplit(".", 1)[-1]
                if cls in self.consts.classes:
                    for item in self.consts.classes[cls].body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                                and item.name != "__init__":
                            yield f"{cls}.{item.name} {where}", item
            if isinstance(node, ast.Name) and node.id in self.instances:
                cls = self.instances[node.id]
                for item in self.consts.classes[cls].body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                            and item.name != "__init__":
                        yield f"{cls}.{item.name} ({node.id}) {where}", item

    def external_handlers(self) -> list[str]:
        """Handlers the module registers but does not define (imported or not visible):
        assumed to keep what they receive unless their name says they only show it."""
        out: list[str] = []
        registrations = [(call.line, kw.arg, kw.value, call.name) for call in self.facts.calls
                         for kw in call.node.keywords
                         if kw.arg and set(tokens(kw.arg)) & _HANDLER_KEYWORDS]
        registrations += [(line, target, value, "assignment")
                          for target, value, line in self._assigned_handlers()]
        for line, keyword, value, where in registrations:
            for node in ast.walk(value):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    bound = self.facts.assignments.get(node.id)
                    name = bound.name if bound is not None else node.id
                    if node.id in self.surface.defs or node.id in self.instances \
                            or node.id in self.consts.values:
                        continue  # own code is judged by its body; a constant is no handler
                elif isinstance(node, ast.Call):
                    name = dotted(node.func)
                else:
                    continue
                last = name.rsplit(".", 1)[-1]
                words = set(tokens(last))
                if last in self.consts.classes or last in self.surface.defs \
                        or any(w in last.lower() for w in _CONSOLE_WORDS) \
                        or words & (APPROVAL_TOKENS | {"human", "manager"}):
                    continue  # the module's own code is judged by its body
                entry = (f"line {line}: {keyword}={last} on {where} "
                         "(handler defined elsewhere)")
                if entry not in out:
                    out.append(entry)
        return out

    def driver_records(self, acting: bool = False) -> Iterator[Record]:
        """Writes after the agent's run call (or in the loop around it) in the code that
        drives the agent: functions and the module's top level. With ``acting`` (the
        agent's tools change other systems) a write before the run call records only
        that a request came in, not what the agent did, so it does not count."""
        scopes: list[tuple[str, list[ast.stmt], str | None, bool]] = [
            ("module", self.facts.tree.body, None, False)]
        for fn in [*self.surface.defs.values(), *self.surface.methods.values()]:
            args = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
                    if a.arg not in ("self", "cls")]
            scopes.append((fn.name, fn.body, self.surface.owner.get(fn),
                           bool(args) and not acting))
        for name, body, context, per_request in scopes:
            yield from self._after_run(name, body, context, per_request)

    def _after_run(self, name: str, body: list[ast.stmt], context: str | None,
                   per_request: bool) -> Iterator[Record]:
        """Writes in a scope that runs the agent. A function that takes the request as a
        parameter runs once per request, so a write anywhere in it records that run; in
        module code or a parameterless main, only writes after the run call (or in the
        loop around it) do: one before it is a start-up message."""
        own_calls: list[ast.Call] = []
        loops: list[ast.stmt] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Lambda)):
                continue
            if isinstance(node, ast.Call):
                own_calls.append(node)
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                loops.append(node)
            stack.extend(ast.iter_child_nodes(node))
        runs = [c for c in own_calls
                if dotted(c.func).rsplit(".", 1)[-1] in _RUN_METHODS and receiver_of(c)]
        if not runs:
            return
        first = min(c.lineno for c in runs)
        run_loops = [loop for loop in loops if any(loop.lineno <= c.lineno <= (
            loop.end_lineno or loop.lineno) for c in runs)]
        for call in own_calls:
            callee = self.resolve_callee(call, context)
            if callee is not None and self._drives(callee):
                continue  # a function that runs the agent is judged in its own scope
            in_loop = any(loop.lineno <= call.lineno <= (loop.end_lineno or loop.lineno)
                          for loop in run_loops)
            if call.lineno < first and not in_loop and not per_request:
                continue
            write = self.write_of(call, context)
            if write:
                when = "per request" if per_request else "after the agent runs"
                yield Record(call.lineno, write, f"{name} ({when})")

    @staticmethod
    def _drives(fn: FunctionNode) -> bool:
        """Whether ``fn`` hands control to the agent itself (its writes are judged by
        where they stand relative to that run call)."""
        return any(dotted(c.func).rsplit(".", 1)[-1] in _RUN_METHODS and receiver_of(c)
                   for c in calls_in(fn))

    def framework_records(self) -> list[str]:
        """Framework features that persist runs by themselves."""
        out = []
        for call in self.facts.calls:
            if call.name.endswith("runtime_logging.start"):
                out.append(f"line {call.line}: {call.name}()")
            elif call.last == "autolog" or call.last == "instrument" and "instrumentor" in \
                    call.name.lower():
                out.append(f"line {call.line}: {call.name}() persists traces")
            elif call.last == "FileCallbackHandler":
                out.append(f"line {call.line}: FileCallbackHandler")
            elif call.last == "set_global_handler" and call.node.args:
                mode = self.consts.resolve(call.node.args[0])
                if mode is not UNKNOWN and mode != "simple":
                    out.append(f"line {call.line}: set_global_handler({mode!r})")
            value = call.keyword("output_log_file")
            if value is not None:
                resolved = self.consts.resolve(value)
                if resolved is UNKNOWN or resolved not in (None, False, ""):
                    out.append(f"line {call.line}: output_log_file on {call.name}")
        return out

    def records(self, acting: bool = False) -> list[str]:
        """Evidence of persistent records on the action path (empty: none); ``acting``
        as for :meth:`driver_records`."""
        out: list[str] = list(self.framework_records())
        for where, body in self._bodies():
            context = self.surface.owner.get(body) if isinstance(
                body, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            for call in calls_in(body):
                write = self.write_of(call, context)
                if write:
                    out.append(str(Record(call.lineno, write, where)))
                    break
            else:
                orm = self.orm_write(body)
                if orm:
                    out.append(str(Record(getattr(body, "lineno", 0), orm, where)))
        out.extend(str(r) for r in self.driver_records(acting))
        out.extend(self.external_handlers())
        out.extend(self.traced_functions())
        return out

    def _bodies(self) -> Iterable[tuple[str, ast.AST]]:
        yield from self.tool_bodies()
        yield from self.callback_bodies()

    def unused_sinks(self) -> list[str]:
        """Loggers and sinks that exist but are not reached on the action path (evidence)."""
        out = []
        for name, fn in self.surface.defs.items():
            write = self.sink(fn)
            if write:
                out.append(f"line {fn.lineno}: {name} writes ({write}) but no action reaches it")
        return out[:3]
