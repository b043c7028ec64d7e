"""Where an agent module writes a persistent record, and whether that write is on the path
the agent's actions take.

A *record* is a write that outlives the process: a call on a logger object, an SQL
``INSERT``, a document/row insert, a file opened for appending, a tracing span. A function
or method that makes such a write, directly or through the module's own helpers (an
``EventStore.append`` that inserts a row, an ``AuditTrail.record`` that calls its logger),
is a *sink*. The *action path* is the code that runs because the agent acted: the tools'
bodies (and decorators wrapped around them), callbacks, hooks, filters and handlers
registered with the framework, and, in the function that drives the agent, the statements
after the run call or in the loop around it. A sink that is only defined, configured, or
called once before the agent starts is not on the path.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..facts import CodeFacts, dotted, tokens
from ..vocabulary import APPROVAL_TOKENS, LOGGER_METHODS
from .art11_surface import UNKNOWN, Surface

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_LOGGER_FACTORIES = frozenset({"getLogger", "get_logger", "getChild", "LoggerAdapter",
                               "bind", "get_task_logger"})
_RUN_METHODS = frozenset({
    "invoke", "ainvoke", "run", "arun", "run_sync", "run_streamed", "run_stream", "kickoff",
    "kickoff_async", "kickoff_for_each", "chat", "achat", "stream_chat", "astream_chat",
    "initiate_chat", "a_initiate_chat", "initiate_chats", "query", "aquery", "create",
    "stream", "astream", "astream_events", "stream_events", "get_response", "invoke_prompt",
    "invoke_stream", "generate_reply", "a_generate_reply", "batch", "abatch", "on_messages",
})
"""Calls that hand control to the model or the agent: what follows them is the action path."""
_INSERT_METHODS = frozenset({"insert_one", "insert_many", "put_item", "xadd", "insert",
                             "rpush", "lpush", "log_dict", "log_text", "log_table",
                             "insert_rows", "insert_rows_json", "add_document", "write_points",
                             "append_rows"})
_SPAN_METHODS = frozenset({"start_as_current_span", "start_span", "start_active_span",
                           "span", "trace", "create_span", "log_trace"})
_CONSOLE_WORDS = frozenset({"stdout", "console", "print", "streaming", "rich", "stream",
                            "debug"})
"""Handler names that show output to a person (or keep it in memory) instead of keeping it."""
_RECORD_SERVICE_WORDS = frozenset({"audit", "journal", "telemetry", "logs", "logging",
                                   "traces", "tracing"})
"""What a service that keeps records is called (in its URL or the constant holding it)."""
_HANDLER_KEYWORDS = frozenset({"callback", "callbacks", "handler", "handlers", "hooks",
                               "processors", "manager", "tracer", "tracers"})
_REGISTRATION_WORDS = frozenset({
    "callback", "callbacks", "handler", "handlers", "hook", "hooks", "manager", "processor",
    "processors", "register", "add", "subscribe", "listener", "listeners", "filter",
    "filters", "instrument", "tracer", "trace", "middleware", "on", "use",
})


_LEVELS = {"NOTSET": 0, "DEBUG": 10, "INFO": 20, "WARN": 30, "WARNING": 30, "ERROR": 40,
           "CRITICAL": 50, "FATAL": 50}
_METHOD_LEVEL = {"debug": 10, "info": 20, "msg": 20, "warning": 30, "warn": 30, "error": 40,
                 "exception": 40, "critical": 50, "fatal": 50}
"""Level of each logger method; ``log(level, ...)`` is not listed and always passes."""


def _level_of(node: ast.expr, consts: object) -> int | None:
    if isinstance(node, ast.Attribute) and node.attr in _LEVELS:
        return _LEVELS[node.attr]
    value = consts.resolve(node)  # type: ignore[attr-defined]
    if isinstance(value, str) and value.upper() in _LEVELS:
        return _LEVELS[value.upper()]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


@dataclass(frozen=True)
class Record:
    """A persistent write reached on the action path."""

    line: int
    what: str
    where: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what} in {self.where}"


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            yield child


def _receiver(call: ast.Call) -> str:
    func = call.func
    return dotted(func.value) if isinstance(func, ast.Attribute) else ""


class RecordMap:
    """Loggers, sinks and the action path of one module."""

    def __init__(self, facts: CodeFacts, surface: Surface) -> None:
        self.facts = facts
        self.surface = surface
        self.consts = surface.consts
        self.loggers = self._logger_names()
        self.instances = self._instances()
        self.log_level = self._configured_level()
        self.discarding = self._discarding()
        self.agent_spans = self._agent_span_names()
        self.append_handles = self._append_handles()
        self._sink_cache: dict[ast.AST, str | None] = {}

    # -- what is a logger, what is a sink ------------------------------------------------

    @staticmethod
    def _returns_logger(fn: FunctionNode) -> bool:
        """A helper that builds and returns a logger (``def build_audit_logger(): ...``)."""
        makes = any(dotted(c.func).rsplit(".", 1)[-1] in _LOGGER_FACTORIES for c in _calls(fn))
        returns = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn))
        return makes and returns

    def _logger_names(self) -> set[str]:
        names = {"logging"}
        factories = {name for name, fn in self.surface.defs.items() if self._returns_logger(fn)}
        for node in self.surface.nodes:
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module.startswith(("loguru", "structlog"))
                    or "log" in tokens(node.module.replace(".", "_"))):
                names.update(a.asname or a.name for a in node.names
                             if {"log", "logger"} & set(tokens(a.asname or a.name)))
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                    and isinstance(node.value, ast.Call):
                callee = dotted(node.value.func)
                last = callee.rsplit(".", 1)[-1]
                if last in _LOGGER_FACTORIES or last in factories \
                        or callee.startswith("structlog."):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        if isinstance(target, ast.Name):
                            names.add(target.id)
                        elif isinstance(target, ast.Attribute):
                            names.add(target.attr)
        return names

    def _configured_level(self) -> int | None:
        """The most permissive level the module configures (basicConfig, setLevel), or None
        when it sets none: logger calls below it are dropped, not recorded."""
        levels = []
        for call in self.facts.calls:
            value = None
            if call.last == "basicConfig":
                value = call.keyword("level")
            elif call.last == "setLevel" and call.node.args:
                value = call.node.args[0]
            if value is None:
                continue
            level = _level_of(value, self.consts)
            if level is None:
                return None  # set from something we cannot read: assume it passes
            levels.append(level)
        return min(levels) if levels else None

    def _discarding(self) -> bool:
        """Logging is configured, but only towards the console or a NullHandler: logger
        calls then keep nothing. Without any configuration in the module the host
        application's logging is assumed, as a library module's would be."""
        configured = persistent = False
        for call in self.facts.calls:
            last = call.last
            if last == "basicConfig":
                configured = True
                persistent |= call.keyword("filename") is not None or call.keyword(
                    "handlers") is not None
            elif last in ("dictConfig", "fileConfig", "configure"):
                configured = persistent = True
            elif last.endswith("Handler") and self._logging_handler(call):
                configured = True
                persistent |= not any(w in last.lower() for w in ("stream", "console",
                                                                  "rich", "null", "stdout"))
            elif last == "add" and set(_receiver(call.node).split(".")) & self.loggers \
                    and call.node.args:  # loguru: logger.add(sink)
                configured = True
                sink = dotted(call.node.args[0])
                persistent |= sink not in ("sys.stdout", "sys.stderr", "print")
        return configured and not persistent

    def _to_record_service(self, call: ast.Call) -> bool:
        """An HTTP write whose target (URL text or the name holding it) is an audit,
        journal, telemetry or log service."""
        for arg in [*call.args[:1], *(k.value for k in call.keywords if k.arg == "url")]:
            words = set(tokens(dotted(arg).replace(".", "_"))) if isinstance(
                arg, (ast.Name, ast.Attribute)) else set()
            text = self.consts.resolve(arg)
            if isinstance(text, str):
                words.update(w.lower() for w in text.replace("/", " ").replace("-", " ")
                             .replace("_", " ").replace(".", " ").split())
            if words & _RECORD_SERVICE_WORDS:
                return True
        return False

    def _logging_handler(self, call: object) -> bool:
        """A handler of the logging package, or a module class deriving from one."""
        name = call.name  # type: ignore[attr-defined]
        last = name.rsplit(".", 1)[-1]
        if name.startswith("logging.") or any(
                m.endswith(f".{last}") and m.startswith(("logging", "loguru", "rich"))
                for m in self.facts.imports):
            return True
        cls = self.consts.classes.get(last)
        return cls is not None and any(dotted(b).rsplit(".", 1)[-1] == "Handler"
                                       for b in cls.bases)

    def _agent_span_names(self) -> set[str]:
        """Tracing helpers imported from an agent SDK (``from agents import trace``), unless
        the module switches that tracing off."""
        names: set[str] = set()
        for node in self.surface.nodes:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[
                    0] in ("agents", "langsmith", "langfuse", "mlflow", "opentelemetry"):
                names.update(a.asname or a.name for a in node.names
                             if {"trace", "span", "traceable", "observe"}
                             & set(tokens(a.name)))
        for call in self.facts.calls:
            disabled = None
            if call.last == "set_tracing_disabled" and call.node.args:
                disabled = self.consts.resolve(call.node.args[0])
            elif call.keyword("tracing_disabled") is not None:
                disabled = self.consts.resolve(call.keyword("tracing_disabled"))
            if disabled is True or disabled is UNKNOWN:
                return set()
        return names

    def _is_append_open(self, call: ast.Call) -> bool:
        name = dotted(call.func)
        last = name.rsplit(".", 1)[-1]
        if last != "open":
            return False
        mode = call.args[1] if name == "open" and len(call.args) > 1 else (
            call.args[0] if name != "open" and call.args else None)
        for kw in call.keywords:
            if kw.arg == "mode":
                mode = kw.value
        value = self.consts.resolve(mode) if mode is not None else None
        return isinstance(value, str) and "a" in value

    def _append_handles(self) -> set[str]:
        """Names holding a file opened for appending (``AUDIT = open(p, "a")``,
        ``writer = csv.writer(open(p, "a"))``): writes through them are records."""
        names: set[str] = set()
        for node in self.surface.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and any(
                    isinstance(c, ast.Call) and self._is_append_open(c)
                    for c in ast.walk(node.value)):
                for target in node.targets:
                    if isinstance(target, (ast.Name, ast.Attribute)):
                        names.add(dotted(target).rsplit(".", 1)[-1])
        return names

    def _instances(self) -> dict[str, str]:
        """Variable or attribute name -> module class it holds (``events = EventStore()``)."""
        classes = self.consts.classes
        out: dict[str, str] = {}
        for node in self.surface.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                cls = dotted(node.value.func).rsplit(".", 1)[-1]
                if cls in classes:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            out[target.id] = cls
                        elif isinstance(target, ast.Attribute):
                            out[target.attr] = cls
        return out

    def _direct_write(self, call: ast.Call) -> str | None:
        """What persistent write ``call`` itself makes, or None."""
        name = dotted(call.func)
        last = name.rsplit(".", 1)[-1]
        receiver = _receiver(call)
        if last in LOGGER_METHODS and receiver:
            if set(receiver.split(".")) & self.loggers:  # log.info, logger.bind(...).info
                if self.discarding or (self.log_level is not None
                                       and _METHOD_LEVEL.get(last, 100) < self.log_level):
                    return None
                return f"{name}()"
        if name in self.agent_spans:
            return f"{name}() span"
        if last in ("execute", "executemany", "exec_driver_sql", "executescript") and call.args:
            sql = self.consts.resolve(call.args[0])
            if isinstance(sql, str) and sql.lstrip().upper().startswith(("INSERT", "REPLACE")):
                return f"{name}(INSERT ...)"
        if last in _INSERT_METHODS and receiver:
            return f"{name}()"
        if self._is_append_open(call):
            return f"{name}() for appending"
        if self.append_handles:
            if last in ("write", "writelines", "writerow", "writerows") and \
                    receiver.rsplit(".", 1)[-1] in self.append_handles:
                return f"{name}() to an append-mode file"
            handles = [a for a in [*call.args, *(k.value for k in call.keywords)]
                       if isinstance(a, (ast.Name, ast.Attribute))
                       and dotted(a).rsplit(".", 1)[-1] in self.append_handles]
            if handles and last in ("dump", "print"):
                return f"{name}() to an append-mode file"
        if last in ("post", "put") and receiver and self._to_record_service(call):
            return f"{name}() to a record-keeping service"
        if last == "log" or last.startswith("log_"):
            if receiver.split(".")[0] in ("mlflow", "wandb"):
                return f"{name}()"
        if last in _SPAN_METHODS and receiver and "trac" in receiver.lower():
            return f"{name}()"
        return None

    def resolve_callee(self, call: ast.Call, context: str | None) -> FunctionNode | None:
        """The module function or method a call runs, when the module defines it."""
        func = call.func
        if isinstance(func, ast.Name):
            return self.surface.defs.get(func.id)
        if isinstance(func, ast.Attribute):
            base = func.value
            cls = None
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                cls = context
            elif isinstance(base, ast.Name):
                cls = self.instances.get(base.id)
            elif isinstance(base, ast.Attribute):
                cls = self.instances.get(base.attr)
            if cls is not None:
                return self.surface.methods.get((cls, func.attr))
        return None

    @staticmethod
    def orm_write(body: ast.AST) -> str | None:
        """``session.add(row)`` then ``session.commit()`` in one body: a row is stored."""
        added, committed = set(), set()
        for call in _calls(body):
            last = dotted(call.func).rsplit(".", 1)[-1]
            if last in ("add", "add_all", "merge") and call.args:
                added.add(_receiver(call))
            elif last == "commit":
                committed.add(_receiver(call))
        both = (added & committed) - {""}
        return f"{sorted(both)[0]}.add() + commit()" if both else None

    def sink(self, fn: FunctionNode, depth: int = 0) -> str | None:
        """The persistent write ``fn`` makes, directly or through module helpers."""
        if fn in self._sink_cache:
            return self._sink_cache[fn]
        self._sink_cache[fn] = None  # recursion guard
        found = None
        context = self.surface.owner.get(fn)
        for call in _calls(fn):
            found = self.write_of(call, context, depth)
            if found:
                break
        found = found or self.orm_write(fn)
        self._sink_cache[fn] = found
        return found

    def write_of(self, call: ast.Call, context: str | None, depth: int = 0) -> str | None:
        """The persistent write a call makes, itself or through the module's own code."""
        direct = self._direct_write(call)
        if direct:
            return direct
        if depth > 6:
            return None
        callee = self.resolve_callee(call, context)
        if callee is not None:
            inner = self.sink(callee, depth + 1)
            if inner:
                return f"{dotted(call.func)}() -> {inner}"
        return None

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
        """``Settings.callback_manager = ...``, ``crew.step_callback = fn``."""
        for node in self.surface.nodes:
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
            drives = any(dotted(c.func).rsplit(".", 1)[-1] in _RUN_METHODS and _receiver(c)
                         for c in _calls(fn))
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

    def driver_records(self) -> Iterator[Record]:
        """Writes after the agent's run call (or in the loop around it) in the code that
        drives the agent: functions and the module's top level."""
        scopes: list[tuple[str, list[ast.stmt], str | None, bool]] = [
            ("module", self.facts.tree.body, None, False)]
        for fn in [*self.surface.defs.values(), *self.surface.methods.values()]:
            args = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
                    if a.arg not in ("self", "cls")]
            scopes.append((fn.name, fn.body, self.surface.owner.get(fn), bool(args)))
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
                if dotted(c.func).rsplit(".", 1)[-1] in _RUN_METHODS and _receiver(c)]
        if not runs:
            return
        first = min(c.lineno for c in runs)
        run_loops = [loop for loop in loops if any(loop.lineno <= c.lineno <= (
            loop.end_lineno or loop.lineno) for c in runs)]
        for call in own_calls:
            in_loop = any(loop.lineno <= call.lineno <= (loop.end_lineno or loop.lineno)
                          for loop in run_loops)
            if call.lineno < first and not in_loop and not per_request:
                continue
            write = self.write_of(call, context)
            if write:
                when = "per request" if per_request else "after the agent runs"
                yield Record(call.lineno, write, f"{name} ({when})")

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

    def records(self) -> list[str]:
        """Evidence of persistent records on the action path (empty: none)."""
        out: list[str] = list(self.framework_records())
        for where, body in self._bodies():
            context = self.surface.owner.get(body) if isinstance(
                body, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            for call in _calls(body):
                write = self.write_of(call, context)
                if write:
                    out.append(str(Record(call.lineno, write, where)))
                    break
            else:
                orm = self.orm_write(body)
                if orm:
                    out.append(str(Record(getattr(body, "lineno", 0), orm, where)))
        out.extend(str(r) for r in self.driver_records())
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
