"""The rule-based compliance scanner: Python's ``ast`` plus one rule set per article.

``scan_code(code)`` returns a :class:`ScanResult` with one :class:`ArticleResult`
(passed, severity, evidence) per article; ``ScanResult.primary`` is the single finding a
classifier is scored on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import ScanError
from .base import SEVERITY_RANK, ArticleResult, Rule
from .facts import CodeFacts, TooDeep, collect
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


MAX_CODE_CHARS = 200_000
"""The longest code the scanner reads, in characters: about 5,000 lines of Python, 30
times the datasets' longest example (6,452). Longer code is not scanned: the example fails
with that reason, in no time, and the rest of the run goes on."""


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
        """Judge ``code`` against every rule.

        Raises :class:`ScanError`, with one line saying why, on anything that stops the
        scan: code that is not valid Python or not text, code over the size or nesting
        limits, and any failure of a rule on it.
        """
        if len(code) > MAX_CODE_CHARS:
            raise ScanError(f"the code is {len(code):,} characters long, over the scanner's "
                            f"limit of {MAX_CODE_CHARS:,}")
        problem = _scan_problem(lambda: self._scan(code))
        if isinstance(problem, str):
            raise ScanError(problem)
        return problem

    def _scan(self, code: str) -> ScanResult:
        facts = collect(code)
        return ScanResult(tuple(rule.check(facts) for rule in self.rules))


def _scan_problem(scan: Callable[[], ScanResult]) -> ScanResult | str:
    """``scan()``'s result, or one line saying why it failed. Raised outside the except
    blocks by the caller, so that the error is this line alone, with no chained cause."""
    try:
        return scan()
    except SyntaxError as err:
        where = f" (line {err.lineno})" if err.lineno is not None else ""
        return f"cannot parse the code: {err.msg}{where}"
    except TooDeep as err:
        return str(err)
    except UnicodeEncodeError as err:
        # ast.parse encodes the text as UTF-8, which a lone surrogate cannot be
        bad = ascii(err.object[err.start:err.end])
        return f"the code is not valid text: {err.reason} {bad} at character {err.start:,}"
    except (RecursionError, MemoryError):
        # The parser's own limits on nesting (its stack; building the tree), before
        # facts.MAX_DEPTH can be checked.
        return "the code nests too deeply to parse"
    except Exception as err:  # a rule's bug on strange code must not stop the run
        return " ".join(f"the scanner failed on this code: {type(err).__name__}: "
                        f"{ascii(str(err))[1:-1]}".split())[:300]


def scan_code(code: str) -> ScanResult:
    """Scan ``code`` with the default rules (see :class:`Scanner` to reuse one)."""
    return Scanner().scan(code)


__all__ = ["MAX_CODE_CHARS", "TIE_BREAK", "ArticleResult", "CodeFacts", "Rule", "ScanError",
           "ScanResult", "Scanner", "collect", "default_rules", "scan_code"]
