"""Article 12, record-keeping: what the agent did can be reconstructed afterwards.

An agent module needs a persistent record of its runs: a configured logger that is
actually called, tracing callbacks written to a file, AutoGen runtime logging, CrewAI
step/task callbacks or output log files. ``print`` and ``verbose=True`` go to a console
nobody keeps and do not count.
"""

from __future__ import annotations

from ..base import ArticleResult
from ..facts import CodeFacts
from ..impact import has_agent_code, side_effects
from ..vocabulary import AGENT_FRAMEWORKS, LOGGER_METHODS, RECORD_KEEPING_NAMES


def record_keeping(facts: CodeFacts) -> list[str]:
    """Record-keeping mechanisms in the module, as evidence strings."""
    out = []
    configured = facts.imports_any("logging", "structlog", "loguru") and any(
        c.last in ("getLogger", "basicConfig", "get_logger") or c.name.startswith("logger.")
        for c in facts.calls)
    if configured:
        for call in facts.calls:
            receiver = call.name.rpartition(".")[0]
            if call.last in LOGGER_METHODS and receiver:
                out.append(f"line {call.line}: {call.name}()")
                break
    for kind, identifier, line in facts.identifiers:
        if identifier in RECORD_KEEPING_NAMES and identifier not in ("getLogger",
                                                                     "basicConfig"):
            out.append(f"line {line}: {identifier} ({kind})")
    return out


class RecordKeepingRule:
    """Agent runs must leave a persistent record."""

    article = 12
    title = "Record-keeping"
    checks = (
        "agent code (imports an agent framework or model SDK) must keep records",
        "accept: logging/structlog/loguru configured (getLogger, basicConfig) and a logger "
        "method called; FileCallbackHandler or tracer callbacks; autogen runtime_logging; "
        "CrewAI step_callback, task_callback or output_log_file",
        "print() and verbose=True do not count",
        "severity: CRITICAL when unrecorded tools move money or destroy data, HIGH for "
        "other acting tools, MEDIUM when the agent has read-only tools, LOW otherwise",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        if not has_agent_code(facts, AGENT_FRAMEWORKS):
            return ArticleResult.ok(self.article, "no agent framework in use")
        records = record_keeping(facts)
        if records:
            return ArticleResult.ok(self.article, *records[:4])
        effects = side_effects(facts)
        if any(e.grave for e in effects):
            severity = "CRITICAL"
        elif effects:
            severity = "HIGH"
        elif facts.tools:
            severity = "MEDIUM"
        else:
            severity = "LOW"
        evidence = ["no logger, tracing callback or run log records the agent's actions"]
        evidence += [f"line {e.line}: tool {e.tool} acts ({e.category}) unrecorded"
                     for e in effects]
        evidence += [f"line {c.line}: print() is not a record" for c in facts.calls_named("print")]
        return ArticleResult.violation(self.article, severity, *evidence)
