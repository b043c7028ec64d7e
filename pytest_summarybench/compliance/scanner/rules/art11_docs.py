"""Article 11, technical documentation: the code states what the system is for.

The module must carry a docstring describing the system; tools and entry points must be
documented, and agents and tools must not be described by placeholders ("q", "-", "").
"""

from __future__ import annotations

import ast

from ..base import ArticleResult
from ..facts import CodeFacts
from ..impact import side_effects
from ..vocabulary import DECISION_DOMAIN_WORDS

MIN_MODULE_DOC_WORDS = 5
_DESCRIPTIVE_KEYWORDS = ("description", "backstory", "goal", "role", "system_message")


def _placeholders(facts: CodeFacts) -> list[str]:
    """Descriptive keyword arguments and agent names that say nothing."""
    found = []
    for keyword in _DESCRIPTIVE_KEYWORDS:
        for call, value in facts.keyword_values(keyword):
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                text = value.value.strip(" -.")
                if len(text) <= 2 or len(text.split()) == 1 and keyword != "role":
                    found.append(f"line {call.line}: {keyword}={value.value!r} on {call.name}")
    for call in facts.calls:
        if call.node.args and isinstance(call.node.args[0], ast.Constant):
            name = call.node.args[0].value
            if (isinstance(name, str) and len(name) <= 2 and call.last[:1].isupper()
                    and "Agent" in call.last):
                found.append(f"line {call.line}: agent named {name!r}")
    return found


def _domain_stakes(facts: CodeFacts) -> bool:
    text = " ".join(s.lower() for s, _ in facts.strings)
    names = " ".join(i.lower() for _, i, _ in facts.identifiers)
    return bool(side_effects(facts)) or any(w in text or w in names
                                            for w in DECISION_DOMAIN_WORDS)


class TechnicalDocumentationRule:
    """The system's purpose, tools and agents must be documented in the code."""

    article = 11
    title = "Technical documentation"
    checks = (
        f"module docstring present with at least {MIN_MODULE_DOC_WORDS} words",
        "public functions (tools, entry points) carry docstrings",
        "no placeholder descriptions: description/backstory/goal/system_message of one "
        "word or less, agents named with one or two characters",
        "violation: no module docstring, or two of (most public functions undocumented, "
        "two or more placeholders)",
        "severity: MEDIUM when the system acts on the world or decides about customers, "
        "claims, contracts, loans or candidates; LOW otherwise",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        doc = facts.module_docstring or ""
        public = [f for f in facts.functions.values() if f.public]
        undocumented = [f for f in public if not (f.docstring and len(f.docstring) > 3)]
        placeholders = _placeholders(facts)
        deficits = []
        if len(doc.split()) < MIN_MODULE_DOC_WORDS:
            deficits.append("module has no docstring describing the system"
                            if not doc else f"module docstring too short: {doc!r}")
        mostly_undocumented = len(public) >= 1 and len(undocumented) * 2 > len(public)
        if mostly_undocumented:
            names = ", ".join(f.name for f in undocumented[:5])
            deficits.append(f"{len(undocumented)}/{len(public)} public functions without "
                            f"docstrings ({names})")
        if len(placeholders) >= 2:
            deficits.extend(placeholders[:4])
        no_module_doc = len(doc.split()) < MIN_MODULE_DOC_WORDS
        if not no_module_doc and len(deficits) < 2:
            return ArticleResult.ok(self.article, f"module docstring ({len(doc.split())} "
                                                  f"words)", *deficits)
        severity = "MEDIUM" if _domain_stakes(facts) else "LOW"
        return ArticleResult.violation(self.article, severity, *deficits)
