"""Failure patterns of docs/reports.md#the-results-file, detected in a summary against its code
unit.

Each detector is a plain rule on the text that a reader can check by looking at the
example the report quotes; the report counts how often each shows up among the low-scored
unit-model pairs, so the patterns listed come from the data, not from a fixed list of
claims.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from ..schemas import CodeUnit

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
#: The parts of one word: runs of capitals (an acronym) and camelCase pieces.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
_STOP = frozenset("""a an the and or of to in on for with by from at as is are be this that
it its into via using use used uses given their them then than if else when which who
whose what returns return value values function method class file module code""".split())

_GENERIC = re.compile(
    r"\b(handles? (various|different|multiple|several|some|all|the)\b"
    r"|performs? (various|several|some|certain|the necessary|an?) (operations?|tasks?|actions?"
    r"|logic|work)"
    r"|(various|several|some|certain) (operations|tasks|things|functionality|logic)"
    r"|(helper|utility) (function|method|class)"
    r"|does (some|various|the) (work|stuff|things)"
    r"|process(es)? (the )?(data|input|request)s?\b(?! \w+ing)"
    r"|manages? (the )?(data|state|things|logic)\b"
    r"|is (used|responsible) for (handling|processing|managing))", re.IGNORECASE)

_IMPLEMENTATION = re.compile(
    r"\b(loops?|looping|iterat\w*|for each|for loop|while loop|if statements?|conditionals?"
    r"|variables?|increments?|decrements?|index(es)?|list comprehension|assigns?|"
    r"checks? (if|whether)|then returns?|returns? the result of|calls? the \w+ (function|method)"
    r"|local \w+)\b", re.IGNORECASE)

_SIDE_EFFECT_CODE = re.compile(
    r"\b(write|writes|save|insert|update|delete|remove|commit|send|post|put|publish|emit|log"
    r"|logger|print|println|printf|fetch|request|execute|exec|mkdir|unlink|rename|dispatch"
    r"|notify|enqueue|persist|flush|refund|append|push|set[A-Z_]\w*)\s*\("
    r"|\b(self|this)\s*\.\s*\w+\s*(\[[^\]]*\])?\s*[+\-*/]?=(?!=)"
    r"|\b(fs|os|db|http|requests|session|cursor|conn|client)\.\w+\s*\(")

_SIDE_EFFECT_TEXT = re.compile(
    r"\b(writ|sav|stor|insert|updat|delet|remov|commit|send|sent|post|publish|emit|log"
    r"|print|persist|modif|mutat|set|record|notif|flush|refund|lock|mark|cancel|append|add"
    r"|push|chang|increment|regist|fetch|request|call|dispatch|queue|enqueu|creat|clear|reset"
    r"|evict|ship|charg|mutates|side effect)\w*", re.IGNORECASE)

_RAISES_CODE = re.compile(r"\b(raise|throw|throws|panic|Err\(|errors?\.New|fmt\.Errorf)\b")
_ERROR_TEXT = re.compile(r"\b(error|errors|raise|raises|throw|throws|exception|fail|fails"
                         r"|failure|invalid|panic|reject)\w*", re.IGNORECASE)


@dataclass(frozen=True)
class Pattern:
    """A failure pattern: its report category, its meaning, and its detector."""

    category: str
    description: str
    detect: Callable[[str, CodeUnit], bool]


def words(text: str) -> list[str]:
    """Lower-case words of a text, identifiers split at ``_`` and camelCase."""
    return [w.lower() for token in _WORD.findall(text.replace("_", " "))
            for w in _PART.findall(token)]


def word_count(text: str) -> int:
    """``len(words(text))`` without building the words."""
    return sum(len(_PART.findall(token)) for token in _WORD.findall(text.replace("_", " ")))


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in _STOP and len(w) > 2}


# A unit's text is checked once for every model that scored low on it: what the detectors
# take from the code (not the summary) is computed once per text.
@lru_cache(maxsize=4096)
def _unit_words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


@lru_cache(maxsize=4096)
def _writes(code: str) -> bool:
    return _SIDE_EFFECT_CODE.search(code) is not None


@lru_cache(maxsize=4096)
def _raises(code: str) -> bool:
    return _RAISES_CODE.search(code) is not None


def _generic(summary: str, unit: CodeUnit) -> bool:
    return _GENERIC.search(summary) is not None


def _implementation(summary: str, unit: CodeUnit) -> bool:
    return len(_IMPLEMENTATION.findall(summary)) >= 2


def _missing_side_effects(summary: str, unit: CodeUnit) -> bool:
    return _writes(unit.content) and _SIDE_EFFECT_TEXT.search(summary) is None


def _missing_errors(summary: str, unit: CodeUnit) -> bool:
    return _raises(unit.content) and _ERROR_TEXT.search(summary) is None


def _name_leakage(summary: str, unit: CodeUnit) -> bool:
    name = unit.short_name
    compound = len(name) >= 4 and ("_" in name or re.search(r"[a-z][A-Z]", name) is not None)
    if compound and name in summary:
        return True
    said = content_words(summary)
    named = _unit_words(unit.name)
    # Nothing said beyond the words of the name: the summary restates the identifier.
    return bool(said) and said <= named


def _normalized(text: str) -> str:
    return " ".join(words(text))


@lru_cache(maxsize=4096)
def _doc_lead(docstring: str) -> str:
    """The docstring's first paragraph, normalized."""
    return _normalized(docstring.strip().split("\n\n", 1)[0])


def _copied_docstring(summary: str, unit: CodeUnit) -> bool:
    if not unit.docstring or not unit.docstring.strip():
        return False
    doc = _doc_lead(unit.docstring)
    said = _normalized(summary)
    if not doc or not said:
        return False
    if doc in said:
        return True
    # The quick ratios are upper bounds of ratio() (difflib's get_close_matches idiom):
    # most pairs are told apart without the full matching.
    matcher = SequenceMatcher(None, doc, said)
    return (matcher.real_quick_ratio() >= 0.8 and matcher.quick_ratio() >= 0.8
            and matcher.ratio() >= 0.8)


def _unrelated(summary: str, unit: CodeUnit) -> bool:
    said = content_words(summary)
    # The words of "name code" are those of the name and those of the code.
    return (bool(said) and said.isdisjoint(_unit_words(unit.name))
            and said.isdisjoint(_unit_words(unit.content)))


def _too_short(summary: str, unit: CodeUnit) -> bool:
    return len(words(summary)) < 5


#: Detection order is also the order in which an example's single category is chosen.
PATTERNS: tuple[Pattern, ...] = (
    Pattern("unrelated", "Unrelated content: no word of the summary appears in the code",
            _unrelated),
    Pattern("copied_docstring", "Copying the docstring instead of summarizing the code",
            _copied_docstring),
    Pattern("name_leakage", "Name leakage: restating the identifier instead of the purpose",
            _name_leakage),
    Pattern("generic", "Generic descriptions such as \"handles various operations\"",
            _generic),
    Pattern("implementation_focus",
            "Implementation focus: loops and conditionals instead of purpose", _implementation),
    Pattern("missing_side_effects",
            "Missing side effects: writes, calls and state changes not mentioned",
            _missing_side_effects),
    Pattern("missing_error_handling", "Missing error handling: raised errors not mentioned",
            _missing_errors),
    Pattern("too_short", "Too short to be searchable (fewer than five words)", _too_short),
)
PATTERN_DESCRIPTIONS: dict[str, str] = {p.category: p.description for p in PATTERNS}
PATTERN_DESCRIPTIONS["other"] = "No pattern detected in the text"


def detect(summary: str, unit: CodeUnit) -> list[str]:
    """The categories of every pattern the summary shows, in ``PATTERNS`` order."""
    return [p.category for p in PATTERNS if p.detect(summary, unit)]
