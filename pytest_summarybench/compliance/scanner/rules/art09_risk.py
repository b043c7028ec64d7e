"""Article 9, risk management: foreseeable risks of the agent are bounded in code.

The rule set looks for the risks an agent's code can show by itself: autonomy without a
bound (no iteration, turn or time limit, a termination check that never fires, an
endless driver loop), consequential tools that accept any magnitude, and advice in a
health, finance or legal domain that reaches people without a guardrail.
"""

from __future__ import annotations

import ast

from ..base import ArticleResult
from ..facts import CodeFacts, tokens
from ..impact import side_effects
from ..vocabulary import (
    GUARDRAIL_TOKENS,
    LIMIT_KEYWORDS,
    SENSITIVE_ADVICE,
    UNBOUNDED_AT,
)

_AGENT_DRIVERS = frozenset({"invoke", "run", "kickoff", "initiate_chat", "chat", "step",
                            "stream", "ainvoke", "arun", "run_sync"})
_TIME_LIMITS = frozenset({"max_execution_time", "max_rpm"})
MAGNITUDE_WORDS = frozenset({"amount", "quantity", "qty", "total", "price", "sum", "eur",
                             "usd", "gbp", "shares", "units"})


def _unbounded_limits(facts: CodeFacts) -> list[str]:
    found = []
    for keyword in sorted(LIMIT_KEYWORDS):
        for call, value in facts.keyword_values(keyword):
            literal = value.value if isinstance(value, ast.Constant) else ...
            if literal is None:
                found.append(f"line {call.line}: {keyword}=None on {call.name}")
            elif (keyword not in _TIME_LIMITS and isinstance(literal, int)
                  and not isinstance(literal, bool) and literal >= UNBOUNDED_AT):
                found.append(f"line {call.line}: {keyword}={literal} on {call.name}")
    for call, value in facts.keyword_values("is_termination_msg"):
        if (isinstance(value, ast.Lambda) and isinstance(value.body, ast.Constant)
                and value.body.value is False):
            found.append(f"line {call.line}: is_termination_msg never fires")
    for loop in facts.while_true:
        nodes = list(ast.walk(loop))
        exits = any(isinstance(n, (ast.Break, ast.Return, ast.Raise)) for n in nodes)
        drives = [n for n in nodes if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Attribute) and n.func.attr in _AGENT_DRIVERS]
        if drives and not exits:
            found.append(f"line {loop.lineno}: 'while True' drives the agent with no exit")
    return found


def _unlimited_magnitudes(facts: CodeFacts) -> list[str]:
    found = []
    for effect in side_effects(facts):
        function = facts.functions.get(effect.tool)
        if function is None or effect.category != "financial":
            continue
        magnitudes = [p for p, annotation in function.params.items()
                      if annotation in ("float", "int", "Decimal")
                      or set(tokens(p)) & MAGNITUDE_WORDS]
        guarded: set[str] = set()
        for node in ast.walk(function.node):
            if isinstance(node, ast.Compare) or (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("min", "max")):
                guarded.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
        for param in magnitudes:
            if param not in guarded:
                found.append(f"line {function.line}: {function.name}({param}=...) moves "
                             f"money with no limit check on {param}")
    return found


def _unguarded_advice(facts: CodeFacts) -> list[str]:
    hits = []
    for text, line in facts.strings:
        words = sorted({m.group(0).lower() for m in SENSITIVE_ADVICE.finditer(text)})
        if words:
            hits.append(f"line {line}: advice domain ({', '.join(words)})")
    if not hits:
        return []
    for _, identifier, _line in facts.identifiers:
        if GUARDRAIL_TOKENS & set(tokens(identifier)):
            return []
    return [*hits[:3], "no moderation, guardrail or escalation step on the answers"]


class RiskManagementRule:
    """Agent autonomy and impact must be bounded by explicit limits and guardrails."""

    article = 9
    title = "Risk management"
    checks = (
        f"iteration/turn/round limits ({', '.join(sorted(LIMIT_KEYWORDS))}) set to None, "
        f"or to {UNBOUNDED_AT} or more",
        "is_termination_msg that always returns False; 'while True' loops that drive an "
        "agent (invoke, kickoff, initiate_chat, ...) with no break/return",
        "money-moving tools whose amount parameters are never compared or clamped",
        "prompts in a health, finance or legal advice domain (diagnosis, medication, "
        "invest, crypto, ...) with no moderation/guardrail/escalation identifier in the "
        "module",
        "severity: CRITICAL for unguarded advice, HIGH for unlimited money movement, "
        "MEDIUM for unbounded autonomy (HIGH when the agent has acting tools)",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        advice = _unguarded_advice(facts)
        money = _unlimited_magnitudes(facts)
        loops = _unbounded_limits(facts)
        if advice:
            return ArticleResult.violation(self.article, "CRITICAL", *advice, *money, *loops)
        if money:
            return ArticleResult.violation(self.article, "HIGH", *money, *loops)
        if loops:
            severity = "HIGH" if side_effects(facts) else "MEDIUM"
            return ArticleResult.violation(self.article, severity, *loops)
        limits = [f"line {c.line}: {k}" for k in sorted(LIMIT_KEYWORDS)
                  for c, _ in facts.keyword_values(k)]
        return ArticleResult.ok(self.article, *(limits or ["no unbounded autonomy found"]))
