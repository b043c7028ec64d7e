"""The rule-based compliance scanner: Python's ``ast`` plus one rule set per article.

``scan_code(code)`` returns a :class:`ScanResult` with one :class:`ArticleResult`
(passed, severity, evidence) per article; ``ScanResult.primary`` is the single finding a
classifier is scored on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .base import SEVERITY_RANK, ArticleResult, Rule
from .facts import CodeFacts, collect
from .rules import (
    DataGovernanceRule,
    HumanOversightRule,
    RecordKeepingRule,
    RiskManagementRule,
    RobustnessRule,
    TechnicalDocumentationRule,
)

TIE_BREAK: tuple[int, ...] = (15, 14, 10, 9, 12, 11)
"""Among equally severe findings, the one reported first: concrete sinks and actions
(15, 14), data fields (10) and limits (9) before absence-of-something findings (12, 11),
which are the weakest evidence a static scan can give."""


class ScanError(ValueError):
    """The code could not be scanned (it is not valid Python)."""


@dataclass(frozen=True)
class ScanResult:
    """Per-article verdicts on one piece of code."""

    articles: tuple[ArticleResult, ...]

    @property
    def findings(self) -> list[ArticleResult]:
        """The failed articles."""
        return [a for a in self.articles if not a.passed]

    @property
    def primary(self) -> ArticleResult | None:
        """The most severe finding (ties broken by :data:`TIE_BREAK`), or None if clean."""
        findings = self.findings
        if not findings:
            return None
        return max(findings, key=lambda a: (SEVERITY_RANK[a.severity or "LOW"],
                                            -TIE_BREAK.index(a.article)))

    def result(self, article: int) -> ArticleResult:
        for item in self.articles:
            if item.article == article:
                return item
        raise KeyError(f"no result for article {article}")


def default_rules() -> tuple[Rule, ...]:
    """The shipped rule sets, one per article, in article order."""
    return (RiskManagementRule(), DataGovernanceRule(), TechnicalDocumentationRule(),
            RecordKeepingRule(), HumanOversightRule(), RobustnessRule())


class Scanner:
    """A configured set of rules; build it once and scan many snippets."""

    def __init__(self, rules: Sequence[Rule] | None = None) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules) if rules is not None else default_rules()

    def scan(self, code: str) -> ScanResult:
        """Judge ``code`` against every rule; raises :class:`ScanError` on invalid Python."""
        try:
            facts = collect(code)
        except SyntaxError as err:
            raise ScanError(f"cannot parse the code: {err.msg} (line {err.lineno})") from None
        return ScanResult(tuple(rule.check(facts) for rule in self.rules))


def scan_code(code: str) -> ScanResult:
    """Scan ``code`` with the default rules (see :class:`Scanner` to reuse one)."""
    return Scanner().scan(code)


__all__ = ["TIE_BREAK", "ArticleResult", "CodeFacts", "Rule", "ScanError", "ScanResult",
           "Scanner", "collect", "default_rules", "scan_code"]
