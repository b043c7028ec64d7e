"""Result types of the scanner and the protocol every article rule set implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .facts import CodeFacts

SEVERITY_RANK: dict[str, int] = {"CRITICAL": 4, "HIGH": 3, "MEDIUM": 2, "LOW": 1}


@dataclass(frozen=True)
class ArticleResult:
    """The verdict of one article's rule set on one piece of code."""

    article: int
    passed: bool
    severity: str | None
    """Severity of the violation; None when the article passed."""
    evidence: tuple[str, ...]
    """Why: the findings (failed) or the controls seen (passed), each with its line."""

    @classmethod
    def ok(cls, article: int, *evidence: str) -> ArticleResult:
        return cls(article=article, passed=True, severity=None, evidence=evidence)

    @classmethod
    def violation(cls, article: int, severity: str, *evidence: str) -> ArticleResult:
        if severity not in SEVERITY_RANK:
            raise ValueError(f"severity {severity!r} is not one of {', '.join(SEVERITY_RANK)}")
        return cls(article=article, passed=False, severity=severity, evidence=evidence)


class Rule(Protocol):
    """One article's rule set."""

    @property
    def article(self) -> int:
        """The EU AI Act article it checks."""
        ...

    @property
    def title(self) -> str:
        """The article's subject, e.g. ``Human oversight``."""
        ...

    @property
    def checks(self) -> tuple[str, ...]:
        """One line per check, as documented in the benchmark README."""
        ...

    def check(self, facts: CodeFacts) -> ArticleResult:
        """Judge the code described by ``facts``."""
        ...
