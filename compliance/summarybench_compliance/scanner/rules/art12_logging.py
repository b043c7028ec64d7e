"""Article 12, record-keeping: what the agent did can be reconstructed afterwards.

An agent module passes when a persistent write is reached on the path its actions take
(:mod:`.art12_records`):

* a tool body (or a decorator wrapped around a tool) writes: a logger call, an SQL
  ``INSERT``, a row/document insert, an append to a file, a tracing span, directly or
  through the module's own helper (``events.append(...)`` whose method inserts a row,
  with ``events`` assigned, declared or passed as that class, or a hook of a module
  registry reached by ``getattr(hook, event)(...)``);
* a callback, hook, filter or handler registered with the framework (``callbacks=[...]``,
  ``step_callback=``, ``hooks=``, ``register(...)``, ``@kernel.filter``) writes, or is
  defined outside the module (a tracer or callback handler imported from a library) and is
  not a console handler;
* the code driving the agent writes after the run call or in the loop around it (a record
  of the result or of each step); a write before the agent starts is not a record of what
  it did (in a function taking the request it records the request, which is enough only
  for an agent whose tools change nothing);
* a framework feature persists runs by itself (AutoGen ``runtime_logging.start``,
  ``FileCallbackHandler``, CrewAI ``output_log_file``).

``print``, ``verbose=True`` and console callbacks do not count; nor does a logger or audit
helper that is configured but never called on that path, a logger call below the
configured level, or logging the module configures only towards the console.
"""

from __future__ import annotations

import ast

from ..base import ArticleResult
from ..facts import CodeFacts, dotted, tokens
from ..impact import has_agent_code, side_effects
from ..surface import surface_of
from ..vocabulary import AGENT_FRAMEWORKS
from .art12_records import RecordMap

_WRITE_METHODS = frozenset({"post", "put", "patch", "delete"})
_WRITE_VERBS = frozenset({"set", "update", "create", "assign", "move", "save", "insert",
                          "upsert", "submit", "change", "mark", "close", "adjust", "apply",
                          "remove", "delete", "cancel", "send", "publish", "patch",
                          "replace", "restart", "scale", "deploy", "trigger", "rollback"})
"""First words of a client method that changes the system it is called on."""
_WRITE_SQL = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def _acting_tools(records: RecordMap) -> list[str]:
    """Tools that change something outside the agent (HTTP writes, SQL writes, a client
    method whose name starts with a verb of change: ``crm.set_stage``, ``api.assign``)."""
    out = []
    for tool in records.surface.tools.values():
        for body in tool.bodies:
            for call in ast.walk(body):
                if not isinstance(call, ast.Call):
                    continue
                name = dotted(call.func)
                last = name.rsplit(".", 1)[-1]
                verb = tokens(last)[:1]
                on_client = "." in name and name.split(".")[0] not in ("self", "cls")
                sql = records.consts.resolve(call.args[0]) if call.args else None
                if last in _WRITE_METHODS or (on_client and set(verb) & _WRITE_VERBS) or (
                        last in ("execute", "executemany") and isinstance(sql, str)
                        and sql.lstrip().upper().startswith(_WRITE_SQL)):
                    out.append(f"line {call.lineno}: tool {tool.name} writes ({last})")
                    break
    return out


class RecordKeepingRule:
    """Agent runs must leave a persistent record of what the agent did."""

    article = 12
    title = "Record-keeping"
    checks = (
        "agent code (imports an agent framework or model SDK) must keep records",
        "a persistent write (logger call, SQL INSERT, row/document insert, file append, "
        "tracing span), direct or through the module's own helper (an instance bound, "
        "declared as a field or parameter, or passed as a keyword; or hooks in a module "
        "registry dispatched with getattr), inside a tool body or a decorator around a "
        "tool",
        "or inside a callback/hook/filter/handler registered with the framework; a "
        "registered handler defined outside the module counts unless it is a console one",
        "or in the driving code after the agent's run call or in the loop around it "
        "(a write only before the agent starts does not count; in a function taking the "
        "request, a write before the run counts only when the agent's tools change "
        "nothing; a call of a function that itself runs the agent is judged inside it)",
        "or a framework feature that persists runs: runtime_logging.start, "
        "FileCallbackHandler, output_log_file",
        "print(), verbose=True, console callbacks and loggers configured but not called "
        "on that path do not count; nor do logger calls below the configured level, or "
        "when the module configures logging only towards the console or a NullHandler",
        "an HTTP write to an audit/journal/telemetry/log service counts as a record",
        "severity: CRITICAL when unrecorded tools move money or destroy data, MEDIUM when tools "
        "change other systems (HTTP/SQL writes, client methods named set_/update_/assign/"
        "move/...), LOW for read-only agents",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        if not has_agent_code(facts, AGENT_FRAMEWORKS):
            return ArticleResult.ok(self.article, "no agent framework in use")
        records = RecordMap(facts, surface_of(facts))
        effects = side_effects(facts)
        acting = _acting_tools(records)
        found = records.records(acting=bool(effects or acting))
        if found:
            return ArticleResult.ok(self.article, *found[:4])
        if any(e.grave for e in effects):
            # Money moved or data destroyed with no trace of who decided it: the record
            # is what a person harmed would need (the previous rule's grading, kept).
            severity = "CRITICAL"
        elif effects or acting:
            severity = "MEDIUM"
        else:
            severity = "LOW"
        evidence = ["no write on the action path records what the agent did"]
        evidence += records.unused_sinks()
        evidence += [f"line {e.line}: tool {e.tool} acts ({e.category}) unrecorded"
                     for e in effects] or acting
        evidence += [f"line {c.line}: print() is not a record"
                     for c in facts.calls_named("print")][:3]
        return ArticleResult.violation(self.article, severity, *evidence)
