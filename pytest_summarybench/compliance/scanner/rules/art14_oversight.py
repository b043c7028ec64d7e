"""Article 14, human oversight: an agent must not take consequential actions on its own.

A side-effecting tool (payments, messages, deletions, account changes, deployments) needs
a human approval step that runs before the action: an approval callback, a human-input
mode that asks on every turn, a console confirmation, a graph interrupt, or a review task
that precedes the acting task.
"""

from __future__ import annotations

import ast

from ..base import ArticleResult
from ..facts import CodeFacts, tokens
from ..impact import SideEffect, side_effects
from ..vocabulary import APPROVAL_NAMES, APPROVAL_TOKENS


def _literal(node: ast.expr | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _list_names(node: ast.expr | None) -> set[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return {e.id for e in node.elts if isinstance(e, ast.Name)}
    return set()


def _review_tasks(facts: CodeFacts) -> list[tuple[int, set[str]]]:
    """CrewAI tasks with ``human_input=True``: (line, tools of the task's agent).

    Human feedback on a task is requested after its agent answered, so it only guards
    actions taken by *later* tasks, never the reviewed agent's own tools.
    """
    reviews = []
    for call in facts.calls_named("Task"):
        if _literal(call.keyword("human_input")) is not True:
            continue
        agent = call.keyword("agent")
        own_tools: set[str] = set()
        if isinstance(agent, ast.Name) and agent.id in facts.assignments:
            own_tools = _list_names(facts.assignments[agent.id].keyword("tools"))
        reviews.append((call.line, own_tools))
    return reviews


def approval_controls(facts: CodeFacts) -> list[str]:
    """Module-wide approval mechanisms, as evidence strings."""
    controls = []
    for call, value in facts.keyword_values("human_input_mode"):
        if _literal(value) == "ALWAYS":
            controls.append(f"line {call.line}: human_input_mode='ALWAYS' on {call.name}")
    for keyword in ("interrupt_before", "needs_approval", "require_approval"):
        for call, value in facts.keyword_values(keyword):
            empty = isinstance(value, (ast.List, ast.Tuple)) and not value.elts
            if not empty and not (isinstance(value, ast.Constant)
                                  and value.value in (None, False)):
                controls.append(f"line {call.line}: {keyword} on {call.name}")
    for call in facts.calls:
        if call.last in APPROVAL_NAMES or APPROVAL_TOKENS & set(tokens(call.last)):
            controls.append(f"line {call.line}: approval step {call.name}()")
    for function in facts.functions.values():
        if APPROVAL_TOKENS & set(tokens(function.name)) and function.referenced:
            controls.append(f"line {function.line}: approval function {function.name}")
    return controls


class HumanOversightRule:
    """Side-effecting tools must pass a human approval step first."""

    article = 14
    title = "Human oversight"
    checks = (
        "find tools that act on the world: a verb-first name (send_, pay_, refund_, "
        "delete_, ban_, deploy_, publish_, grant_, ...) or a client call with such a verb "
        "(billing.refund, mail.send), plus known acting tool classes (ShellTool, "
        "GmailSendMessage, ...)",
        "accept as oversight: human_input_mode='ALWAYS', HumanApprovalCallbackHandler, "
        "input()/confirm/approve calls, interrupt_before, needs_approval, or a CrewAI "
        "task with human_input=True whose own agent does not hold the acting tool",
        "severity: CRITICAL when the unapproved action moves money or destroys data, "
        "HIGH for messages, publications and account changes",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        effects = side_effects(facts)
        if not effects:
            return ArticleResult.ok(self.article, "no side-effecting tools")
        controls = approval_controls(facts)
        reviews = _review_tasks(facts)
        unapproved: list[SideEffect] = []
        for effect in effects:
            reviewed = any(effect.tool not in own for _, own in reviews)
            if not (controls or reviewed):
                unapproved.append(effect)
        if not unapproved:
            seen = controls + [f"line {line}: human_input=True review task"
                               for line, _ in reviews]
            return ArticleResult.ok(self.article, *seen)
        severity = "CRITICAL" if any(e.grave for e in unapproved) else "HIGH"
        evidence = [f"line {e.line}: tool {e.tool} ({e.category}, via {e.via}) runs without "
                    f"human approval" for e in unapproved]
        for call, value in facts.keyword_values("human_input_mode"):
            evidence.append(f"line {call.line}: human_input_mode={ast.unparse(value)}")
        for call, value in facts.keyword_values("human_input"):
            if _literal(value) is not True:
                evidence.append(f"line {call.line}: human_input={ast.unparse(value)}")
        return ArticleResult.violation(self.article, severity, *evidence)
