"""The ARTICLE/SEVERITY parser on the kinds of answers real models give."""

from __future__ import annotations

import pytest

from summarybench_compliance.parsing import ParseError, Prediction, parse_response


@pytest.mark.parametrize(("text", "article", "severity"), [
    ("ARTICLE: 14\nSEVERITY: CRITICAL", 14, "CRITICAL"),
    ("**ARTICLE:** 14\n**SEVERITY:** High", 14, "HIGH"),
    ("ARTICLE: Article 12 (Record-keeping), SEVERITY: medium", 12, "MEDIUM"),
    ("ARTICLE: 10 SEVERITY: LOW", 10, "LOW"),
    ("ARTICLE = 12; SEVERITY = HIGH", 12, "HIGH"),
    ("- Article: Art. 11\n- Severity: Moderate", 11, "MEDIUM"),
    ("article number: 9\nseverity level: critical", 9, "CRITICAL"),
    ("```\nARTICLE: 15\nSEVERITY: HIGH\n```", 15, "HIGH"),
    ("<think>Maybe ARTICLE: 9? No, logging is missing.</think>\nARTICLE: 12\nSEVERITY: LOW",
     12, "LOW"),
    ("Analysis...\nARTICLE: 9\nSEVERITY: LOW\n\nFinal answer:\nARTICLE: 14\nSEVERITY: HIGH",
     14, "HIGH"),
    ("ARTICLE: 14", 14, None),
    ("ARTICLE: NONE\nSEVERITY: NONE", None, None),
    ("ARTICLE: N/A\nSEVERITY: N/A", None, None),
    ("Article: none (compliant)\nSeverity: none", None, None),
    ("ARTICLE: No violation found", None, None),
    ("STATUS: COMPLIANT", None, None),
    ("No violations found in this code.", None, None),
    ("The code violates Article 15 because it calls eval(). Severity: critical", 15,
     "CRITICAL"),
    ("| Field | Value |\n|---|---|\n| ARTICLE | |\n| ARTICLE: 10 | |\n| SEVERITY: HIGH | |",
     10, "HIGH"),
    ("ARTICLE: 13\nSEVERITY: LOW", 13, "LOW"),
])
def test_parses_messy_answers(text: str, article: int | None, severity: str | None) -> None:
    assert parse_response(text) == Prediction(article=article, severity=severity)


@pytest.mark.parametrize("text", [
    "",
    "I cannot determine this.",
    "Articles 9 and 14 both apply; see Article 9 and Article 14.",
    "ARTICLE: unclear",
    "<think>cut off while reasoning, ARTICLE: 9",
])
def test_unreadable_answers_raise_with_the_answer_quoted(text: str) -> None:
    with pytest.raises(ParseError, match="no 'ARTICLE: <number>'"):
        parse_response(text)


def test_label_of_prediction() -> None:
    assert Prediction(article=None, severity=None).label == "none"
    assert Prediction(article=9, severity="LOW").label == "9"


@pytest.mark.parametrize(("text", "expected"), [
    ('{"finding": "f", "article": "14", "severity": "HIGH"}', Prediction(14, "HIGH")),
    ('```json\n{"article": "NONE", "severity": "NONE"}\n```', Prediction(None, None)),
    ('{"article": null}', Prediction(None, None)),
    ('<think>{"article": "9"}</think>\n{"article": 15, "severity": "critical"}',
     Prediction(15, "CRITICAL")),
    # an object naming no benchmark article is not the structured answer: the text rules
    ('{"article": "42"}\nARTICLE: 12\nSEVERITY: LOW', Prediction(12, "LOW")),
    ('{"severity": "HIGH"}\nARTICLE: 10\nSEVERITY: HIGH', Prediction(10, "HIGH")),
])
def test_structured_answers(text: str, expected: Prediction) -> None:
    assert parse_response(text) == expected


def test_huge_json_is_not_decoded() -> None:
    from summarybench_compliance.parsing import parse_structured

    assert parse_structured('{"article": "14", "pad": "' + "x" * 30_000 + '"}') is None
