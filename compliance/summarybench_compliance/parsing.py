"""Reading ``ARTICLE: X`` / ``SEVERITY: Y`` out of what a model actually writes.

Real output wraps the two fields in markdown (``**ARTICLE:** 14``), prefixes them
(``Article 14 - Human oversight``), puts both on one line, reasons first inside
``<think>`` blocks, or answers "none" in several spellings. The parser takes the last
explicit field (final answers come last), and only falls back to a lone "Article N"
mention when the fields are missing altogether.

A structured answer (the JSON object of ``classifier.ANSWER_SCHEMA``) is read first:
``{"finding": ..., "article": "14", "severity": "HIGH"}``, also inside a code fence or
after a ``<think>`` block. An object whose article is not one of the enum's values is not
a structured answer, and the text rules read the answer instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .dataset import ARTICLES, NO_VIOLATION, SEVERITIES
from .errors import ParseError

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_NOISE = re.compile(r"[*_`#>|]")
_ARTICLE_FIELD = re.compile(r"\barticle\s*(?:number|no\.?)?\s*[:=]\s*([^\n,;]*)", re.IGNORECASE)
_SEVERITY_FIELD = re.compile(r"\bseverity(?:\s+level)?\s*[:=]\s*([^\n,;]*)", re.IGNORECASE)
_NUMBER = re.compile(r"\b(?:art(?:icle)?\.?\s*)?(\d{1,3})\b", re.IGNORECASE)
_NONE_WORDS = re.compile(r"^\s*(none|n/?a|no(?:ne)?\b.*violation|null|-|compliant|"
                         r"no article|not applicable)", re.IGNORECASE)
_ARTICLE_MENTION = re.compile(r"\barticle\s+(\d{1,3})\b", re.IGNORECASE)
_COMPLIANT_VERDICT = re.compile(r"\b(status|verdict)\s*[:=]\s*compliant\b|"
                                r"\bno (violations?|issues?) (found|detected)\b",
                                re.IGNORECASE)
_SEVERITY_WORD = re.compile(r"\b(critical|high|medium|moderate|low|none)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Prediction:
    """A classifier's answer for one piece of code."""

    article: int | None
    """The violated article; None when the code is judged compliant."""
    severity: str | None
    """CRITICAL, HIGH, MEDIUM or LOW; None for compliant code or when not given."""

    @property
    def label(self) -> str:
        return NO_VIOLATION if self.article is None else str(self.article)


def _severity(value: str) -> str | None:
    match = _SEVERITY_WORD.search(value)
    if match is None:
        return None
    word = match.group(1).upper()
    if word == "MODERATE":
        return "MEDIUM"
    return word if word in SEVERITIES else None


def _article(value: str) -> int | None | str:
    """An article number, None for an explicit 'no violation', or '' when unreadable."""
    if _NONE_WORDS.match(value):
        return None
    match = _NUMBER.search(value)
    return int(match.group(1)) if match else ""


_MAX_JSON_CHARS = 20_000
"""Longer answers are not tried as JSON (a classification object is a few hundred)."""


def _json_object(text: str) -> dict[str, Any] | None:
    """The last JSON object in ``text`` that has an ``article`` key, or None."""
    if len(text) > _MAX_JSON_CHARS or "{" not in text:
        return None
    decoder = json.JSONDecoder()
    found = None
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:  # JSONDecodeError, or a recursion/number limit
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict) and "article" in {str(k).lower() for k in value}:
            found = value
        start = text.find("{", end)
    return found


def parse_structured(text: str) -> Prediction | None:
    """The prediction of a structured (JSON) answer, or None when ``text`` holds none."""
    obj = _json_object(_THINK.sub(" ", text))
    if obj is None:
        return None
    fields = {str(k).lower(): v for k, v in obj.items()}
    value = fields.get("article")
    article = None if value is None else _article(str(value))
    if article is None:  # "NONE", null, "no violation"
        return Prediction(article=None, severity=None)
    if not isinstance(article, int) or article not in ARTICLES:
        return None
    return Prediction(article=article, severity=_severity(str(fields.get("severity", ""))))


def parse_response(text: str) -> Prediction:
    """Extract the prediction from a model's answer; raises :class:`ParseError`."""
    structured = parse_structured(text)
    if structured is not None:
        return structured
    answer = _NOISE.sub(" ", _THINK.sub(" ", text))
    articles = [_article(m.group(1)) for m in _ARTICLE_FIELD.finditer(answer)]
    readable = [a for a in articles if a != ""]
    severities = [s for s in (_severity(m.group(1)) for m in _SEVERITY_FIELD.finditer(answer))
                  if s is not None]
    if readable:
        article = readable[-1]
        assert not isinstance(article, str)
    elif _COMPLIANT_VERDICT.search(answer):
        article = None
    else:
        mentioned = {int(n) for n in _ARTICLE_MENTION.findall(answer)} & set(ARTICLES)
        if len(mentioned) != 1:
            snippet = " ".join(text.split())[:120]
            raise ParseError(f"no 'ARTICLE: <number>' in the model's answer: {snippet!r}")
        article = mentioned.pop()
    if article is None:
        return Prediction(article=None, severity=None)
    return Prediction(article=article, severity=severities[-1] if severities else None)
