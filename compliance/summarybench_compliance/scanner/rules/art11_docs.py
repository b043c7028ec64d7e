"""Article 11, technical documentation: the code states what the system is for and what its
agents and tools do.

Three checks, each read from the syntax tree and the module's resolved configuration
(``scanner.surface``), never from what a docstring promises:

* purpose: a module docstring whose opening paragraph describes the system (not missing,
  not generic words such as "Agent module.", not a TBD/TODO note);
* tools: every function, method or class handed to an agent as a tool carries a real
  description, from its docstring or from the description its wrapper, decorator, schema
  or configuration gives it (a value read from a YAML/JSON spec or a config dict counts by
  its content; a description computed at run time is given the benefit of the doubt);
* agents and tasks: their descriptive fields (role, goal, backstory, instructions, system
  message, description, expected output) and names, wherever they come from (keyword
  arguments, ``**config`` dicts, tool class attributes, parsed YAML/JSON), are not
  placeholders: one TBD/TODO-style text, or two texts that are empty, one word, generic
  words only, or names such as ``a`` or ``agent_1``.
"""

from __future__ import annotations

import re

from ..base import ArticleResult
from ..facts import CodeFacts, tokens
from ..impact import side_effects
from ..surface import Surface, placeholder_reason, surface_of
from ..vocabulary import DECISION_DOMAIN_WORDS, FINANCIAL_NOUNS

MIN_MODULE_DOC_WORDS = 3
_NOT_WRITTEN = "not written yet"
_DOMAIN_STEMS = tuple(DECISION_DOMAIN_WORDS) + ("order", "invoice", "payment", "patient",
                                                "medical", "employee", "payroll")


def purpose_deficit(doc: str | None) -> str | None:
    """Why the module docstring does not state what the system is for, or None."""
    if not doc or not doc.strip():
        return "module has no docstring stating what the system is for"
    opening = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    if len(doc.split()) < MIN_MODULE_DOC_WORDS:
        return f"module docstring too short to state a purpose: {doc.strip()!r}"
    reason = placeholder_reason(opening)
    if reason is not None:
        return f"module docstring opening is a placeholder: {reason}"
    reason = placeholder_reason(doc) if len(doc.split()) < 30 else None
    if reason is not None and _NOT_WRITTEN in reason:
        return f"module docstring is a placeholder: {reason}"
    return None


def tool_deficits(surface: Surface) -> list[str]:
    """Tools exposed to the agent without a real description."""
    out = []
    for tool in surface.tools.values():
        state, why = tool.documentation()
        if state == "undocumented":
            out.append(f"line {tool.line}: tool {tool.name} ({tool.how}) has no docstring "
                       "or description")
        elif state == "placeholder":
            out.append(f"line {tool.line}: tool {tool.name} is described by a placeholder "
                       f"({why})")
    return out


def text_placeholders(surface: Surface) -> tuple[list[str], list[str]]:
    """(not-written-yet texts, other placeholder texts) among agent/task/tool descriptions,
    each distinct text counted once."""
    seen: set[tuple[str, str]] = set()
    marked: list[str] = []
    weak: list[str] = []
    for line, where, key, text in surface.descriptive_texts():
        if not isinstance(text, str) or (key, text) in seen:
            continue
        seen.add((key, text))
        reason = placeholder_reason(text, key)
        if reason is None:
            continue
        at = f"line {line}: " if line else ""
        (marked if _NOT_WRITTEN in reason else weak).append(f"{at}{where} {reason}")
    return marked, weak


def _stakes(facts: CodeFacts, surface: Surface) -> bool:
    """The system acts on the world or, by its own description (module docstring, agent
    and tool descriptions, tool names), works on customers, money, patients, staff or contracts."""
    if side_effects(facts):
        return True
    texts = [facts.module_docstring or ""]
    texts += [t for _, _, _, t in surface.descriptive_texts() if isinstance(t, str)]
    words = {w.lower() for text in texts for w in re.findall(r"[A-Za-z]+", text)}
    words.update(w for name in surface.tools for w in tokens(name))
    stems = {w.rstrip("s") for w in words}
    return bool(stems & {s.rstrip("s") for s in _DOMAIN_STEMS} or words & FINANCIAL_NOUNS)


class TechnicalDocumentationRule:
    """The system's purpose, tools and agents must be documented in the code."""

    article = 11
    title = "Technical documentation"
    checks = (
        "purpose: a module docstring of at least 3 words whose opening paragraph is not a "
        "placeholder (generic words only such as 'Agent module.', or TBD/TODO/'to follow'; "
        "a short docstring is also read whole for such markers)",
        "tools: every function, method or class exposed to an agent (tool decorator, tool "
        "wrapper or registration call, tools= list, dispatch table, tool schema, BaseTool "
        "subclass) has a non-placeholder docstring or description; descriptions are resolved "
        "through config dicts, dataclasses, env defaults and YAML/JSON parsed at run time",
        "agents and tasks: no role/goal/backstory/instructions/system message/description/"
        "expected output that is TBD/TODO-like (one suffices) or empty, one word or generic "
        "words only (two needed), from keywords, **config dicts or parsed YAML/JSON; an "
        "agent or tool named with one or two characters or a numbered generic name "
        "(agent_1, Tool 2) counts as one of the two",
        "severity: MEDIUM when the system acts on the world (side-effecting tools) or its "
        "docstring or agent descriptions put it in customers, orders, money, patients, "
        "staff, claims or contracts; LOW otherwise",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        surface = surface_of(facts)
        deficits = []
        purpose = purpose_deficit(facts.module_docstring)
        if purpose:
            deficits.append(purpose)
        deficits.extend(tool_deficits(surface))
        marked, weak = text_placeholders(surface)
        if marked or len(weak) >= 2:
            deficits.extend([*marked, *weak][:6])
        if not deficits:
            doc_words = len((facts.module_docstring or "").split())
            return ArticleResult.ok(self.article, f"module docstring ({doc_words} words)",
                                    f"{len(surface.tools)} tools described", *weak)
        severity = "MEDIUM" if _stakes(facts, surface) else "LOW"
        return ArticleResult.violation(self.article, severity, *deficits)
