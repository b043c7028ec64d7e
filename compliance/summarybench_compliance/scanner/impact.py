"""What an agent can do to the world: the side-effecting tools it is given.

Human oversight (article 14), risk limits (9) and record-keeping severity (12) all start
from the same question, so it is answered once here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .facts import CodeFacts, FunctionFact, tokens
from .vocabulary import (
    COMMUNICATION_ACTIONS,
    FINANCIAL_ACTIONS,
    FINANCIAL_NOUNS,
    IRREVERSIBLE_ACTIONS,
    READ_ONLY_PREFIXES,
    SIDE_EFFECT_ACTIONS,
    SIDE_EFFECT_TOOL_CLASSES,
)


@dataclass(frozen=True)
class SideEffect:
    """A tool that changes something outside the agent."""

    tool: str
    line: int
    category: str
    """``financial``, ``irreversible``, ``communication`` or ``account``."""
    via: str
    """The name or call that shows the effect."""

    @property
    def grave(self) -> bool:
        """Money moves or something is destroyed: the worst case cannot be undone."""
        return self.category in ("financial", "irreversible")


def action_of(function: FunctionFact) -> str | None:
    """The name or callee showing that ``function`` acts, or None for read-only tools."""
    name_tokens = tokens(function.name)
    if name_tokens and name_tokens[0] in SIDE_EFFECT_ACTIONS:
        return function.name
    if name_tokens and name_tokens[0] in READ_ONLY_PREFIXES:
        return None
    for callee in function.callees:
        receiver, _, method = callee.rpartition(".")
        method_tokens = tokens(method)
        if receiver and method_tokens and method_tokens[0] in SIDE_EFFECT_ACTIONS:
            return callee
    return None


def action_category(function: FunctionFact, via: str) -> str:
    """What kind of action ``via`` (from :func:`action_of`) is: "irreversible",
    "communication", "financial" or "account"."""
    # The verb decides first: sending a reminder about an invoice is a message, not a
    # payment. Nouns only classify generic verbs (issue, submit, book, change).
    verb = tokens(via.rsplit(".", 1)[-1])[:1]
    if set(verb) & IRREVERSIBLE_ACTIONS:
        return "irreversible"
    if set(verb) & COMMUNICATION_ACTIONS:
        return "communication"
    words = set(tokens(function.name)) | set(tokens(via))
    for callee in function.callees:
        words.update(tokens(callee.rsplit(".", 1)[-1]))
    for param in function.params:
        words.update(tokens(param))
    if words & IRREVERSIBLE_ACTIONS:
        return "irreversible"
    if words & (FINANCIAL_ACTIONS | FINANCIAL_NOUNS):
        return "financial"
    if words & COMMUNICATION_ACTIONS:
        return "communication"
    return "account"


def side_effects(facts: CodeFacts) -> list[SideEffect]:
    """Tools exposed to the agent that act on the world, in source order."""
    found = []
    for function in facts.tools:
        via = action_of(function)
        if via is not None:
            found.append(SideEffect(function.name, function.line,
                                    action_category(function, via), via))
    for call in facts.calls:
        if call.last in SIDE_EFFECT_TOOL_CLASSES:
            category = "irreversible" if call.last in ("ShellTool", "DeleteFileTool") \
                else "communication"
            found.append(SideEffect(call.last, call.line, category, call.name))
    return found


def has_agent_code(facts: CodeFacts, frameworks: tuple[str, ...]) -> bool:
    """Whether the module builds or drives an agent (imports one of ``frameworks``)."""
    return facts.imports_any(*frameworks)
