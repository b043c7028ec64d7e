"""What counts as a persistent write in an agent module, and which of the module's own
functions make one.

A *record* is a write that outlives the process: a call on a logger whose output is kept
(not one below the configured level, not logging configured only towards the console), an
SQL ``INSERT``, a row/document insert, an ORM add+commit, a file opened for appending (or
a handle to one), a tracing span, an HTTP write to an audit or log service. A function or
method that makes such a write, directly or through the module's own helpers (an
``EventStore.append`` that inserts a row, an ``AuditTrail.record`` that calls its logger,
reached through a name bound, declared or passed as that class, or dispatched with
``getattr(hook, event)(...)`` to hooks listed in a module registry), is a *sink*.
Where those writes happen is :mod:`.art12_records`' question.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..facts import CodeFacts, dotted, tokens
from ..surface import Surface
from ..values import UNKNOWN
from ..vocabulary import LOGGER_METHODS

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_LOGGER_FACTORIES = frozenset({"getLogger", "get_logger", "getChild", "LoggerAdapter",
                               "bind", "get_task_logger"})
_INSERT_METHODS = frozenset({"insert_one", "insert_many", "put_item", "xadd", "insert",
                             "rpush", "lpush", "log_dict", "log_text", "log_table",
                             "insert_rows", "insert_rows_json", "add_document", "write_points",
                             "append_rows"})
_SPAN_METHODS = frozenset({"start_as_current_span", "start_span", "start_active_span",
                           "span", "trace", "create_span", "log_trace"})
_RECORD_SERVICE_WORDS = frozenset({"audit", "journal", "telemetry", "logs", "logging",
                                   "traces", "tracing"})
"""What a service that keeps records is called (in its URL or the constant holding it)."""
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


def calls_in(node: ast.AST) -> Iterator[ast.Call]:
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            yield child


def receiver_of(call: ast.Call) -> str:
    func = call.func
    return dotted(func.value) if isinstance(func, ast.Attribute) else ""


class SinkMap:
    """The loggers and sinks of one module."""

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
        makes = any(dotted(c.func).rsplit(".", 1)[-1] in _LOGGER_FACTORIES for c in calls_in(fn))
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
            elif last == "add" and set(receiver_of(call.node).split(".")) & self.loggers \
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
        """Variable, attribute or field name -> module class it holds: assigned
        (``events = EventStore()``), passed as a keyword (``Run(events=EventStore())``),
        declared (``events: EventStore`` in a dataclass, a parameter annotation), or a
        loop variable over a module list of instances (``for hook in HOOKS``)."""
        classes = self.consts.classes

        def cls_of(node: ast.expr | None) -> str | None:
            if isinstance(node, ast.Call):
                node = node.func
            name = dotted(node).rsplit(".", 1)[-1] if node is not None else ""
            return name if name in classes else None

        out: dict[str, str] = {}
        registries: dict[str, str] = {}
        for node in self.surface.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                cls = cls_of(node.value)
                if cls is not None:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            out[target.id] = cls
                        elif isinstance(target, ast.Attribute):
                            out[target.attr] = cls
            elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
                members = {cls_of(e) if isinstance(e, ast.Call) else None
                           for e in node.value.elts}
                member = members.pop() if len(members) == 1 else None
                if member is not None:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            registries[target.id] = member
            elif isinstance(node, ast.keyword) and node.arg and isinstance(node.value, ast.Call):
                cls = cls_of(node.value)
                if cls is not None:
                    out.setdefault(node.arg, cls)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                cls = cls_of(node.annotation)
                if cls is not None:
                    out.setdefault(node.target.id, cls)
            elif isinstance(node, ast.arg) and node.annotation is not None:
                cls = cls_of(node.annotation)
                if cls is not None:
                    out.setdefault(node.arg, cls)
        for node in self.surface.nodes:
            if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name) \
                    and isinstance(node.iter, ast.Name) and node.iter.id in registries:
                out.setdefault(node.target.id, registries[node.iter.id])
        return out

    def _direct_write(self, call: ast.Call) -> str | None:
        """What persistent write ``call`` itself makes, or None."""
        name = dotted(call.func)
        last = name.rsplit(".", 1)[-1]
        receiver = receiver_of(call)
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
        if isinstance(func, ast.Call) and dotted(func.func) == "getattr" \
                and len(func.args) >= 2 and isinstance(func.args[0], ast.Name):
            return self._dispatched(func.args[0].id, func.args[1])
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

    def _dispatched(self, holder: str, attribute: ast.expr) -> FunctionNode | None:
        """``getattr(hook, event)(...)`` on an instance of a module class: the named
        method when the name is a literal, else the first of its public methods that
        writes (a dispatcher handing events to a recording hook)."""
        cls = self.instances.get(holder)
        if cls is None:
            return None
        name = self.consts.resolve(attribute)
        if isinstance(name, str):
            return self.surface.methods.get((cls, name))
        for (owner, method), fn in self.surface.methods.items():
            if owner == cls and not method.startswith("_") and self.sink(fn):
                return fn
        return None

    @staticmethod
    def orm_write(body: ast.AST) -> str | None:
        """``session.add(row)`` then ``session.commit()`` in one body: a row is stored."""
        added, committed = set(), set()
        for call in calls_in(body):
            last = dotted(call.func).rsplit(".", 1)[-1]
            if last in ("add", "add_all", "merge") and call.args:
                added.add(receiver_of(call))
            elif last == "commit":
                committed.add(receiver_of(call))
        both = (added & committed) - {""}
        return f"{sorted(both)[0]}.add() + commit()" if both else None

    def sink(self, fn: FunctionNode, depth: int = 0) -> str | None:
        """The persistent write ``fn`` makes, directly or through module helpers."""
        if fn in self._sink_cache:
            return self._sink_cache[fn]
        self._sink_cache[fn] = None  # recursion guard
        found = None
        context = self.surface.owner.get(fn)
        for call in calls_in(fn):
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
